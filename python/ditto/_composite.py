"""torch's Python-level signatures over ditto's declared ops
(ditto/ops/composite/composite.ops.toml): the forms torch's Python API accepts that
one C++ schema does not (a list or an int for split, unbiased for var and
std, dims as a count for tensordot), and einsum."""
import builtins as _b

from . import _C

Tensor = _C.Tensor


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: views of split_size_or_sections along dim (an int: equal
    sizes, the last one shorter; a list: those sizes)."""
    if isinstance(split_size_or_sections, int):
        return _C.split(tensor, split_size_or_sections, dim)
    return _C.split_with_sizes(tensor, list(split_size_or_sections), dim)


def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


def _correction(unbiased, correction, op):
    if unbiased is not None and correction is not None:
        raise ValueError(f"[{op}] give unbiased or correction, not both")
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def _reduction(c_fn, op):
    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        # torch.var(x, True): unbiased given in dim's place
        if isinstance(dim, _b.bool):
            dim, unbiased = None, dim
        if isinstance(dim, int):
            dim = [dim]
        return c_fn(input, dim, correction=_correction(unbiased, correction, op),
                    keepdim=keepdim)
    fn.__name__ = op
    fn.__doc__ = f"torch.{op}: correction (or unbiased) as torch's."
    return fn


var = _reduction(_C.var, "var")
std = _reduction(_C.std, "std")
var_mean = _reduction(_C.var_mean, "var_mean")
std_mean = _reduction(_C.std_mean, "std_mean")


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: p a number or 'fro' (the 2-norm), over dim (an int or a
    list; None: every element, keepdim then keeping every dim as 1), in
    dtype when given (the input converted first)."""
    if p is None:
        p = 2
    elif isinstance(p, str):
        if p != "fro":
            raise ValueError(f"[norm] p must be a number or 'fro', got {p!r}")
        p = 2
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        if not keepdim:
            return _C.norm(input, p)
        dim = list(range(input.dim()))
    return _C.norm(input, p, dim, keepdim)


