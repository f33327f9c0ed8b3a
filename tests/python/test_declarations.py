"""The declared ops' Python surface agrees with their declarations
(ditto/ops/*.ops.toml, docs/ops.md): each declared function is ditto.<name>
with torch's argument names, bound once (a hand-written binding of the same
name would add an overload), each method Tensor.<name>, each in-place form
Tensor.<name>_; and the three forms give the same bits."""
import re

import numpy as np
import pytest

import ditto

# The Python submodule of ditto._C a namespace's functions are bound in.
NAMESPACES = {"sparse": "_sparse", "linalg": "_linalg", "nn::functional": "_nn"}
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
    if "pin_memory" in out:
        # a factory's options: torch's Python adds requires_grad
        out.append("requires_grad")
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
    # [namespace::]name[.overload]
    heads = [d[0].rpartition("::")[0] + "::" + d[1].split("(")[0] for d in declarations()]
    assert len(set(heads)) == len(heads)
    for n in ("exp", "neg", "square", "erf"):
        assert n in names


@pytest.mark.parametrize("name,schema,variants,count", declarations())
def test_surface_agrees_with_declaration(name, schema, variants, count):
    variants = [v.strip() for v in variants.split(",")]
    # the overloads bound under the name, per form
    fcount, mcount, icount = count
    args = schema_args(schema)
    namespace, _, short = name.rpartition("::")
    if namespace:
        # ditto::sparse::mm: ditto._C._sparse.mm, a function only
        assert variants == ["function"]
        fn = getattr(getattr(ditto._C, NAMESPACES[namespace]), short)
        got = [re.findall(r"(\w+):", sig) for sig in overloads(fn)]
        assert len(got) == fcount, (name, got)
        assert ["input" if a == "self" else a for a in args] in got, (name, got)
        assert name not in ditto._C._declared_functions
        return
    # self is 'input' in the function form (where.self(condition, self,
    # other) has it second; repeat_interleave.Tensor has none)
    fargs = ["input" if a == "self" else a for a in args]
    fargs[0] = "tensors" if args[0] == "tensors" else fargs[0]
    margs = [a for a in args if a != "self"]
    if "function" in variants:
        assert getattr(ditto, name, None) is not None, (
            f"ditto.{name} is declared but not bound")
        # The binding (ditto.<name> itself, or under a Python wrapper that
        # adds torch's other forms, ditto/_composite.py).
        fn = getattr(ditto._C, name)
        sigs = overloads(fn)
        assert len(sigs) == fcount, f"ditto.{name} is bound {len(sigs)} times: {sigs}"
        # this declaration's binding (an overload's, name.overload, is one
        # of the name's)
        got = [re.findall(r"(\w+):", sig) for sig in sigs]
        assert fargs in got, (name, sigs)
    elif fcount == 0:
        assert not hasattr(ditto, name), f"ditto.{name} is not declared"
    method = getattr(ditto.Tensor, name, None)
    if "method" in variants and not callable(getattr(method, "__func__", None)) \
            and type(method).__name__ == "function":
        # a Python wrapper of torch's other forms (Tensor.split's list)
        assert method is not None
    elif "method" in variants:
        assert method is not None, f"Tensor.{name} is declared but not bound"
        sigs = overloads(method)
        assert len(sigs) == mcount, f"Tensor.{name} is bound {len(sigs)} times"
        assert ["self"] + margs in [re.findall(r"(\w+):", sig) for sig in sigs], \
            (name, sigs)
    inplace = getattr(ditto.Tensor, name + "_", None)
    if any(d[0] == name + "_" for d in declarations()):
        # bernoulli_: a mutating method declared with its own schemas
        return
    if type(inplace).__name__ == "function" and "inplace" not in variants:
        # a Python-level in-place form (ditto/_more.py: gt_ ...), not a
        # binding of the declaration
        return
    assert (inplace is not None) == (icount > 0), name
    if inplace is not None:
        assert len(overloads(inplace)) == icount, name


# The one-argument ops of the sparse layout (sparse/sparse.ops.toml) take a
# sparse tensor.
SPARSE_INPUT = {"_values", "_indices", "values", "indices", "coalesce", "to_dense"}


@pytest.mark.parametrize(
    "name,schema,variants,count",
    # a namespace's function (linalg::qr) is its only form
    [d for d in declarations() if len(schema_args(d[1])) == 1 and "::" not in d[0]])
def test_forms_give_the_same_bits(name, schema, variants, count):
    variants = [v.strip() for v in variants.split(",")]
    x = ditto.tensor(np.linspace(0.25, 2.5, 37, dtype=np.float32))
    if name.startswith("bitwise_"):
        # integer and bool only
        x = ditto.tensor(np.arange(-18, 19, dtype=np.int64) * 7)
    if name in SPARSE_INPUT:
        x = x.to_sparse()

    def bits(t):
        return (t.to_dense() if t.is_sparse else t).numpy().tobytes()

    ref = getattr(ditto, name)(x) if "function" in variants else None
    if "method" in variants:
        got = getattr(x, name)()
        if ref is None:
            ref = got
        assert bits(got) == bits(ref)
    if "inplace" in variants:
        y = x.clone()
        out = getattr(y, name + "_")()
        assert out is y
        assert bits(y) == bits(ref)


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


