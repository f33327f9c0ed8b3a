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

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograd_golden.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, indent=0)
print("wrote", path)