def pow(input, exponent):
    """torch.pow: input a tensor, or a number with a tensor exponent."""
    if isinstance(input, Tensor):
        return _C.pow(input, exponent)
    if not isinstance(exponent, Tensor):
        raise TypeError("[pow] expected a tensor base or a tensor exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    return exponent.__rpow__(input)


def tensordot(a, b, dims=2):
    """torch.tensordot: dims a count (the last of a with the first of b) or
    a pair of lists."""
    if isinstance(dims, int):
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    return _C.tensordot(a, b, da, db)


def trace(input):
    """torch.trace: the sum of a matrix's diagonal."""
    if input.dim() != 2:
        raise ValueError(f"[trace] expected a matrix, but got tensor with size "
                         f"{list(input.shape)}")
    return _C.diagonal(input).sum()


def atleast_1d(*tensors):
    out = [t.reshape(1) if t.dim() == 0 else t for t in _flat(tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*tensors):
    out = [t.reshape(1, -1) if t.dim() < 2 else t for t in _flat(tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def _flat(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing="ij"):
    """torch.meshgrid: broadcast views of 1-d tensors (indexing 'ij' or
    'xy')."""
    ts = _flat(tensors)
    if indexing not in ("ij", "xy"):
        raise ValueError(f"[meshgrid] indexing must be 'ij' or 'xy', got "
                         f"{indexing!r}")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(t.reshape(view).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def einsum(equation, *operands):
    """torch.einsum over ditto's ops: each operand's repeated-free subscripts
    (and '...'), contracted pairwise left to right with permute, reshape and
    bmm (one fixed chain per result)."""
    ops = _flat(operands)
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs, out = eq, None
    terms = lhs.split(",")
    if len(terms) != len(ops):
        raise ValueError(f"[einsum] {len(terms)} subscripts for {len(ops)} "
                         "operands")
    # '...' becomes capital letters, as many as the operand's extra dims.
    ell = None
    subs = []
    for k, (t, x) in enumerate(zip(terms, ops)):
        if "..." in t:
            n = x.dim() - (len(t) - 3)
            e = "".join(chr(ord("A") + i) for i in range(n))
            ell = e if ell is None or len(e) > len(ell) else ell
            t = t.replace("...", e)
        if len(t) != x.dim():
            raise ValueError(f"[einsum] subscripts '{t}' for a {x.dim()}-d "
                             "operand")
        # A subscript repeated in one operand takes its diagonal ('ii->'
        # is the trace, 'ii->i' the diagonal): the two dims become one,
        # moved last (a view, as torch's).
        while len(set(t)) != len(t):
            c = next(ch for ch in t if t.count(ch) > 1)
            i = t.index(c)
            j = t.index(c, i + 1)
            if x.shape[i] != x.shape[j]:
                raise ValueError(f"[einsum] subscript '{c}' is repeated for "
                                 f"dims of sizes {x.shape[i]} and "
                                 f"{x.shape[j]}")
            x = x.diagonal(0, i, j)
            t = t[:i] + t[i + 1:j] + t[j + 1:] + c
        ops[k] = x
        subs.append(t)
    if out is None:
        # The subscripts that appear once in the equation as written (a
        # repeated one, 'ii', is summed: torch's implicit output).
        counts = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = (ell or "") + "".join(sorted(
            c for c, k in counts.items() if k == 1 and not c.isupper()))
    else:
        out = out.replace("...", ell or "")
    sizes = {}
    for t, x in zip(subs, ops):
        for c, n in zip(t, x.shape):
            if sizes.get(c, 1) != n and n != 1:
                if sizes.get(c, 1) != 1:
                    raise ValueError(f"[einsum] subscript '{c}' has sizes "
                                     f"{sizes[c]} and {n}")
            sizes[c] = _b.max(sizes.get(c, 1), n)

    def reduce_alone(x, t, keep):
        # sum the subscripts no later operand or the output needs
        drop = [i for i, c in enumerate(t) if c not in keep]
        if drop:
            x = x.sum(drop)
            t = "".join(c for c in t if c not in [t[i] for i in drop])
        return x, t

    x, t = ops[0], subs[0]
    rest = "".join(subs[1:]) + out
    x, t = reduce_alone(x, t, rest)
    for k in range(1, len(ops)):
        y, u = ops[k], subs[k]
        later = "".join(subs[k + 1:]) + out
        y, u = reduce_alone(y, u, t + later)
        batch = [c for c in t if c in u and c in later]
        contract = [c for c in t if c in u and c not in later]
        left = [c for c in t if c not in u]
        right = [c for c in u if c not in t]
        xp = x.permute([t.index(c) for c in batch + left + contract]) if t else x
        yp = y.permute([u.index(c) for c in batch + contract + right]) if u else y
        bs = [sizes[c] for c in batch]
        B, L, C, R = (_prod(bs), _prod([sizes[c] for c in left]),
                      _prod([sizes[c] for c in contract]),
                      _prod([sizes[c] for c in right]))
        xp = xp.expand(bs + [sizes[c] for c in left + contract]).reshape(B, L, C)
        yp = yp.expand(bs + [sizes[c] for c in contract + right]).reshape(B, C, R)
        x = _C.bmm(xp, yp).reshape(bs + [sizes[c] for c in left + right])
        t = "".join(batch + left + right)
    x, t = reduce_alone(x, t, out)
    if t != out:
        x = x.permute([t.index(c) for c in out])
    return x


def cross(input, other, dim=None):
    """torch.cross: along dim, or the first dim of size 3."""
    from . import linalg
    if dim is None:
        dim = next(i for i, n in enumerate(input.shape) if n == 3)
    return linalg.cross(input, other, dim)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary",
                "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0,
          compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """torch.cdist: the p-norm distances between the rows of x1 and x2
    (batched alike). Every mode computes the differences directly (the
    declared op cdist): no matrix-product shortcut, one chain per
    distance."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"[cdist] {compute_mode} is not a valid value for "
                         "compute_mode")
    return _C.cdist(x1, x2, p, _CDIST_MODES.index(compute_mode))


def _prod(xs):
    p = 1
    for v in xs:
        p *= v
    return p


def narrow(input, dim, start, length):
    """torch.narrow: Tensor.narrow as a function (a view)."""
    return input.narrow(dim, start, length)


def select(input, dim, index):
    """torch.select: Tensor.select as a function (a view)."""
    return input.select(dim, index)


def clone(input, *, memory_format=None):
    """torch.clone: a copy."""
    return input.clone()


def flatten(input, start_dim=0, end_dim=-1):
    """torch.flatten: Tensor.flatten as a function."""
    return input.flatten(start_dim, end_dim)


def signbit(input):
    """torch.signbit: True where the sign bit is set (-0.0 included)."""
    return _C.copysign(_C.ones_like(input, dtype=_C.float32)
                       if not input.is_floating_point() else _C.ones_like(input),
                       input) < 0


def logspace(start, end, steps, base=10.0, *, dtype=None):
    """torch.logspace: base ** linspace(start, end, steps)."""
    e = _C.linspace(start, end, steps, dtype=dtype or _C.float32)
    return _C.pow(_C.full_like(e, base), e)


def argsort(input, dim=-1, descending=False):
    """torch.argsort: the indices sort gives (stable)."""
    return _C.sort(input, dim, descending)[1]


def take_along_dim(input, indices, dim=None):
    """torch.take_along_dim: gather along dim (the flattened input when
    dim is None), indices broadcast to the input."""
    if dim is None:
        return _C.take(input, indices.flatten())
    shape = list(input.shape)
    shape[dim] = indices.shape[dim]
    return _C.gather(input.expand(*[max(a, b) if i != dim % input.dim() else a
                                    for i, (a, b) in enumerate(zip(input.shape, indices.shape))]),
                     dim, indices.expand(*[max(a, b) if i != dim % input.dim() else b
                                           for i, (a, b) in enumerate(zip(input.shape, indices.shape))]))


def rot90(input, k=1, dims=(0, 1)):
    """torch.rot90: k quarter turns in the plane of dims (from the first
    toward the second)."""
    d0, d1 = dims
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def aminmax(input, *, dim=None, keepdim=False):
    """torch.aminmax: (min, max), named."""
    from . import return_types
    d = [] if dim is None else [dim]
    mn, mx = _C.amin(input, d, keepdim), _C.amax(input, d, keepdim)
    rt = getattr(return_types, "aminmax", None)
    return rt(mn, mx) if rt is not None else (mn, mx)


def _tensor_format(self, spec):
    if self.dim() == 0:
        return format(self.item(), spec)
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return str(self)


def install(ns):
    """Puts the wrappers into the ditto namespace and on Tensor."""
    for name in ("split", "var", "std", "var_mean", "std_mean", "tensordot",
                 "trace", "atleast_1d", "atleast_2d", "meshgrid", "einsum",
                 "cross", "cdist", "narrow", "select", "clone", "flatten",
                 "signbit", "logspace", "argsort", "take_along_dim", "rot90",
                 "aminmax", "nonzero", "argwhere", "unique", "searchsorted",
                 "bucketize", "norm", "pow"):
        ns[name] = globals()[name]
    Tensor.split = _split_method
    for name in ("var", "std", "norm"):
        fn = globals()[name]
        setattr(Tensor, name, lambda self, *a, _f=fn, **k: _f(self, *a, **k))
    Tensor.trace = lambda self: trace(self)
    Tensor.mT = property(lambda self: self.transpose(-2, -1))
    repeat = Tensor.repeat
    Tensor.repeat = lambda self, *sizes: repeat(
        self, list(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int)
        else list(sizes))
    for name in ("signbit", "argsort", "rot90", "aminmax", "take_along_dim",
                 "nonzero", "argwhere", "unique"):
        fn = globals()[name]
        setattr(Tensor, name, lambda self, *a, _f=fn, **k: _f(self, *a, **k))
    Tensor.__format__ = _tensor_format
    _install_logical()


# ---- data-dependent shapes: nonzero, unique, searchsorted, bucketize,
# made of sort, masked_select and cumsum (exact integer work, so the
# results are torch's on every run)

def nonzero(input, *, as_tuple=False):
    """torch.nonzero: the indices of the nonzero elements, in row-major
    order, as an (n, dim) int64 tensor (as_tuple: one 1-d tensor per
    dim)."""
    rows = _C.nonzero(input)
    if not as_tuple:
        return rows
    if input.dim() == 0:
        # torch: a 0-d tensor is one element along one dim
        return (_C.zeros(rows.shape[0], dtype=_C.int64),)
    return tuple(rows.select(1, d) for d in range(input.dim()))


def argwhere(input):
    """torch.argwhere: nonzero(input)."""
    return nonzero(input)


def unique(input, sorted=True, return_inverse=False, return_counts=False,
           dim=None):
    """torch.unique of the flattened input (dim=None): the sorted distinct
    values, and optionally each element's index into them and their
    counts."""
    if dim is not None:
        raise ValueError("[unique] dim is not supported yet: pass dim=None")
    flat = input.reshape(-1)
    vals, order = _C.sort(flat, 0, False)
    n = vals.numel()
    if n == 0:
        out = [vals]
        if return_inverse:
            out.append(_C.zeros_like(input, dtype=_C.int64))
        if return_counts:
            out.append(_C.zeros([0], dtype=_C.int64))
        return out[0] if len(out) == 1 else tuple(out)
    first = _C.cat([_C.ones([1], dtype=_C.bool), vals[1:] != vals[:-1]])
    uniq = _C.masked_select(vals, first)
    out = [uniq]
    if return_inverse:
        group = _C.cumsum(first.to(_C.int64), 0) - 1
        inverse = _C.zeros([n], dtype=_C.int64).scatter(0, order, group)
        out.append(inverse.reshape(input.shape))
    if return_counts:
        starts = _C.masked_select(_arange(n), first)
        ends = _C.cat([starts[1:], _C.tensor([n], dtype=_C.int64)])
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False,
                 side=None, sorter=None):
    """torch.searchsorted: for each value, the index in the last dim of
    sorted_sequence where it would be inserted (before equal elements, or
    after them with right=True)."""
    if side is not None:
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        seq = _C.gather(seq, seq.dim() - 1, sorter)
    scalar = not isinstance(values, Tensor)
    v = _C.tensor(values, dtype=seq.dtype) if scalar else values
    if seq.dim() == 1:
        s = seq.reshape([1] * v.dim() + [-1])
        vv = v.unsqueeze(-1)
    else:
        s = seq.unsqueeze(-2)
        vv = v.unsqueeze(-1)
    below = (s <= vv) if right else (s < vv)
    idx = below.to(_C.int64).sum([below.dim() - 1])
    return idx.to(_C.int32) if out_int32 else idx


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """torch.bucketize: searchsorted(boundaries, input)."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _arange(n):
    from . import arange
    return arange(0, n, 1, dtype=_C.int64)


# ---- logical and bitwise ops: the logical ones (and the bitwise ones on
# bool) made of comparisons and minimum/maximum, exact; the bitwise ones on
# integers through NumPy's (exact integer arithmetic, CPU tensors)

def _as_tensor(x, like):
    return x if isinstance(x, Tensor) else _C.tensor(x, dtype=like.dtype)


def _install_logical():
    """Python's operators on the declared bitwise ops (integers and bool)."""
    Tensor.__invert__ = lambda self: _C.bitwise_not(self)
    Tensor.__and__ = lambda self, other: _C.bitwise_and(self, other)
    Tensor.__or__ = lambda self, other: _C.bitwise_or(self, other)
    Tensor.__xor__ = lambda self, other: _C.bitwise_xor(self, other)
    Tensor.__rand__ = lambda self, other: _C.bitwise_and(self, other)
    Tensor.__ror__ = lambda self, other: _C.bitwise_or(self, other)
    Tensor.__rxor__ = lambda self, other: _C.bitwise_xor(self, other)
    Tensor.__iand__ = lambda self, other: self.bitwise_and_(other)
    Tensor.__ior__ = lambda self, other: self.bitwise_or_(other)
    Tensor.__ixor__ = lambda self, other: self.bitwise_xor_(other)