def test_arithmetic_reductions_and_scans_keep_torchs_forms():
    """add/sub (alpha), mul, div, pow, the reductions (dtype=, dim=None),
    max/min's three overloads, norm's Python form, the scans' in-place
    dtype rule, clamp/clip, flip and sum_to_size's ints, multinomial's
    generator: torch's calls, declared once (ditto/ops/*/*.ops.toml)."""
    x = ditto.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    y = ditto.tensor([[0.5, 0.25, 2.0], [1.0, -1.0, 4.0]])
    assert ditto.add(x, y, alpha=2).tolist() == [[2.0, -1.5, 7.0], [6.0, 3.0, 2.0]]
    assert x.sub(2, alpha=3).tolist() == [[-5.0, -8.0, -3.0], [-2.0, -1.0, -12.0]]
    assert ditto.subtract(x, y).tolist() == (x - y).tolist()
    assert ditto.true_divide(x, 2).tolist() == ditto.div(x, 2.0).tolist()
    with pytest.raises(TypeError):
        ditto.add(x, y, 2)  # alpha is keyword-only, as torch's
    # alpha * other on integers wraps, as int64 arithmetic
    i = ditto.tensor([1, 2], dtype=ditto.int64)
    assert ditto.add(i, 2 ** 62, alpha=4).tolist() == [1, 2]
    z = x.clone()
    assert z.sub_(y, alpha=0.5) is z and z.tolist() == (x - y * 0.5).tolist()
    assert ditto.pow(2, ditto.tensor([1.0, 3.0])).tolist() == [2.0, 8.0]
    p = ditto.tensor([2.0, 3.0])
    p **= ditto.tensor([2.0, 0.5])  # a tensor exponent in place
    assert p.tolist()[0] == 4.0
    # reductions
    assert ditto.sum(x, dtype=ditto.float64).dtype == ditto.float64
    assert list(x.sum(dim=None, keepdim=True).shape) == [1, 1]
    assert x.sum((0, 1)).item() == 5.0 and x.sum(1).tolist() == [2.0, 3.0]
    assert list(ditto.mean(x, 1, True).shape) == [2, 1]
    assert x.prod(1, dtype=ditto.float64).dtype == ditto.float64
    assert ditto.max(x).item() == 5.0
    m = x.max(1, keepdim=True)
    assert m.values.tolist() == [[3.0], [5.0]] and m.indices.tolist() == [[2], [1]]
    assert ditto.min(x, y).tolist() == ditto.minimum(x, y).tolist()
    assert list(ditto.norm(x, keepdim=True).shape) == [1, 1]
    assert x.norm(2, 1).tolist() == ditto.norm(x, p="fro", dim=1).tolist()
    assert x.norm(p=1).item() == 21.0
    # scans
    assert ditto.cumsum(x, 1, dtype=ditto.float64).dtype == ditto.float64
    with pytest.raises(TypeError):
        x.clone().cumsum_(0, dtype=ditto.float64)  # torch: dtypes must match
    c = x.clone()
    assert c.cumprod_(1) is c and c.tolist()[0] == [1.0, -2.0, -6.0]
    # clamp, flip, sum_to_size
    assert ditto.clip(x, min=0).tolist() == x.clamp(0).tolist()
    assert x.clone().clamp_(max=1.0).tolist()[1] == [1.0, 1.0, -6.0]
    assert x.flip(0, 1).tolist() == ditto.flip(x, dims=[0, 1]).tolist() == \
        x.flip([0, 1]).tolist()
    assert x.sum_to_size(1, 3).tolist() == x.sum_to_size((1, 3)).tolist() == \
        [[5.0, 3.0, -3.0]]
    assert not hasattr(ditto, "sum_to_size")  # a method only, as torch
    with pytest.raises(TypeError):
        x.sum_to_size()
    # multinomial draws from the generator it is given
    w = ditto.tensor([0.1, 0.2, 0.3, 0.4])
    a = ditto.multinomial(w, 3, generator=ditto.Generator().manual_seed(7))
    b = w.multinomial(3, False, generator=ditto.Generator().manual_seed(7))
    assert a.tolist() == b.tolist()
    assert "ditto::" not in ditto._C.multinomial.__doc__  # the bound class named


def test_self_elsewhere_and_method_factories_keep_torchs_forms():
    """where.self (self second), repeat_interleave.Tensor (no self),
    masked_fill's Scalar and Tensor values, the new_* methods with ints and
    dtype=: torch's calls."""
    x = ditto.tensor([[1.0, -2.0], [3.0, -4.0]])
    c = x > 0
    assert ditto.where(c, x, 0.0).tolist() == [[1.0, 0.0], [3.0, 0.0]]
    assert ditto.where(c, 5.0, x).tolist() == [[5.0, -2.0], [5.0, -4.0]]
    assert x.where(c, ditto.zeros(2, 2)).tolist() == \
        ditto.where(condition=c, input=x, other=ditto.zeros(2, 2)).tolist()
    assert x.where(c, -1.0).tolist() == [[1.0, -1.0], [3.0, -1.0]]
    m = x.masked_fill(~c, 0.5)
    assert m.tolist() == [[1.0, 0.5], [3.0, 0.5]]
    assert ditto.masked_fill(x, ~c, ditto.tensor(0.5)).tolist() == m.tolist()
    y = x.clone()
    assert y.masked_fill_(c, ditto.tensor(7.0)) is y
    assert y.tolist() == [[7.0, -2.0], [7.0, -4.0]]
    with pytest.raises(ValueError):
        y.masked_fill_(c, ditto.tensor([1.0, 2.0]))  # a 0-dim value only
    r = ditto.tensor([2, 1])
    assert ditto.repeat_interleave(r).tolist() == [0, 0, 1]
    assert ditto.repeat_interleave(x, 2, dim=0).shape == (4, 2)
    assert x.repeat_interleave(r, 1).tolist() == [[1.0, 1.0, -2.0], [3.0, 3.0, -4.0]]
    assert ditto.repeat_interleave(x, r, 0, output_size=3).tolist() == \
        [[1.0, -2.0], [1.0, -2.0], [3.0, -4.0]]
    z = x.new_zeros(2, 3, dtype=ditto.int64)
    assert z.dtype == ditto.int64 and z.tolist() == [[0, 0, 0], [0, 0, 0]]
    assert x.new_ones((1, 2)).dtype == ditto.float32
    assert x.new_full((2,), 3).tolist() == [3.0, 3.0]
    assert x.new_empty(4).shape == (4,)
    with pytest.raises(ValueError, match="new_zeros"):
        x.new_zeros(-1, 2)
    # torch's options: self's dtype and device unless given, requires_grad
    g = x.new_zeros(2, 3, dtype=ditto.float64, device="cpu", requires_grad=True)
    assert g.dtype == ditto.float64 and g.requires_grad and g.is_leaf
    assert x.new_ones(size=(2,), requires_grad=True).dtype == x.dtype
    assert x.new_full((2,), 3, dtype=ditto.int32, layout=ditto.strided,
                      pin_memory=False).tolist() == [3, 3]
    assert x.new_empty((2, 2), device=ditto.device("cpu")).shape == (2, 2)
    with pytest.raises(NotImplementedError, match="new_zeros"):
        x.new_zeros(2, layout=ditto.sparse_coo)
    with pytest.raises(ValueError, match="new_ones"):
        x.new_ones(2, pin_memory=True)
    # the sizes as ints reach tile too; a size past int64 is refused (it
    # was undefined behaviour: UBSan, the binding fuzzer's walk)
    assert x.tile(2, 1).shape == (4, 2)
    with pytest.raises(ValueError):
        ditto.tensor([1, 2], dtype=ditto.uint8).tile(1, 2 ** 63 - 1)


def test_mutating_methods_and_index_lists_keep_torchs_forms():
    """The fills (torch's Tensor(a!) self methods: random_'s three
    overloads, uniform_(from=, to=), bernoulli_'s float and Tensor p),
    bernoulli.p, and index/index_put with None in the indices."""
    x = ditto.empty(64, dtype=ditto.int64)
    ditto.manual_seed(3)
    a = x.random_(10).clone()  # random_.to: [0, 10)
    ditto.manual_seed(3)
    b = x.random_(0, 10).clone()  # random_.from
    assert a.tolist() == b.tolist()
    assert x.random_() is x
    assert x.min().item() >= 0
    # to=None: [from, the dtype's largest], as torch
    y = ditto.empty(500, dtype=ditto.uint8).random_(250, None)
    assert y.min().item() >= 250
    with pytest.raises(ValueError):
        ditto.empty(3, dtype=ditto.uint8).random_(300, None)
    g = ditto.Generator()
    g.manual_seed(1)
    u = ditto.empty(200, dtype=ditto.float64).uniform_(**{"from": -1.0}, to=-0.5,
                                                       generator=g)
    assert -1.0 <= u.min().item() and u.max().item() < -0.5
    p = ditto.full((300,), 0.25)
    ditto.manual_seed(4)
    r1 = ditto.bernoulli(p)
    ditto.manual_seed(4)
    r2 = p.bernoulli()
    ditto.manual_seed(4)
    r3 = ditto.empty(300).bernoulli_(p)
    assert r1.tolist() == r2.tolist() == r3.tolist()
    ditto.manual_seed(4)
    s1 = ditto.bernoulli(ditto.zeros(300), 0.25)  # bernoulli.p
    ditto.manual_seed(4)
    s2 = ditto.empty(300).bernoulli_(0.25)
    assert s1.tolist() == s2.tolist()
    t = ditto.zeros(3, 4)
    cols = ditto.tensor([1, 3])
    put = ditto.index_put(t, (None, cols), ditto.tensor(5.0))
    assert put.tolist() == [[0.0, 5.0, 0.0, 5.0]] * 3
    assert t.tolist() == [[0.0] * 4] * 3  # out of place
    assert ditto.index(put, [None, cols]).shape == (3, 2)
    assert put.index([None, cols]).tolist() == [[5.0, 5.0]] * 3
    assert t.index_put_((ditto.tensor([0]),), ditto.tensor(2.0), accumulate=True) is t
    assert t.index_put((ditto.tensor([0]),), ditto.tensor(1.0), True)[0].tolist() == \
        [3.0] * 4


