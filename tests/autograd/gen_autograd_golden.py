#!/usr/bin/python3
"""Writes autograd_golden.json: small float64 graphs (an MLP, a conv net, an
index/scatter chain) with their inputs and PyTorch 1.13's gradients of every
leaf. tests/autograd/golden_test.cpp rebuilds each graph with ditto and
compares (1e-6 relative). Run with Debian's python3-torch:
    /usr/bin/python3 tests/autograd/gen_autograd_golden.py
"""
import json
import os

import torch

torch.manual_seed(0)
D = torch.float64


def t(*shape):
    return torch.randn(*shape, dtype=D)


def leaf(*shape):
    return t(*shape).requires_grad_()


def flat(x):
    return [float(v) for v in x.detach().reshape(-1).tolist()]


def case(name, tensors, leaves, loss):
    loss.backward()
    return {
        "name": name,
        "tensors": {k: {"shape": list(v.shape), "dtype": str(v.dtype),
                        "values": flat(v) if v.dtype == D else
                        [int(i) for i in v.reshape(-1).tolist()]}
                    for k, v in tensors.items()},
        "loss": float(loss.item()),
        "grads": {k: flat(tensors[k].grad) for k in leaves},
    }


cases = []

# An MLP: linear, relu, linear, tanh, a squared error.
x, w1, b1, w2, b2, target = t(8, 6), leaf(5, 6), leaf(5), leaf(3, 5), leaf(3), t(8, 3)
h = torch.relu(torch.nn.functional.linear(x, w1, b1))
out = torch.nn.functional.linear(h, w2, b2)
loss = (torch.tanh(out) - target).pow(2).mean()
cases.append(case("mlp", dict(x=x, w1=w1, b1=b1, w2=w2, b2=b2, target=target),
                  ["w1", "b1", "w2", "b2"], loss))

# A conv net: conv2d (stride, padding), relu, a strided conv, flatten,
# matmul, sigmoid; a mean and a max in the loss.
x, cw, cb, cw2, fw = t(2, 3, 7, 7), leaf(4, 3, 3, 3), leaf(4), leaf(2, 4, 3, 3), leaf(5, 2 * 3 * 3)
y = torch.relu(torch.nn.functional.conv2d(x, cw, cb, stride=1, padding=1))
y = torch.nn.functional.conv2d(y, cw2, None, stride=2, padding=0)
z = torch.sigmoid(y.flatten(1) @ fw.t())
loss = (z * z).mean() + z.max()
cases.append(case("convnet", dict(x=x, cw=cw, cb=cb, cw2=cw2, fw=fw),
                  ["cw", "cb", "cw2", "fw"], loss))

# An index/scatter chain: index_select, gather, scatter_add, take, index_add,
# masked_fill on non-leaves, exp and log.
table, src = leaf(10, 4), leaf(6, 4)
idx = torch.tensor([3, 1, 3, 9, 0, 3, 7])
gidx = torch.tensor([[0, 3], [1, 1], [2, 0], [3, 2], [0, 0], [1, 3], [2, 2]])
sidx = torch.tensor([[0, 1], [4, 1], [0, 0], [2, 3], [4, 4], [1, 2], [3, 0]])
tidx = torch.tensor([0, 39, 5, 5, 17])
aidx = torch.tensor([2, 2, 5, 0, 9, 2])
weights = t(5, 2)
mask = torch.tensor([[True, False], [False, False], [True, True], [False, True], [False, False]])
e = torch.index_select(table, 0, idx)
g = torch.gather(e, 1, gidx)
s = torch.zeros(5, 2, dtype=D).scatter_add(0, sidx, g)
s = s.masked_fill(mask, 0.5)
u = (table * 1.0).index_add(0, aidx, src, alpha=0.5)
loss = (s * weights).sum() + torch.take(table, tidx).pow(2).sum() + \
    torch.log(torch.exp(u).sum(1)).mean()
cases.append(case("index_chain",
                  dict(table=table, src=src, idx=idx, gidx=gidx, sidx=sidx,
                       tidx=tidx, aidx=aidx, weights=weights, mask=mask.to(torch.int64)),
                  ["table", "src"], loss))

# scatter_reduce with every reduction, with and without self, with ties
# (amax/amin share the gradient) and zeros (prod); index with advanced
# indices and index_put's values.
base, src2 = leaf(4, 3), leaf(5, 3)
with torch.no_grad():
    base[1, 2] = 0.0
    src2[0, 0] = base[0, 0]      # a tie between self and src
    src2[3, 1] = src2[1, 1]      # a tie between two src values
    src2[2, 2] = 0.0             # a zero in prod
ridx = torch.tensor([[0, 1, 2], [0, 1, 1], [3, 3, 1], [0, 1, 3], [2, 0, 1]])
weights2 = t(4, 3)
loss = 0
for reduce in ["sum", "prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        r = (base * 1.0).scatter_reduce(0, ridx, src2, reduce, include_self=include_self)
        loss = loss + (r * weights2).sum()
ii = [torch.tensor([0, 2, 2]), None, torch.tensor([1])]
vals = leaf(3, 3)
cube = leaf(3, 3, 2)
w3 = t(3, 3)
loss = loss + (cube[ii[0], :, ii[2]] * w3).sum()
loss = loss + ((cube * 1.0).index_put((torch.tensor([0, 2, 0]),), vals.unsqueeze(-1).expand(3, 3, 2)) ** 2).sum()
cases.append(case("scatter_reduce_index",
                  dict(base=base, src2=src2, ridx=ridx, weights2=weights2, vals=vals,
                       cube=cube, w3=w3),
                  ["base", "src2", "vals", "cube"], loss))

# embedding_bag: sum (with per-sample weights), mean with padding_idx, max
# (ties: the first), 1-d input with offsets and 2-d input.
emb = leaf(6, 3)
psw = leaf(7)
with torch.no_grad():
    emb[4, 1] = emb[2, 1]        # a tie for max
einput = torch.tensor([1, 2, 4, 4, 0, 5, 2])
eoffsets = torch.tensor([0, 3, 3, 5])
e2 = torch.tensor([[2, 4, 1], [5, 5, 3]])
ew = t(4, 3)
ew2 = t(2, 3)
F = torch.nn.functional
loss = (F.embedding_bag(einput, emb, eoffsets, mode="sum", per_sample_weights=psw) * ew).sum()
loss = loss + (F.embedding_bag(einput, emb, eoffsets, mode="mean", padding_idx=4) * ew).sum()
loss = loss + (F.embedding_bag(einput, emb, eoffsets, mode="max") * ew).sum()
loss = loss + (F.embedding_bag(e2, emb, mode="max") * ew2).sum()
cases.append(case("embedding_bag",
                  dict(emb=emb, psw=psw, einput=einput, eoffsets=eoffsets, e2=e2,
                       ew=ew, ew2=ew2),
                  ["emb", "psw"], loss))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd_golden.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, indent=0)
print("wrote", path)
