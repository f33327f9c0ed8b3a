#!/usr/bin/python3
"""Writes tests/ops/sparse_golden.json: PyTorch 1.13's sparse COO results on
CPU for tests/ops/sparse_test.cpp and tests/python/test_sparse.py:
coalesce, to_dense, to_sparse, sparse.mm / addmm / bmm with their
gradients, dense + sparse, nn.Embedding(sparse=True) trained with SGD and
SparseAdam, and the printed form of sparse tensors.

Run from the repository root with Debian's python3-torch:
    /usr/bin/python3 tests/ops/gen_sparse_golden.py
"""
import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(35)

DTYPES = {torch.float32: "float32", torch.float64: "float64",
          torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}


def enc(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == 0 and math.copysign(1, v) < 0:
            return "-0"
    return v


def t2j(t):
    t = t.detach().contiguous()
    return {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
            "values": [enc(v) for v in t.reshape(-1).tolist()]}


def dup_indices(nnz, sizes):
    """nnz entries over sizes, a third of them repeats (some three times),
    in no order."""
    base = torch.stack([torch.randint(0, s, (nnz - nnz // 3,)) for s in sizes])
    rep = base[:, torch.randint(0, base.shape[1], (nnz // 3,))]
    idx = torch.cat([base, rep], 1)
    return idx[:, torch.randperm(nnz)]


def vals(*shape, dtype):
    return (torch.randn(*shape, dtype=torch.float64) * 2).to(dtype)


cases = []

for dtype in (torch.float32, torch.float64):
    name = DTYPES[dtype]
    # coalesce and to_dense, with duplicates stored three times.
    idx = dup_indices(30, (6, 5))
    v = vals(30, dtype=dtype)
    s = torch.sparse_coo_tensor(idx, v, (6, 5))
    c = s.coalesce()
    cases.append({"op": "coalesce", "name": "coalesce_" + name,
                  "indices": t2j(idx), "values": t2j(v), "size": [6, 5],
                  "out_indices": t2j(c.indices()), "out_values": t2j(c.values()),
                  "dense": t2j(s.to_dense())})
    # dense dims: (nnz, 3) rows.
    idx = dup_indices(12, (7,))
    v = vals(12, 3, dtype=dtype)
    s = torch.sparse_coo_tensor(idx, v, (7, 3))
    c = s.coalesce()
    cases.append({"op": "coalesce", "name": "coalesce_rows_" + name,
                  "indices": t2j(idx), "values": t2j(v), "size": [7, 3],
                  "out_indices": t2j(c.indices()), "out_values": t2j(c.values()),
                  "dense": t2j(s.to_dense())})
    # to_sparse: zeros, a negative zero, a NaN.
    d = vals(4, 5, dtype=dtype)
    d[d.abs() < 1.2] = 0
    d[0, 1] = -0.0
    d[2, 3] = float("nan")
    for sd in (2, 1):
        sp = d.to_sparse(sd)
        cases.append({"op": "to_sparse", "name": "to_sparse%d_%s" % (sd, name),
                      "dense": t2j(d), "sparse_dim": sd,
                      "out_indices": t2j(sp.indices()),
                      "out_values": t2j(sp.values())})
    # sparse.mm (entries as stored, and coalesced), with gradients.
    for coalesced in (False, True):
        idx = dup_indices(40, (16, 12))
        v = vals(40, dtype=dtype).requires_grad_()
        dense = vals(12, 7, dtype=dtype).requires_grad_()
        s = torch.sparse_coo_tensor(idx, v, (16, 12))
        if coalesced:
            s = s.coalesce()
        out = torch.sparse.mm(s, dense)
        g = vals(16, 7, dtype=dtype)
        out.backward(g)
        cases.append({"op": "mm", "name": "mm_%s%s" % (
            "coalesced_" if coalesced else "", name),
            "indices": t2j(idx), "values": t2j(v), "size": [16, 12],
            "coalesce": coalesced, "dense": t2j(dense), "grad": t2j(g),
            "out": t2j(out), "grad_values": t2j(v.grad),
            "grad_dense": t2j(dense.grad)})
    # addmm with a broadcast input.
    idx = dup_indices(30, (10, 9))
    v = vals(30, dtype=dtype).requires_grad_()
    dense = vals(9, 6, dtype=dtype).requires_grad_()
    inp = vals(6, dtype=dtype).requires_grad_()
    s = torch.sparse_coo_tensor(idx, v, (10, 9))
    out = torch.sparse.addmm(inp, s, dense, beta=0.5, alpha=-1.5)
    g = vals(10, 6, dtype=dtype)
    out.backward(g)
    cases.append({"op": "addmm", "name": "addmm_" + name,
                  "indices": t2j(idx), "values": t2j(v), "size": [10, 9],
                  "input": t2j(inp), "dense": t2j(dense), "grad": t2j(g),
                  "beta": 0.5, "alpha": -1.5, "out": t2j(out),
                  "grad_values": t2j(v.grad), "grad_dense": t2j(dense.grad),
                  "grad_input": t2j(inp.grad)})
    # bmm: the note's example.
    # (PyTorch 1.13's bmm has no gradient for the sparse operand.)
    idx = dup_indices(50, (3, 8, 6))
    v = vals(50, dtype=dtype)
    dense = vals(3, 6, 5, dtype=dtype).requires_grad_()
    s = torch.sparse_coo_tensor(idx, v, (3, 8, 6))
    out = torch.bmm(s, dense)
    g = vals(3, 8, 5, dtype=dtype)
    out.backward(g)
    cases.append({"op": "bmm", "name": "bmm_" + name,
                  "indices": t2j(idx), "values": t2j(v), "size": [3, 8, 6],
                  "dense": t2j(dense), "grad": t2j(g), "out": t2j(out),
                  "grad_dense": t2j(dense.grad)})
    # dense + alpha * sparse, duplicates included.
    idx = dup_indices(24, (5, 6))
    v = vals(24, dtype=dtype)
    d = vals(5, 6, dtype=dtype)
    s = torch.sparse_coo_tensor(idx, v, (5, 6))
    cases.append({"op": "add", "name": "add_" + name,
                  "indices": t2j(idx), "values": t2j(v), "size": [5, 6],
                  "dense": t2j(d), "alpha": 0.3,
                  "out": t2j(torch.add(d, s, alpha=0.3))})

# nn.Embedding(sparse=True) trained by SGD and by SparseAdam: the weights
# after each step, for batches with repeated rows.
for opt_name in ("SGD", "SparseAdam"):
    torch.manual_seed(7)
    emb = torch.nn.Embedding(12, 4, sparse=True)
    w0 = emb.weight.detach().clone()
    if opt_name == "SGD":
        opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    else:
        opt = torch.optim.SparseAdam(emb.parameters(), lr=0.01)
    batches, targets, weights = [], [], []
    for step in range(4):
        batch = torch.randint(0, 12, (3, 5))
        target = torch.randn(3, 5, 4)
        opt.zero_grad()
        loss = (emb(batch) * target).sum()
        loss.backward()
        grad = emb.weight.grad
        opt.step()
        batches.append(t2j(batch))
        targets.append(t2j(target))
        weights.append(t2j(emb.weight))
    cases.append({"op": "embedding", "name": "embedding_" + opt_name,
                  "optimizer": opt_name, "weight": t2j(w0),
                  "batches": batches, "targets": targets, "weights": weights,
                  "last_grad_indices": t2j(grad._indices()),
                  "last_grad_values": t2j(grad._values())})

# Printed forms.
reprs = []
i = torch.tensor([[0, 1, 1], [2, 0, 2]])
for s in (torch.sparse_coo_tensor(i, torch.tensor([3., 4., 5.]), (2, 3)),
          torch.sparse_coo_tensor(i, torch.ones(3, 2, dtype=torch.float64),
                                  (2, 3, 2)),
          torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long),
                                  torch.zeros(0), (2, 3)),
          torch.sparse_coo_tensor(i, torch.tensor([1, 2, 3]), (2, 3))):
    reprs.append({"indices": t2j(s._indices()), "values": t2j(s._values()),
                  "size": list(s.shape), "repr": repr(s)})

with open(os.path.join(HERE, "sparse_golden.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases, "reprs": reprs}, f)
    f.write("\n")