def test_activations_declared_once_reach_nn_functional():
    """leaky_relu, silu, gelu, softmax and log_softmax: one declaration each
    (composite/activation.ops.toml), bound once, named by
    ditto.nn.functional and (softmax, log_softmax) as Tensor methods with
    torch's dtype argument."""
    from ditto.nn import functional as F
    x = ditto.tensor([[-1.0, 0.5, 2.0]])
    for name in ("leaky_relu", "silu", "gelu", "softmax", "log_softmax"):
        assert getattr(F, name) is getattr(ditto, name), name
    assert F.softmax(x, 1).tolist() == x.softmax(1).tolist() == \
        x.softmax(dim=1).tolist()
    # softmax.int's dtype is positional in torch's schema
    y = ditto.log_softmax(x, 1, ditto.float64)
    assert y.dtype == ditto.float64
    assert y.tolist() == x.to(ditto.float64).log_softmax(1).tolist()
    assert x.softmax(1, dtype=ditto.float64).dtype == ditto.float64
    assert F.gelu(x, approximate="tanh").tolist() != F.gelu(x).tolist()
    with pytest.raises(TypeError):
        F.gelu(x, "tanh")  # approximate is keyword-only, as torch's
    with pytest.raises(ValueError):
        F.gelu(x, approximate="fast")
    got = F.leaky_relu(x, 0.25).tolist()
    assert got == [[-0.25, 0.5, 2.0]]
    assert F.silu(x).tolist() == (x * x.sigmoid()).tolist()


def test_losses_are_torchs_python_over_their_aten_forms():
    """The losses' ATen forms are declared (composite/loss.ops.toml) and
    bound once with the reduction as an int (torch._C._nn.mse_loss's);
    ditto.nn.functional's losses are torch's Python over them: torch's
    argument order, the legacy size_average/reduce pair, reduction strings
    refused with torch's message."""
    import warnings
    from ditto.nn import functional as F
    x = ditto.tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    y = ditto.tensor(np.linspace(1.5, -1, 12, dtype=np.float32).reshape(3, 4))

    def same(a, b):
        return a.numpy().tobytes() == b.numpy().tobytes()

    assert same(F.mse_loss(x, y, reduction="sum"), ditto.mse_loss(x, y, 2))
    assert same(F.l1_loss(x, y), ditto.l1_loss(x, y))
    assert same(F.smooth_l1_loss(x, y, reduction="none", beta=0.5),
                ditto.smooth_l1_loss(x, y, 0, 0.5))
    # the legacy pair: reduce=False is 'none', size_average=False 'sum'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert same(F.mse_loss(x, y, None, False), F.mse_loss(x, y, reduction="none"))
        assert same(F.l1_loss(x, y, size_average=False), F.l1_loss(x, y, reduction="sum"))
    assert len(caught) == 2 and "reduction='none'" in str(caught[0].message)
    lp = x.log_softmax(1)
    t = ditto.tensor([3, 0, 1])
    w = ditto.tensor([0.5, 1.0, 1.25, 1.5])
    # torch's order: weight, size_average, ignore_index, reduce, reduction
    assert same(F.nll_loss(lp, t, w, None, 0, None, "sum"),
                ditto.nll_loss(lp, t, w, 2, 0))
    p, q = x.sigmoid(), y.sigmoid()
    assert same(F.binary_cross_entropy(p, q, w),
                ditto.binary_cross_entropy(p, q, w))
    assert same(F.binary_cross_entropy_with_logits(x, q, pos_weight=w),
                ditto.binary_cross_entropy_with_logits(x, q, None, w, 1))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(p, q[0])
    # cross_entropy: torch's order (weight, size_average, ignore_index,
    # reduce, reduction, label_smoothing) over cross_entropy_loss
    assert same(F.cross_entropy(x, t, w, None, 1, None, "sum", 0.2),
                ditto.cross_entropy_loss(x, t, w, 2, 1, 0.2))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert same(F.cross_entropy(x, t, reduce=False),
                    F.cross_entropy(x, t, reduction="none"))
    with pytest.raises(ValueError, match="cross_entropy"):
        F.cross_entropy(x, t, label_smoothing=2.0)
    # batchmean: the sum over the batch size, as torch computes it
    assert same(F.kl_div(lp, q, reduction="batchmean"),
                ditto.kl_div(lp, q, 2) / 3)
    assert same(F.kl_div(lp, q), ditto.kl_div(lp, q, 1))
    # ctc_loss: lengths as tensors or lists
    lpc = ditto.tensor(np.linspace(-1, 1, 30, dtype=np.float32)
                       .reshape(5, 2, 3)).log_softmax(2)
    tc = ditto.tensor([[1, 2], [1, 0]])
    a = F.ctc_loss(lpc, tc, ditto.tensor([5, 4]), ditto.tensor([2, 1]))
    assert same(a, F.ctc_loss(lpc, tc, [5, 4], [2, 1]))
    assert same(a, ditto.ctc_loss(lpc, tc, [5, 4], [2, 1], 0, 1, False))
    for bad in ("avg", "batchmean"):
        with pytest.raises(ValueError, match=f"{bad} is not a valid value"):
            F.mse_loss(x, y, reduction=bad)
    with pytest.raises(ValueError, match=r"\[mse_loss\].*got 3"):
        ditto.mse_loss(x, y, 3)
    # one binding each (the hand-written ones went)
    for name in ("mse_loss", "nll_loss", "kl_div", "binary_cross_entropy"):
        assert not hasattr(ditto._C._nn, name), name


