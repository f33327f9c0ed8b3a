"""Sparse COO tensors from Python (docs/sparse.md) against PyTorch 1.13's
results in tests/ops/sparse_golden.json (made by
tests/ops/gen_sparse_golden.py): the constructor from lists, printing,
torch.bmm on a sparse operand in both determinism modes,
nn.Embedding(sparse=True) trained by SparseAdam, and the refusals."""
import json
import math
import os

import pytest

import ditto

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = json.load(open(os.path.join(HERE, "..", "ops", "sparse_golden.json")))


def decode(v):
    if isinstance(v, str):
        return {"nan": math.nan, "-0": -0.0, "inf": math.inf,
                "-inf": -math.inf}[v]
    return float(v)


def from_json(j):
    dtype = getattr(ditto, j["dtype"])
    t = ditto.tensor([decode(v) for v in j["values"]], dtype=ditto.float64)
    return t.to(dtype).reshape(j["shape"])


def case(name):
    return next(c for c in GOLDEN["cases"] if c["name"] == name)


def same_bits(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape
            and a.contiguous().numpy().tobytes()
            == b.contiguous().numpy().tobytes())


def test_the_constructor_takes_lists_and_prints_as_pytorch():
    s = ditto.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0],
                                (2, 3))
    assert s.is_sparse and s.layout == ditto.sparse_coo
    assert repr(s.layout) == "ditto.sparse_coo"
    assert s._nnz() == 3 and s.sparse_dim() == 2 and s.dense_dim() == 0
    assert s.to_dense().tolist() == [[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]]
    for r in GOLDEN["reprs"]:
        t = ditto.sparse_coo_tensor(from_json(r["indices"]),
                                    from_json(r["values"]), r["size"])
        # ditto's Python names dtypes and layouts "ditto.*".
        assert repr(t) == r["repr"].replace("torch.", "ditto.")
    inferred = ditto.sparse_coo_tensor([[0, 4]], [1.0, 2.0])
    assert list(inferred.shape) == [5]


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_notes_bmm_example_runs_in_both_modes(deterministic):
    c = case("bmm_float32")
    s = ditto.sparse_coo_tensor(from_json(c["indices"]),
                                from_json(c["values"]), c["size"])
    dense = from_json(c["dense"]).requires_grad_()
    want = from_json(c["out"])
    ditto.use_deterministic_algorithms(deterministic)
    try:
        outs = []
        for threads in (1, 2):
            ditto.set_num_threads(threads)
            out = ditto.bmm(s, dense)
            out.backward(from_json(c["grad"]))
            outs.append((out.detach(), dense.grad.clone()))
            dense.grad = None
        if deterministic:
            # PyTorch's bits, the same at 1 and 2 threads.
            assert same_bits(outs[0][0], want)
            assert same_bits(outs[1][0], want)
            assert same_bits(outs[0][1], outs[1][1])
        else:
            assert ditto.allclose(outs[1][0], want, rtol=1e-5, atol=1e-5)
    finally:
        ditto.use_deterministic_algorithms(False)
        ditto.set_num_threads(1)


def test_sparse_mm_gradients_reach_values_and_dense():
    c = case("mm_float64")
    v = from_json(c["values"]).requires_grad_()
    d = from_json(c["dense"]).requires_grad_()
    s = ditto.sparse_coo_tensor(from_json(c["indices"]), v, c["size"])
    out = ditto.sparse.mm(s, d)
    assert same_bits(out.detach(), from_json(c["out"]))
    out.backward(from_json(c["grad"]))
    assert ditto.allclose(v.grad, from_json(c["grad_values"]), rtol=1e-13)
    assert ditto.allclose(d.grad, from_json(c["grad_dense"]), rtol=1e-13)


def test_embedding_with_sparse_adam_trains_as_pytorch():
    c = case("embedding_SparseAdam")
    emb = ditto.nn.Embedding(12, 4, sparse=True)
    assert repr(emb) == "Embedding(12, 4, sparse=True)"
    with ditto.no_grad():
        emb.weight.copy_(from_json(c["weight"]))
    opt = ditto.optim.SparseAdam(emb.parameters(), lr=0.01)
    for batch, target, want in zip(c["batches"], c["targets"], c["weights"]):
        opt.zero_grad()
        (emb(from_json(batch)) * from_json(target)).sum().backward()
        assert emb.weight.grad.is_sparse
        opt.step()
        assert same_bits(emb.weight.detach(), from_json(want))
    assert int(opt.state[emb.weight]["step"]) == len(c["batches"])


def test_dense_only_paths_refuse_sparse_tensors(tmp_path):
    s = ditto.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,))
    with pytest.raises(TypeError, match="exp"):
        ditto.exp(s)
    with pytest.raises(TypeError, match="sparse"):
        ditto.save({"s": s}, str(tmp_path / "s.safetensors"))
    assert not (tmp_path / "s.safetensors").exists()
    with pytest.raises(TypeError, match="DLPack"):
        s.__dlpack__()
    with pytest.raises(TypeError, match="to_dense"):
        s.numpy()
    with pytest.raises(ValueError, match="momentum"):
        emb = ditto.nn.Embedding(3, 2, sparse=True)
        emb(ditto.tensor([0, 2])).sum().backward()
        ditto.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9).step()
    with pytest.raises(ValueError, match="SparseAdam"):
        emb = ditto.nn.Embedding(3, 2, sparse=True)
        emb(ditto.tensor([0, 2])).sum().backward()
        ditto.optim.Adam(emb.parameters()).step()
    with pytest.raises(ValueError, match="size is inconsistent"):
        ditto.sparse_coo_tensor([[0, 3]], [1.0, 2.0], (3,))


@pytest.mark.hostile
def test_indices_written_after_construction_are_checked_at_use():
    # Issue 61, item 4: _indices() hands out the tensor the sparse tensor
    # holds; writing it (in place, or through numpy) used to make to_dense,
    # coalesce, add and mm read and write out of bounds. Every op that reads
    # the entries now checks them first, and the error changes nothing.
    def fresh():
        return ditto.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]],
                                       [3.0, 4.0, 5.0], (2, 3)).coalesce()

    dense = ditto.ones(3, 2)
    for write in ("inplace", "numpy"):
        s = fresh()
        if write == "inplace":
            s._indices()[1, 2] = 1000
        else:
            s._indices().numpy()[0, 0] = -7
        for name, call in (("to_dense", lambda: s.to_dense()),
                           ("coalesce", lambda: s.coalesce()),
                           ("add", lambda: s + s),
                           ("mm", lambda: ditto.sparse.mm(s, dense))):
            with pytest.raises(IndexError, match="out of bounds"):
                call()
    # A coalesced tensor whose entries are no longer in order.
    s = fresh()
    s._indices()[1, 1] = 2
    s._indices()[1, 2] = 0
    with pytest.raises(ValueError, match="strictly increasing"):
        s.to_dense()
    # Rebuilt from its parts, the same entries coalesce and work.
    t = ditto.sparse_coo_tensor(s._indices(), s._values(), s.shape)
    assert t.coalesce().to_dense().tolist() == [[0.0, 0.0, 3.0],
                                               [5.0, 0.0, 4.0]]
    # _values() is a detached handle: resizing it leaves the tensor whole.
    s = fresh()
    s._values().resize_(2)
    assert s.to_dense().tolist() == [[0.0, 0.0, 3.0], [4.0, 0.0, 5.0]]
