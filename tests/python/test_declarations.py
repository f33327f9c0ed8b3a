"""The declared ops' Python surface agrees with their declarations
(ditto/ops/*.ops.toml, docs/ops.md): each declared function is ditto.<name>
with torch's argument names, bound once (a hand-written binding of the same
name would add an overload), each method Tensor.<name>, each in-place form
Tensor.<name>_; and the three forms give the same bits."""
import re

import numpy as np
import pytest

import ditto

SCHEMA = re.compile(r"^(\w+)(?:\.\w+)?\((.*?)\) -> (.+)$")


def declarations():
    return list(ditto._C._declarations)


def schema_args(schema):
    m = SCHEMA.match(schema)
    assert m, schema
    out = []
    for part in m.group(2).split(","):
        part = part.strip()
        if part and part != "*":
            out.append(part.split()[1].split("=")[0])
    return out


def overloads(fn):
    """The signatures pybind11 lists in fn's docstring, one per overload."""
    doc = fn.__doc__ or ""
    lines = [l for l in doc.splitlines()
             if re.match(r"^\s*(\d+\. )?\w+\(", l) and "*args" not in l]
    return [re.sub(r"^\s*\d+\. ", "", l).strip() for l in lines]


def test_there_are_declarations():
    names = [d[0] for d in declarations()]
    assert len(names) >= 11
    heads = [d[1].split("(")[0] for d in declarations()]  # name[.overload]
    assert len(set(heads)) == len(heads)
    for n in ("exp", "neg", "square", "erf"):
        assert n in names


@pytest.mark.parametrize("name,schema,variants,count", declarations())
def test_surface_agrees_with_declaration(name, schema, variants, count):
    variants = [v.strip() for v in variants.split(",")]
    args = schema_args(schema)
    assert args[0] in ("self", "tensors")
    first = "input" if args[0] == "self" else "tensors"
    if "function" in variants:
        assert getattr(ditto, name, None) is not None, (
            f"ditto.{name} is declared but not bound")
        # The binding (ditto.<name> itself, or under a Python wrapper that
        # adds torch's other forms, ditto/_composite.py).
        fn = getattr(ditto._C, name)
        sigs = overloads(fn)
        assert len(sigs) == count, f"ditto.{name} is bound {len(sigs)} times: {sigs}"
        # this declaration's binding (an overload's, name.overload, is one
        # of the name's)
        got = [re.findall(r"(\w+):", sig) for sig in sigs]
        assert [first] + args[1:] in got, (name, sigs)
    else:
        assert not hasattr(ditto, name), f"ditto.{name} is not declared"
    method = getattr(ditto.Tensor, name, None)
    if "method" in variants and not callable(getattr(method, "__func__", None)) \
            and type(method).__name__ == "function":
        # a Python wrapper of torch's other forms (Tensor.split's list)
        assert method is not None
    elif "method" in variants:
        assert method is not None, f"Tensor.{name} is declared but not bound"
        sigs = overloads(method)
        assert len(sigs) == count, f"Tensor.{name} is bound {len(sigs)} times"
        assert args in [re.findall(r"(\w+):", sig) for sig in sigs], (name, sigs)
    inplace = getattr(ditto.Tensor, name + "_", None)
    if type(inplace).__name__ == "function" and "inplace" not in variants:
        # a Python-level in-place form (ditto/_more.py: gt_ ...), not a
        # binding of the declaration
        return
    assert (inplace is not None) == ("inplace" in variants), name
    if inplace is not None:
        assert len(overloads(inplace)) == count, name


@pytest.mark.parametrize(
    "name,schema,variants,count",
    [d for d in declarations() if len(schema_args(d[1])) == 1])
def test_forms_give_the_same_bits(name, schema, variants, count):
    variants = [v.strip() for v in variants.split(",")]
    x = ditto.tensor(np.linspace(0.25, 2.5, 37, dtype=np.float32))
    if name.startswith("bitwise_"):
        # integer and bool only
        x = ditto.tensor(np.arange(-18, 19, dtype=np.int64) * 7)
    ref = getattr(ditto, name)(x) if "function" in variants else None
    if "method" in variants:
        got = getattr(x, name)()
        if ref is None:
            ref = got
        assert got.numpy().tobytes() == ref.numpy().tobytes()
    if "inplace" in variants:
        y = x.clone()
        out = getattr(y, name + "_")()
        assert out is y
        assert y.numpy().tobytes() == ref.numpy().tobytes()


def test_ops_with_bodies_keep_torchs_forms():
    """Ops declared with a body (docs/ops.md) answer torch's calls: keyword
    names, overloads (all.dim), optional arguments, named tuples."""
    x = ditto.tensor([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
    assert ditto.argmax(x).item() == 5
    assert ditto.argmax(x, dim=1).tolist() == [2, 2]
    assert x.argmin(0, keepdim=True).tolist() == [[1, 0, 0]]
    # torch 1.13: no dim with keepdim keeps every dim, of size 1
    assert list(ditto.argmax(x, dim=None, keepdim=True).shape) == [1, 1]
    b = x > 2
    assert ditto.all(b).item() is False and ditto.any(b).item() is True
    assert b.all(1).tolist() == [False, False]
    assert ditto.any(b, dim=0, keepdim=True).tolist() == [[True, True, True]]
    with pytest.raises(TypeError):
        ditto.all(b, dim=None)  # torch 1.13 refuses it too
    s = x.sort(dim=1, descending=True)
    assert s.values.tolist() == [[4.0, 3.0, 1.0], [9.0, 5.0, 1.0]]
    assert s.indices.tolist() == [[2, 0, 1], [2, 1, 0]]
    assert type(s).__name__ == "sort"
    c = ditto.cummax(ditto.tensor([1.0, 3.0, 2.0]), dim=0)
    assert c.values.tolist() == [1.0, 3.0, 3.0] and c.indices.tolist() == [0, 1, 1]
    i = ditto.tensor([0, 1, 1, 3])
    assert ditto.bincount(i).tolist() == [1, 2, 0, 1]
    assert ditto.bincount(i, weights=None, minlength=6).tolist() == [1, 2, 0, 1, 0, 0]
    assert i.bincount(ditto.tensor([0.5, 1.0, 1.0, 2.0])).tolist() == [0.5, 2.0, 0.0, 2.0]
    assert ditto.allclose(x, x + 1e-9, rtol=0, atol=1e-6)
    assert not x.allclose(x + 1e-3, atol=1e-6, rtol=0.0, equal_nan=True)
    assert ditto.addmm(ditto.zeros(2, 2), x, x.t(), beta=0, alpha=2).tolist() == \
        [[52.0, 88.0], [88.0, 214.0]]
    assert ditto.histc(ditto.tensor([0.0, 1.0, 1.0, 2.0]), bins=3, min=0, max=2).tolist() == \
        [1.0, 2.0, 1.0]
    with pytest.raises(TypeError):
        ditto.mm(None, x)