def test_normalizations_keep_atens_order_at_top_level():
    """torch.batch_norm and torch.instance_norm take ATen's order (weight,
    bias, running_mean, running_var, ..., cudnn_enabled);
    torch.nn.functional's take theirs (running statistics first). Both are
    one declaration (composite/normalization.ops.toml)."""
    from ditto.nn import functional as F
    x = ditto.tensor(np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 4))
    w = ditto.tensor([0.5, 1.0, 2.0])
    b = ditto.tensor([0.0, -1.0, 0.25])
    rm, rv = ditto.zeros(3), ditto.ones(3)

    def same(a, c):
        return a.numpy().tobytes() == c.numpy().tobytes()

    want = F.batch_norm(x, rm.clone(), rv.clone(), w, b, True, 0.2, 1e-3)
    rm2, rv2 = rm.clone(), rv.clone()
    assert same(ditto.batch_norm(x, w, b, rm2, rv2, True, 0.2, 1e-3, False), want)
    assert rm2.tolist() != rm.tolist()  # the running statistics updated
    with pytest.raises(TypeError):
        ditto.batch_norm(x, rm, rv)  # torch requires every argument
    assert same(ditto.layer_norm(x, [4], None, None, 1e-5, True),
                F.layer_norm(x, (4,)))
    assert same(ditto.group_norm(x, 3, w, b), F.group_norm(x, 3, w, b))
    assert same(F.instance_norm(x, weight=w, bias=b),
                ditto.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True))


def test_poolings_are_torchs_python_over_their_aten_forms():
    """The poolings' ATen forms are declared (composite/pooling.ops.toml):
    ditto.max_pool2d is torch.max_pool2d (no return_indices), the
    *_with_indices forms and adaptive_max_pool2d give (values, indices);
    ditto.nn.functional's are torch's Python over them: stride None,
    return_indices by keyword or position, None in an adaptive size."""
    from ditto.nn import functional as F
    x = ditto.tensor(np.sin(np.linspace(-9, 9, 2 * 3 * 7 * 8))
                     .astype(np.float32).reshape(2, 3, 7, 8))

    def same(a, b):
        return a.numpy().tobytes() == b.numpy().tobytes()

    assert same(F.max_pool2d(x, 3, None, 1), ditto.max_pool2d(x, 3, [], 1))
    v, i = F.max_pool2d(x, 3, 2, 1, 1, False, True)  # return_indices at 6
    assert same(v, ditto.max_pool2d(x, 3, 2, 1))
    assert same(i, ditto.max_pool2d_with_indices(x, 3, 2, 1)[1])
    assert same(F.max_pool2d_with_indices(x, 2)[0], F.max_pool2d(x, 2))
    with pytest.raises(TypeError):
        ditto.max_pool2d(x, 3, return_indices=True)  # torch's has none
    v1, i1 = F.max_pool1d(x[0], 3, return_indices=True)
    assert same(v1, ditto.max_pool1d(x[0], [3]))
    assert same(i1, ditto.max_pool1d_with_indices(x[0], 3)[1])
    x5 = x.reshape(1, 2, 3, 7, 8)
    assert same(F.max_pool3d(x5, 2), ditto.max_pool3d(x5, 2))
    assert same(F.avg_pool2d(x, 2), ditto.avg_pool2d(x, [2, 2], [2, 2]))
    assert same(F.avg_pool1d(x[0], 3, None, 1),
                ditto.avg_pool1d(x[0], 3, [], 1))
    assert same(F.avg_pool3d(x5, 2, divisor_override=3),
                ditto.avg_pool3d(x5, 2, [], 0, False, True, 3))
    assert same(F.adaptive_avg_pool2d(x, (None, 3)),
                F.adaptive_avg_pool2d(x, (7, 3)))
    assert same(F.adaptive_avg_pool3d(x5, (2, None, 4)),
                ditto.adaptive_avg_pool3d(x5, [2, 7, 4]))
    av, ai = ditto.adaptive_max_pool2d(x, [3, 4])
    assert same(F.adaptive_max_pool2d(x, (3, 4)), av)
    fv, fi = F.adaptive_max_pool2d(x, (3, None), True)
    assert same(fv, ditto.adaptive_max_pool2d(x, [3, 8])[0])
    assert same(F.adaptive_max_pool1d(x[0], 4, return_indices=True)[1],
                ditto.adaptive_max_pool1d(x[0], 4)[1])
    with pytest.raises(ValueError, match="max_pool2d"):
        F.max_pool2d(x, 3, padding=2)
    # ATen's max pooling gradient, autograd's
    xg = x.clone().requires_grad_(True)
    y, yi = F.max_pool2d(xg, 3, 2, 1, return_indices=True)
    go = y.detach().cos()
    y.backward(go)
    assert same(xg.grad, ditto.max_pool2d_with_indices_backward(
        go, x, [3, 3], [2, 2], [1, 1], [1, 1], False, yi))
    # max unpooling: torch's Python computes the size, ATen's form takes it
    v, i = F.max_pool2d(x, 2, return_indices=True)
    assert same(F.max_unpool2d(v, i, 2), ditto.max_unpool2d(v, i, [6, 8]))
    assert same(F.max_unpool2d(v, i, 2, output_size=[7, 8]),
                ditto.max_unpool2d(v, i, [7, 8]))
    v1, i1 = F.max_pool1d(x[0], 2, return_indices=True)
    u1 = F.max_unpool1d(v1, i1, 2)
    assert list(u1.shape) == [3, 7, 8]
    assert same(u1.gather(-1, i1), v1)
    v3, i3 = F.max_pool3d(x5, 2, return_indices=True)
    assert same(F.max_unpool3d(v3, i3, 2, output_size=[3, 7, 8]),
                ditto.max_unpool3d(v3, i3, [3, 7, 8], [2, 2, 2], [0, 0, 0]))
    with pytest.raises(ValueError, match=r"\[max_unpool2d\] output_size "
                                         r"should be a sequence"):
        F.max_unpool2d(v, i, 2, output_size=[1, 2, 3])
    # fractional max pooling: the size from output_ratio in Python, the
    # samples drawn by the op (after its checks: a refused call leaves the
    # generator as it was)
    ditto.manual_seed(3)
    a, ai = F.fractional_max_pool2d(x, 2, output_ratio=0.5,
                                    return_indices=True)
    ditto.manual_seed(3)
    b, bi = ditto.fractional_max_pool2d(x, [2, 2], [3, 4])
    assert same(a, b) and same(ai, bi)
    u = ditto.rand(1, 2, 3, dtype=ditto.float32)
    assert same(F.fractional_max_pool3d(x5, 2, (1, 3, 4), _random_samples=u),
                ditto.fractional_max_pool3d(x5, 2, [1, 3, 4], u)[0])
    with pytest.raises(ValueError, match=r"\[fractional_max_pool2d\] "
                                         r"output_ratio must be between"):
        F.fractional_max_pool2d(x, 2, output_ratio=1.5)
    state = ditto.get_rng_state()
    with pytest.raises(ValueError, match=r"\[fractional_max_pool2d\]"):
        F.fractional_max_pool2d(x, 9, output_size=(3, 4))
    assert ditto.equal(ditto.get_rng_state(), state)


def test_transposed_convolutions_and_lookups_are_atens():
    """conv_transpose1d/2d/3d, embedding and one_hot are declared
    (conv/conv.ops.toml, composite/embedding.ops.toml): torch.embedding
    takes the weight first, F.embedding the input first and wraps a
    negative padding_idx; the transposed convolutions and one_hot are
    bound in ditto.nn.functional as they are."""
    from ditto.nn import functional as F
    x = ditto.tensor(np.sin(np.linspace(-5, 5, 2 * 4 * 9))
                     .astype(np.float32).reshape(2, 4, 9))
    w = ditto.tensor(np.cos(np.linspace(-2, 2, 4 * 3 * 3))
                     .astype(np.float32).reshape(4, 3, 3))
    b = ditto.tensor(np.linspace(-1, 1, 3).astype(np.float32))

    def same(a, c):
        return a.numpy().tobytes() == c.numpy().tobytes()

    y = F.conv_transpose1d(x, w, b, 2, 1, 1)
    x4, w4 = x.unsqueeze(2), w.unsqueeze(2)
    assert same(F.conv_transpose2d(x4, w4, b, (1, 2), (0, 1), (0, 1)),
                ditto.conv_transpose2d(x4, w4, b, [1, 2], [0, 1], [0, 1]))
    assert same(y, ditto.conv_transpose2d(
        x.unsqueeze(2), w.unsqueeze(2), b, (1, 2), (0, 1), (0, 1)).squeeze(2))
    with pytest.raises(ValueError, match="conv_transpose1d"):
        F.conv_transpose1d(x, w, b, (1, 2))
    table = ditto.tensor(np.linspace(-1, 1, 12).astype(np.float32)
                         .reshape(4, 3))
    idx = ditto.tensor([3, 0, 1, 3])
    assert same(F.embedding(idx, table, padding_idx=-1),
                ditto.embedding(table, idx, 3))
    assert same(F.embedding(idx, table), ditto.embedding(table, idx))
    with pytest.raises(ValueError, match="scale_grad_by_freq"):
        F.embedding(idx, table, scale_grad_by_freq=True)
    assert same(F.one_hot(idx, 5), ditto.one_hot(idx, 5))
    assert F.one_hot(idx).shape == (4, 4)


def test_dropout_is_torchs():
    """torch.dropout takes p and train (composite/dropout.ops.toml);
    F.dropout is torch's Python over it with inplace, and ditto's generator
    keyword."""
    from ditto.nn import functional as F
    x = ditto.tensor(np.linspace(-3, 3, 64).astype(np.float32))
    with pytest.raises(TypeError):
        ditto.dropout(x)
    ditto.manual_seed(11)
    a = ditto.dropout(x, 0.3, True)
    ditto.manual_seed(11)
    assert ditto.equal(a, F.dropout(x, 0.3))
    y = x.clone()
    ditto.manual_seed(11)
    out = F.dropout(y, 0.3, True, True)
    assert ditto.equal(y, a) and ditto.equal(out, a)
    assert ditto.equal(F.dropout(x, 0.3, training=False), x)
    g, h = ditto.Generator(), ditto.Generator()
    g.manual_seed(5)
    h.manual_seed(5)
    assert ditto.equal(F.dropout(x, generator=g),
                       ditto.dropout(x, 0.5, True, generator=h))
    with pytest.raises(ValueError, match=r"\[dropout\] dropout probability"):
        F.dropout(x, 1.5)


def test_channel_dropouts_are_torchs_python_over_feature_dropout():
    """F.dropout1d/2d/3d are torch's Python over torch.feature_dropout
    (composite/dropout.ops.toml): one draw per (sample, channel)."""
    from ditto.nn import functional as F
    x = ditto.tensor(np.linspace(-3, 3, 64).astype(np.float32)
                     .reshape(2, 4, 2, 4))
    ditto.manual_seed(3)
    a = ditto.feature_dropout(x, 0.5, True)
    ditto.manual_seed(3)
    assert ditto.equal(F.dropout2d(x), a)
    ditto.manual_seed(3)
    assert ditto.equal(F.dropout3d(x.reshape(2, 4, 2, 2, 2)),
                       a.reshape(2, 4, 2, 2, 2))
    ditto.manual_seed(3)
    assert ditto.equal(F.dropout1d(x.reshape(2, 4, 8)), a.reshape(2, 4, 8))
    ditto.manual_seed(3)
    one = F.dropout1d(x[0].reshape(4, 8))
    ditto.manual_seed(3)
    assert ditto.equal(one, ditto.feature_dropout(x[:1].reshape(1, 4, 8),
                                                  0.5, True)[0])
    y = x.clone()
    ditto.manual_seed(3)
    F.dropout2d(y, inplace=True)
    assert ditto.equal(y, a)
    with pytest.raises(RuntimeError, match="dropout1d"):
        F.dropout1d(x)
    with pytest.raises(ValueError, match=r"\[feature_dropout\] Feature "
                                         r"dropout requires"):
        ditto.feature_dropout(x.reshape(-1), 0.5, True)


def test_factories_take_torchs_options():
    """The factories declared with torch's options (Note [Factory options]):
    torch's keywords and overloads, requires_grad, the sizes as ints, and
    the layouts and pinning ditto cannot give refused naming the op."""
    for f in (ditto.zeros, ditto.ones, ditto.empty, ditto.rand, ditto.randn):
        for t in (f(2, 3), f((2, 3)), f([2, 3]), f(size=(2, 3)),
                  f(ditto.Size([2, 3]))):
            assert list(t.shape) == [2, 3] and t.dtype == ditto.float32
    z = ditto.zeros(2, 3, dtype=ditto.float64, layout=ditto.strided,
                    device="cpu", pin_memory=False, requires_grad=True)
    assert z.dtype == ditto.float64 and z.requires_grad and z.is_leaf
    assert ditto.zeros(2, device=ditto.device("cpu")).device == "cpu"
    assert ditto.full((2,), 3).dtype == ditto.int64  # the value's dtype
    assert ditto.full((2,), True).dtype == ditto.bool
    assert ditto.full((2,), 1.5, dtype=ditto.float64).tolist() == [1.5, 1.5]
    x = ditto.ones(2, 2, dtype=ditto.float64)
    assert ditto.zeros_like(x).dtype == ditto.float64
    assert ditto.ones_like(x, dtype=ditto.int32).dtype == ditto.int32
    assert ditto.full_like(x, 7, requires_grad=True).requires_grad
    assert ditto.empty_like(x, dtype=ditto.float32).shape == x.shape
    assert ditto.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
    # arange's three overloads and its inferred dtypes
    assert ditto.arange(4).tolist() == [0, 1, 2, 3]
    assert ditto.arange(4).dtype == ditto.int64
    assert ditto.arange(1, 4).tolist() == [1, 2, 3]
    assert ditto.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert ditto.arange(0, 5, step=2).tolist() == [0, 2, 4]
    assert ditto.arange(end=3, dtype=ditto.float64).dtype == ditto.float64
    assert ditto.arange(2.5).dtype == ditto.float32
    assert ditto.linspace(0, 1, 5, dtype=ditto.float64).tolist() == \
        [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ditto.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert ditto.eye(n=2, dtype=ditto.int64).dtype == ditto.int64
    assert ditto.scalar_tensor(2.5, dtype=ditto.float64).item() == 2.5
    # randint's two overloads, int64 unless a dtype; the same draws as
    # the explicit low of 0
    ditto.manual_seed(3)
    a = ditto.randint(10, (5,))
    ditto.manual_seed(3)
    b = ditto.randint(0, 10, (5,))
    assert a.dtype == ditto.int64 and a.tolist() == b.tolist()
    g = ditto.Generator().manual_seed(5)
    c = ditto.randint(low=-3, high=3, size=(4,), generator=g,
                      dtype=ditto.int32)
    assert c.dtype == ditto.int32 and all(-3 <= v < 3 for v in c.tolist())
    assert ditto.randint_like(x, 5).dtype == ditto.float64
    assert ditto.randint_like(x, 2, 5, dtype=ditto.int64).dtype == ditto.int64
    assert sorted(ditto.randperm(6, dtype=ditto.int32).tolist()) == list(range(6))
    ditto.manual_seed(1)
    r = ditto.rand(4, dtype=ditto.float64)
    ditto.manual_seed(1)
    assert ditto.rand_like(ditto.zeros(4, dtype=ditto.float64)).tolist() == r.tolist()
    assert ditto.randn(3, requires_grad=True).requires_grad
    # refused, naming the op, with nothing drawn
    state = ditto.get_rng_state()
    with pytest.raises(NotImplementedError, match="rand.*layout=ditto.sparse_coo"):
        ditto.rand(2, layout=ditto.sparse_coo)
    with pytest.raises(ValueError, match="zeros.*pin_memory"):
        ditto.zeros(2, pin_memory=True)
    with pytest.raises(TypeError):
        ditto.zeros(2, layout="strided")  # a layout object, as torch's
    with pytest.raises(TypeError, match="rand.*not implemented for"):
        ditto.rand(2, dtype=ditto.int64)
    with pytest.raises(TypeError, match="zeros.*missing the argument size"):
        ditto.zeros()
    with pytest.raises(ValueError):
        ditto.ones(2, device="nowhere")
    assert ditto.get_rng_state().numpy().tobytes() == state.numpy().tobytes()


def test_views_take_torchs_forms():
    """The views (shape/views.ops.toml): torch's functions and methods,
    sizes as ints, a tuple, a list or size=, and torch's method-only views
    (view, expand, the *_as forms) absent from the module."""
    x = ditto.arange(24.0).reshape(2, 3, 4)
    ref = np.arange(24.0).reshape(2, 3, 4)

    def same(a, b):
        return np.array_equal(a.numpy(), b)

    for shape in ((6, 4), [6, 4]):
        assert same(x.view(shape), ref.reshape(6, 4))
        assert same(ditto.reshape(x, shape), ref.reshape(6, 4))
    assert same(x.view(6, -1), ref.reshape(6, 4))
    assert same(x.view(size=(4, 6)), ref.reshape(4, 6))
    assert same(x.reshape(shape=(24,)), ref.reshape(24))
    assert same(x.view(24), ref.reshape(24))
    assert x.view(ditto.int32).dtype == ditto.int32
    assert same(x.permute(2, 0, 1), ref.transpose(2, 0, 1))
    assert same(ditto.permute(x, (2, 0, 1)), ref.transpose(2, 0, 1))
    assert same(x.permute(dims=[1, 0, 2]), ref.transpose(1, 0, 2))
    assert same(x[0].expand(3, 3, 4), np.broadcast_to(ref[0], (3, 3, 4)))
    assert same(x[0].expand((3, 3, 4)), np.broadcast_to(ref[0], (3, 3, 4)))
    assert same(x.expand(-1, 3, 4, implicit=True), ref)
    for fn in (ditto.transpose, ditto.swapaxes, ditto.swapdims):
        assert same(fn(x, 0, 2), ref.transpose(2, 1, 0))
    assert same(x.swapaxes(1, 2), ref.transpose(0, 2, 1))
    assert same(ditto.t(x[0]), ref[0].T)
    assert same(x.T, ref.T)
    assert same(ditto.narrow(x, 2, 1, 2), ref[:, :, 1:3])
    assert same(ditto.select(x, 1, -1), ref[:, -1])
    assert same(x.slice(2, None, None, 2), ref[:, :, ::2])
    assert same(x.slice(1, start=1), ref[:, 1:])
    assert same(x.slice(), ref)
    assert same(ditto.unsqueeze(x, 0), ref[None])
    y = x.view(2, 1, 12)
    assert same(ditto.squeeze(y), ref.reshape(2, 12))
    assert same(y.squeeze(1), ref.reshape(2, 12))
    assert same(y.squeeze(dim=0), ref.reshape(2, 1, 12))
    assert same(ditto.flatten(x, 1), ref.reshape(2, 12))
    assert same(x.flatten(start_dim=0, end_dim=1), ref.reshape(6, 4))
    row = x[1]
    assert ditto.as_strided(row, (2,), (5,)).tolist() == [12.0, 17.0]
    assert row.as_strided((2,), (5,), 0).tolist() == [0.0, 5.0]
    assert same(x.view_as(ditto.empty(6, 4)), ref.reshape(6, 4))
    assert same(x[0, 0].expand_as(x), np.broadcast_to(ref[0, 0], (2, 3, 4)))
    assert same(x.reshape_as(ditto.empty(4, 6)), ref.reshape(4, 6))
    # torch has these as methods only
    for name in ("view", "expand", "view_as", "expand_as", "reshape_as"):
        assert not hasattr(ditto, name), name
    # the views share the storage; the errors name the op
    v = x.transpose(0, 1)
    v[0, 0, 0] = 100.0
    assert x[0, 0, 0].item() == 100.0
    with pytest.raises(ValueError, match=r"\[t\] expects a tensor with <= 2"):
        ditto.t(x)
    with pytest.raises(TypeError, match="view"):
        x.view()


def test_tensor_and_as_tensor_take_a_device():
    """torch.tensor(data, dtype=, device=, requires_grad=, pin_memory=) and
    torch.as_tensor(data, dtype, device), as torch's programs call them."""
    t = ditto.tensor([1.0, 2.0], device="cpu", requires_grad=True)
    assert t.device == "cpu" and t.requires_grad and t.tolist() == [1.0, 2.0]
    assert ditto.tensor([[1, 2]], dtype=ditto.float64,
                        device=ditto.device("cpu")).dtype == ditto.float64
    with pytest.raises(ValueError, match=r"\[tensor\] pin_memory=True"):
        ditto.tensor([1.0], pin_memory=True)
    with pytest.raises(Exception, match="nosuch"):
        ditto.tensor([1.0], device="nosuch")
    x = ditto.tensor([1.0, 2.0])
    assert ditto.as_tensor(x, device="cpu") is x
    assert ditto.as_tensor(x, ditto.float64, "cpu").dtype == ditto.float64
    assert ditto.as_tensor([3, 4], device="cpu").tolist() == [3, 4]
    if ditto.vulkan.is_available():
        v = ditto.tensor([1.5, 2.5], device="vulkan")
        assert v.device.startswith("vulkan")
        assert v.cpu().tolist() == [1.5, 2.5]
        assert ditto.as_tensor(x, device="vulkan").device.startswith("vulkan")


def test_grid_sample_and_affine_grid_are_torchs_python_over_aten_forms():
    """F.grid_sample and F.affine_grid (torch's Python) over the declared
    ditto.grid_sampler / grid_sampler_2d / _3d and affine_grid_generator:
    ATen's mode numbers, torch's checks and warnings."""
    F = ditto.nn.functional
    g = ditto.Generator().manual_seed(3)
    x = ditto.randn(1, 2, 4, 5, generator=g)
    theta = ditto.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = F.affine_grid(theta, (1, 2, 4, 5), align_corners=True)
    assert ditto.equal(grid, ditto.affine_grid_generator(theta, [1, 2, 4, 5],
                                                          True))
    # The identity grid at the pixels: nearest gives the input, bilinear
    # the input to the rounding of the grid's unnormalization.
    assert ditto.equal(
        F.grid_sample(x, grid, mode="nearest", align_corners=True), x)
    assert ditto.allclose(
        F.grid_sample(x, grid, mode="bilinear", align_corners=True), x,
        rtol=1e-5, atol=1e-6)
    # A grid off the pixels: the modes differ, and each form agrees.
    shifted = grid + 0.1
    for m, mode in enumerate(("bilinear", "nearest")):
        for p, padding in enumerate(("zeros", "border", "reflection")):
            want = F.grid_sample(x, shifted, mode, padding, False).numpy()
            for fn in (ditto.grid_sampler, ditto.grid_sampler_2d):
                got = fn(x, shifted, m, p, False).numpy()
                assert got.tobytes() == want.tobytes(), (mode, padding)
    assert not np.array_equal(
        F.grid_sample(x, shifted, "bilinear", align_corners=False).numpy(),
        F.grid_sample(x, shifted, "nearest", align_corners=False).numpy())
    # Outside the input: zeros, or the border's value.
    far = ditto.full((1, 1, 1, 2), 2.0)
    assert F.grid_sample(x, far, padding_mode="zeros",
                         align_corners=True).abs().sum().item() == 0
    border = F.grid_sample(x, far, padding_mode="border", align_corners=True)
    assert np.array_equal(border.numpy()[..., 0, 0], x.numpy()[..., -1, -1])
    # torch's checks and warnings.
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', "
                       "'nearest' or 'bicubic', but got: 'linear'"):
        F.grid_sample(x, grid, mode="linear", align_corners=True)
    with pytest.raises(ValueError, match="expected padding_mode to be"):
        F.grid_sample(x, grid, padding_mode="wrap", align_corners=True)
    with pytest.raises(ValueError, match=r"\[grid_sampler\] interpolation_mode "
                       "2 .*no bicubic"):
        F.grid_sample(x, grid, mode="bicubic", align_corners=True)
    with pytest.raises(ValueError, match=r"\[grid_sampler_3d\] expected a 5-d"):
        ditto.grid_sampler_3d(x, grid, 0, 0, False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, grid)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(theta, (1, 2, 4, 5))
    with pytest.raises(ValueError, match="Nx3x4 for size"):
        F.affine_grid(theta, (1, 2, 3, 4, 5), align_corners=False)
    with pytest.raises(NotImplementedError, match=r"\[affine_grid\] 3-D"):
        F.affine_grid(ditto.zeros(1, 3, 4), (1, 1, 2, 2, 2),
                      align_corners=False)
    with pytest.raises(ValueError, match="positive output size"):
        F.affine_grid(theta, (1, 2, 0, 5), align_corners=False)


def test_interpolate_is_torchs_python_over_the_upsample_forms():
    """F.interpolate (torch 1.13's Python) over the declared
    ditto.upsample_* forms: the form F.interpolate chooses gives its bits,
    the .vec and fixed-rank overloads agree, torch's checks and warnings.
    (tests/python/test_pooling.py holds F.interpolate to PyTorch's bits.)"""
    F = ditto.nn.functional
    g = ditto.Generator().manual_seed(5)
    x = ditto.randn(2, 3, 5, 7, generator=g)
    cases = [
        (dict(size=(9, 4), mode="bilinear", align_corners=True),
         lambda: ditto.upsample_bilinear2d(x, [9, 4], True, None)),
        (dict(scale_factor=2.5, mode="bicubic"),
         lambda: ditto.upsample_bicubic2d(x, None, False, [2.5, 2.5])),
        (dict(scale_factor=(1.5, 0.5), mode="nearest"),
         lambda: ditto.upsample_nearest2d(x, None, [1.5, 0.5])),
        (dict(size=6, mode="nearest-exact"),
         lambda: ditto._upsample_nearest_exact2d(x, [6, 6], None)),
        (dict(size=(3, 4), mode="bilinear", antialias=True),
         lambda: ditto._upsample_bilinear2d_aa(x, [3, 4], False, None)),
        # recompute_scale_factor: the sizes, no scales
        (dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
         lambda: ditto.upsample_bilinear2d(x, [8, 11], False, None)),
    ]
    for kwargs, form in cases:
        got = F.interpolate(x, **kwargs).numpy()
        assert got.tobytes() == form().numpy().tobytes(), kwargs
    # the fixed-rank overloads: sizes and a scale per dim
    assert ditto.equal(ditto.upsample_nearest2d(x, [10, 14], 2.0, 2.0),
                       ditto.upsample_nearest2d(x, None, [2.0, 2.0]))
    line = x.reshape(6, 5, 7)
    assert ditto.equal(F.interpolate(line, scale_factor=2, mode="linear"),
                       ditto.upsample_linear1d(line, [14], False, 2.0))
    vol = x.reshape(2, 3, 5, 7, 1)
    assert list(F.interpolate(vol, size=(2, 3, 4), mode="trilinear")
                .shape) == [2, 3, 2, 3, 4]
    assert list(F.interpolate(vol, scale_factor=2).shape) == [2, 3, 10, 14, 2]
    assert list(F.interpolate(x, size=(2, 3), mode="area").shape) == \
        [2, 3, 2, 3]
    # the forms' own refusals, naming them
    with pytest.raises(ValueError, match=r"\[upsample_nearest2d\] Must "
                       "specify exactly one of output_size and "
                       "scale_factors"):
        ditto.upsample_nearest2d(x, [4, 4], [2.0, 2.0])
    with pytest.raises(ValueError, match=r"\[upsample_linear1d\] expected a "
                       "3-D input"):
        ditto.upsample_linear1d(x, [4], False, None)
    # torch's checks and warnings
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be "
                       "set with the interpolating modes"):
        F.interpolate(x, size=4, align_corners=True)
    with pytest.raises(ValueError, match="Input and output must have the "
                       "same number of spatial dimensions"):
        F.interpolate(x, size=(4, 4, 4))
    with pytest.raises(ValueError, match="Anti-alias option is only "
                       "supported"):
        F.interpolate(x, size=4, mode="nearest", antialias=True)
    with pytest.raises(NotImplementedError, match="Got 4D input, but "
                       "trilinear mode needs 5D input"):
        F.interpolate(x, size=4, mode="trilinear")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input "
                       r"Tensors supported \(got 2D\)"):
        F.interpolate(x[0, 0], size=4)
    with pytest.warns(UserWarning, match="nn.functional.upsample is "
                      "deprecated"):
        up = F.upsample(x, scale_factor=2)
    assert ditto.equal(up, F.interpolate(x, scale_factor=2))
    with pytest.warns(UserWarning, match="upsample_bilinear is deprecated"):
        F.upsample_bilinear(x, size=4)


def test_pad_and_linear_are_declared():
    """ditto.pad (every mode, circular in C++ too) and ditto.linear are the
    declared functions, and torch.nn.functional's names them (torch:
    torch._C._nn.pad, linear; F.linear is autocast's wrapper of it)."""
    F = ditto.nn.functional
    assert F.pad is ditto.pad
    x = ditto.arange(6.0).reshape(1, 2, 3)
    wrapped = np.pad(x.numpy(), ((0, 0), (1, 0), (2, 1)), mode="wrap")
    assert np.array_equal(F.pad(x, (2, 1, 1, 0), mode="circular").numpy(),
                          wrapped)
    assert np.array_equal(
        F.pad(x, (1, 1), value=7.0).numpy(),
        np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1)), constant_values=7.0))
    with pytest.raises(ValueError, match=r"\[pad\] Padding mode \"reflect\" "
                       "doesn't take in value argument"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(ValueError, match=r"\[pad\] unsupported padding mode "
                       "'wrap'"):
        F.pad(x, (1, 1), mode="wrap")
    w = ditto.ones(4, 3)
    assert ditto.equal(F.linear(x, w), x.matmul(w.t()))
    assert ditto.equal(F.linear(x, w, None), F.linear(x, w))
    assert ditto.equal(ditto.linear(input=x, weight=w, bias=ditto.ones(4)),
                       x.matmul(w.t()) + 1)


def test_normalize_takes_torchs_arguments():
    """F.normalize: the C++ library's F::normalize with LibTorch's options
    (p = 2 its own chain, any other p LibTorch's formula), and out=."""
    F = ditto.nn.functional
    x = ditto.tensor([[3.0, -4.0], [1.0, 1.0]])
    assert np.allclose(F.normalize(x).numpy(), [[0.6, -0.8],
                                                [0.5 ** 0.5, 0.5 ** 0.5]])
    assert ditto.equal(F.normalize(x, dim=0), ditto._C._nn.normalize(x, 2.0,
                                                                      0, 1e-12))
    assert np.allclose(F.normalize(x, p=1, dim=0).abs().sum(0).numpy(), 1.0)
    assert np.allclose(F.normalize(x, p=float("inf")).abs().amax(1).numpy(),
                       1.0)
    out = ditto.empty(0)
    F.normalize(x, out=out)
    assert ditto.equal(out, F.normalize(x))
    # an all-zero row: gradient 1 / eps, as torch's (not NaN)
    for p in (2.0, 1.0):
        z = ditto.zeros(2, 3, requires_grad=True)
        F.normalize(z, p=p, eps=1e-6).sum().backward()
        assert np.allclose(z.grad.numpy(), 1e6), p


def test_copies_conversions_and_namespaces_keep_torchs_forms():
    """The ops declared last (copies.ops.toml, sparse.ops.toml,
    decomp.ops.toml, rnn.ops.toml, normalize, max_unpool1d): torch's calls,
    with their keywords, through the generated bindings."""
    x = ditto.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    # to's three forms, with non_blocking and copy
    assert x.to(ditto.float32).data_ptr() == x.data_ptr()
    c = x.to(ditto.float32, copy=True)
    assert c.data_ptr() != x.data_ptr() and c.tolist() == x.tolist()
    assert x.to("cpu").data_ptr() == x.data_ptr()
    assert x.to("cpu", copy=True).data_ptr() != x.data_ptr()
    assert x.to(ditto.device("cpu"), ditto.float64, non_blocking=True).dtype == ditto.float64
    assert x.to(device="cpu", dtype=ditto.int64).tolist() == [[1, -2, 3], [4, 5, -6]]
    assert x.to(ditto.zeros(1, dtype=ditto.int32)).dtype == ditto.int32
    with pytest.raises(Exception, match="vulkan|device"):
        x.to("vulkan:99")
    # the writes, as methods and as torch.fill_ / torch.zero_
    y = x.clone()
    assert ditto.fill_(y, 2.5) is not None and y.tolist() == [[2.5] * 3] * 2
    assert ditto.zero_(y).sum().item() == 0.0
    assert y.copy_(x, non_blocking=True).tolist() == x.tolist()
    assert list(y.resize_(3, 2).shape) == [3, 2]
    assert list(y.resize_([6]).shape) == [6]
    with pytest.raises(ValueError, match=r"\[fill_\]"):
        ditto.zeros(2, dtype=ditto.uint8).fill_(300)
    # torch.sparse.mm / addmm and the sparse parts
    s = ditto.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    d = ditto.ones(2, 2)
    assert ditto.sparse.mm(s, d).tolist() == [[2.0, 2.0], [3.0, 3.0]]
    assert ditto.sparse.addmm(d, s, d, beta=0.5, alpha=2.0).tolist() == \
        [[4.5, 4.5], [6.5, 6.5]]
    assert s.coalesce().indices().tolist() == [[0, 1], [1, 0]]
    assert s._values().tolist() == [2.0, 3.0]
    assert ditto.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (4,)).to_dense().tolist() == \
        [1.0, 0.0, 2.0, 0.0]
    # ditto.linalg's decompositions: qr's named tuple, svd_lowrank's generator
    q, r = ditto.linalg.qr(ditto.tensor([[3.0, 1.0], [4.0, 2.0], [0.0, 5.0]]))
    assert list(q.shape) == [3, 2] and list(r.shape) == [2, 2]
    a = ditto.randn(6, 4, generator=ditto.Generator().manual_seed(1))
    u1, s1, v1 = ditto.svd_lowrank(a, q=3, niter=1) if hasattr(ditto, "svd_lowrank") \
        else ditto.linalg.svd_lowrank(a, q=3, niter=1)
    assert list(u1.shape) == [6, 3] and list(s1.shape) == [3] and list(v1.shape) == [4, 3]
    g = ditto._C._linalg.svd_lowrank
    r1 = g(a, 3, 1, generator=ditto.Generator().manual_seed(7))
    r2 = g(a, 3, 1, generator=ditto.Generator().manual_seed(7))
    assert all(t1.numpy().tobytes() == t2.numpy().tobytes() for t1, t2 in zip(r1, r2))
    # the recurrent steps and normalize in ditto._C._nn
    F = ditto.nn.functional
    parts = F.split_rows(ditto.arange(6.0).reshape(3, 2), [1, 2])
    assert [p.tolist() for p in parts] == [[[0.0, 1.0]], [[2.0, 3.0], [4.0, 5.0]]]
    n1 = F.normalize(x, p=1.0, dim=1)
    assert np.allclose(n1.abs().sum(1).numpy(), 1.0)
    assert ditto._C._nn.normalize(x, 1, 1e-12).numpy().tobytes() == \
        F.normalize(x, dim=1).numpy().tobytes()
    un = ditto._C._nn.max_unpool1d(ditto.tensor([[[5.0, 7.0]]]),
                                   ditto.tensor([[[1, 2]]]), [2])
    assert un.tolist() == [[[0.0, 5.0, 7.0, 0.0]]]
