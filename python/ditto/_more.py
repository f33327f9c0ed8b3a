"""More of torch's everyday functions as compositions of ditto's ops
(issue 59): each is a short fixed chain of ops whose records guarantee
the bits; a few integer-exact ones (frexp, nextafter) go through NumPy on
CPU tensors."""
import builtins as _b
import math as _math

from . import _C

Tensor = _C.Tensor
_result_type = _C.result_type


def _t(x, like=None):
    if isinstance(x, Tensor):
        return x
    return _C.tensor(x, dtype=like.dtype) if like is not None else _C.tensor(x)


# ---- shape functions torch has as functions
def squeeze(input, dim=None):
    """torch.squeeze: every size-1 dim, one dim, or a tuple of dims
    (aten.squeeze.dims)."""
    if dim is None:
        return _squeeze_one(input)
    if isinstance(dim, (tuple, list)):
        nd = max(input.dim(), 1)
        dims = sorted({(d + nd if d < 0 else d) for d in dim}, reverse=True)
        for d in dims:
            if not 0 <= d < nd:
                raise IndexError(
                    f"[squeeze] Dimension out of range (expected to be in "
                    f"range of [{-nd}, {nd - 1}], but got {d})")
        out = input
        for d in dims:
            out = _squeeze_one(out, d)
        return out
    return _squeeze_one(input, dim)


def flipud(input):
    return _C.flip(input, [0])


def fliplr(input):
    return _C.flip(input, [1])


def column_stack(tensors):
    return _C.hstack([x.reshape(-1, 1) if x.dim() < 2 else x for x in tensors])


def atleast_3d(*tensors):
    from ._composite import _flat
    out = []
    for x in _flat(tensors):
        if x.dim() == 0:
            x = x.reshape(1, 1, 1)
        elif x.dim() == 1:
            x = x.reshape(1, -1, 1)
        elif x.dim() == 2:
            x = x.unsqueeze(-1)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def dstack(tensors):
    return _C.cat([atleast_3d(x) for x in tensors], 2)


def tensor_split(input, indices_or_sections, dim=0):
    """Views at the given indices, or k sections (the first n % k one
    longer)."""
    n = input.shape[dim]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise ValueError(f"[tensor_split] number of sections must be larger "
                             f"than 0, got {k}")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        bounds, start = [], 0
        for s in sizes:
            bounds.append((start, s))
            start += s
    else:
        idx = [_b.min(_b.max(int(i), 0), n) for i in indices_or_sections]
        edges = [0] + idx + [n]
        bounds = [(a, _b.max(b - a, 0)) for a, b in zip(edges[:-1], edges[1:])]
    return tuple(input.narrow(dim, a, s) for a, s in bounds)


def hsplit(input, sections):
    return tensor_split(input, sections, 1 if input.dim() > 1 else 0)


def vsplit(input, sections):
    return tensor_split(input, sections, 0)


def dsplit(input, sections):
    return tensor_split(input, sections, 2)


def cartesian_prod(*tensors):
    from ._composite import meshgrid
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


def _tri_indices(row, col, offset, lower):
    pairs = [(i, j) for i in range(row) for j in range(col)
             if (j - i <= offset if lower else j - i >= offset)]
    if not pairs:
        return _C.zeros([2, 0], dtype=_C.int64)
    return _C.tensor([[p[0] for p in pairs], [p[1] for p in pairs]],
                     dtype=_C.int64)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, False)


def block_diag(*tensors):
    """The tensors (0-d, 1-d or 2-d) along the diagonal, zeros elsewhere."""
    ms = [x.reshape(1, 1) if x.dim() == 0 else
          (x.reshape(1, -1) if x.dim() == 1 else x) for x in tensors]
    width = _b.sum(m.shape[1] for m in ms)
    rows, col = [], 0
    from .nn.functional import pad
    for m in ms:
        rows.append(pad(m, (col, width - col - m.shape[1])))
        col += m.shape[1]
    return _C.cat(rows, 0)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """The last dim of input on the diagonals of new (dim1, dim2) planes
    (default dims)."""
    if (dim1, dim2) != (-2, -1):
        raise ValueError("[diag_embed] only dim1=-2, dim2=-1 are supported")
    lead = list(input.shape[:-1])
    flat = input.reshape(-1, input.shape[-1])
    mats = [_C.diag(r, offset) for r in flat.unbind(0)]
    out = _C.stack(mats) if mats else _C.zeros([0, 0, 0], dtype=input.dtype)
    return out.reshape(lead + list(out.shape[-2:]))


def diagflat(input, offset=0):
    return _C.diag(input.reshape(-1), offset)


def vander(x, N=None, increasing=False):
    n = x.numel() if N is None else N
    cols = [_C.pow(x, k) if k else _C.ones_like(x) for k in range(n)]
    if not increasing:
        cols.reverse()
    return _C.stack(cols, 1) if cols else _C.zeros([x.numel(), 0], dtype=x.dtype)


# ---- elementwise
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    other = _t(other, input)
    diff = (input - other).abs()
    close = (input == other) | (diff <= atol + rtol * other.abs())
    if equal_nan:
        close = close | ((input != input) & (other != other))
    return close


def clamp_min(input, min):
    return _C.clamp(input, min=min)


def clamp_max(input, max):
    return _C.clamp(input, max=max)


def floor_divide(input, other):
    """input / other rounded toward -inf (torch 1.13's floor_divide)."""
    if not isinstance(input, Tensor):
        input = _t(input)
    # A Python number is a 0-d tensor of its own kind, which promotes as
    # torch's wrapped numbers do (an int8 tensor // 2 stays int8).
    other = _t(other)
    if input.is_floating_point() or other.is_floating_point():
        return _C.floor(input / other)
    r = _C.remainder(input, other)
    return ((input - r).to(_C.float64) / other.to(_C.float64)).to(
        _result_type(input, other))


def fmax(input, other):
    other = _t(other, input)
    return _C.where(input != input, other,
                    _C.where(other != other, input, _C.maximum(input, other)))


def fmin(input, other):
    other = _t(other, input)
    return _C.where(input != input, other,
                    _C.where(other != other, input, _C.minimum(input, other)))


def float_power(input, exponent):
    e = exponent.to(_C.float64) if isinstance(exponent, Tensor) else exponent
    return _C.pow(input.to(_C.float64), e)


def heaviside(input, values):
    return _C.where(input == 0, values.to(input.dtype),
                    (input > 0).to(input.dtype))


def deg2rad(input):
    return input * (_math.pi / 180)


def rad2deg(input):
    return input * (180 / _math.pi)


def angle(input):
    """Real input: 0 for x >= 0, pi for x < 0 (NaN stays NaN)."""
    x = input if input.is_floating_point() else input.to(_C.float32)
    zero = _C.zeros_like(x)
    return _C.where(x < 0, zero + _math.pi, _C.where(x != x, x, zero))


def positive(input):
    return input


def ldexp(input, other):
    return input * _C.exp2(_t(other).to(_C.float64)).to(
        input.dtype if input.is_floating_point() else _C.float32)


def frexp(input):
    import numpy as np
    from . import return_types
    m, e = np.frexp(input.numpy())
    rt = getattr(return_types, "frexp", None)
    out = (_C.from_numpy(np.ascontiguousarray(m)),
           _C.from_numpy(np.ascontiguousarray(e.astype(np.int32))))
    return rt(*out) if rt is not None else out


def nextafter(input, other):
    import numpy as np
    return _C.from_numpy(np.ascontiguousarray(
        np.nextafter(input.numpy(), _t(other, input).numpy())))


def logit(input, eps=None):
    from . import special
    return special.logit(input, eps)


def sinc(input):
    from . import special
    return special.sinc(input)


# ---- reductions and differences
def diff(input, n=1, dim=-1, prepend=None, append=None):
    x = input
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _C.cat(parts, dim)
    for _ in range(n):
        size = x.shape[dim]
        x = x.narrow(dim, 1, size - 1) - x.narrow(dim, 0, size - 1) \
            if x.dtype != _C.bool else \
            x.narrow(dim, 1, size - 1) != x.narrow(dim, 0, size - 1)
    return x


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    ok = input == input
    s = _C.nansum(input, dim if dim is None or not isinstance(dim, int) else [dim],
                  keepdim)
    d = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    count = ok.to(input.dtype).sum(d if d else list(range(input.dim())), keepdim)
    return s / count


def dist(input, other, p=2):
    return _C.norm(input - other, p)


def renorm(input, p, dim, maxnorm):
    others = [d for d in range(input.dim()) if d != dim % input.dim()]
    norms = _C.norm(input, p, others, True)
    factor = _C.where(norms > maxnorm, maxnorm / (norms + 1e-7), norms * 0 + 1)
    return input * factor


def trapezoid(y, x=None, *, dx=None, dim=-1):
    n = y.shape[dim]
    mid = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if x is not None:
        d = diff(x, dim=dim if x.dim() > 1 else -1)
        if x.dim() == 1 and y.dim() > 1:
            shape = [1] * y.dim()
            shape[dim] = n - 1
            d = d.reshape(shape)
        return (mid * d).sum([dim % y.dim()]) / 2
    return mid.sum([dim % y.dim()]) * ((1.0 if dx is None else dx) / 2)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    n = y.shape[dim]
    mid = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1))
    if x is not None:
        mid = mid * diff(x, dim=-1 if x.dim() == 1 else dim)
        return _C.cumsum(mid, dim) / 2
    return _C.cumsum(mid, dim) * ((1.0 if dx is None else dx) / 2)


def cov(input, *, correction=1, fweights=None, aweights=None):
    if fweights is not None or aweights is not None:
        raise ValueError("[cov] fweights and aweights are not supported yet")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    xc = x - x.mean([1], True)
    c = _C.matmul(xc, xc.t()) / _b.max(n - correction, 0)
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = _C.sqrt(_C.diagonal(c))
    c = c / d.reshape(-1, 1) / d.reshape(1, -1)
    return _C.clamp(c, -1, 1)


# ---- where with one argument, dtype helpers
_where3 = _C.where


def where(condition, input=None, other=None):
    if input is None and other is None:
        from ._composite import nonzero
        return nonzero(condition, as_tuple=True)
    return _where3(condition, input, other)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return False


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value "
                           "is ambiguous")
    return bool(input.item() != 0)


def result_type(tensor1, tensor2):
    if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor):
        return _result_type(tensor1, tensor2)
    a = tensor1 if isinstance(tensor1, Tensor) else None
    b = tensor2 if isinstance(tensor2, Tensor) else None
    if a is None and b is None:
        return _C.tensor([tensor1]).dtype if not isinstance(tensor1, float) \
            else _C.float32
    t_, s = (a, tensor2) if a is not None else (b, tensor1)
    if isinstance(s, float) and not t_.is_floating_point():
        return _C.float32
    return t_.dtype


def get_default_dtype():
    return _C.float32


def set_default_dtype(d):
    if d != _C.float32:
        raise ValueError("[set_default_dtype] ditto's default dtype is float32; "
                         "other defaults are not supported yet: pass dtype= to "
                         "the factories")


class finfo:
    """torch.finfo for float16, bfloat16, float32 and float64."""

    def __init__(self, type=None):
        type = type or _C.float32
        if type == _C.float64:
            self.bits, self.eps, self.max = 64, 2.220446049250313e-16, 1.7976931348623157e308
            self.tiny = self.smallest_normal = 2.2250738585072014e-308
            self.resolution = 1e-15
        elif type == _C.float32:
            self.bits, self.eps, self.max = 32, 1.1920928955078125e-07, 3.4028234663852886e38
            self.tiny = self.smallest_normal = 1.1754943508222875e-38
            self.resolution = 1e-06
        elif type == _C.float16:
            self.bits, self.eps, self.max = 16, 0.0009765625, 65504.0
            self.tiny = self.smallest_normal = 6.103515625e-05
            self.resolution = 0.001
        elif type == _C.bfloat16:
            self.bits, self.eps, self.max = 16, 0.0078125, 3.3895313892515355e38
            self.tiny = self.smallest_normal = 1.1754943508222875e-38
            self.resolution = 0.01
        else:
            raise TypeError(f"finfo: {type} is not a floating dtype")
        self.min = -self.max
        self.dtype = str(type).split(".")[-1]


class iinfo:
    """torch.iinfo for the integer dtypes."""

    def __init__(self, type):
        bits = {_C.int64: 64, _C.int32: 32, _C.int16: 16, _C.int8: 8,
                _C.uint8: 8}.get(type)
        if bits is None:
            raise TypeError(f"iinfo: {type} is not an integer dtype")
        self.bits = bits
        if type == _C.uint8:
            self.min, self.max = 0, 255
        else:
            self.min, self.max = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        self.dtype = str(type).split(".")[-1]


# ---- Tensor methods torch has
def _type_as(self, other):
    return self.to(other.dtype)


def _new_tensor(self, data, dtype=None, requires_grad=False):
    out = _C.tensor(data, dtype=dtype or self.dtype)
    return out.requires_grad_(True) if requires_grad else out


def _index_fill(self, dim, index, value):
    mask_shape = [1] * self.dim()
    mask_shape[dim] = self.shape[dim]
    from . import arange
    hit = (arange(self.shape[dim]).reshape(-1, 1) == index.reshape(1, -1)).any(1)
    return self.masked_fill(hit.reshape(mask_shape), value)


def matrix_exp(A):
    from . import linalg
    return linalg.matrix_exp(A)


_squeeze_one = Tensor.squeeze
_C_any = _C.any
_C_prod = _C.prod
_C_clamp = _C.clamp


def any(input, dim=None, keepdim=False):
    """torch.any: over everything, one dim, or a tuple of dims
    (aten.any.dims)."""
    if isinstance(dim, (tuple, list)):
        nd = max(input.dim(), 1)
        dims = sorted({(d + nd if d < 0 else d) for d in dim}, reverse=True)
        if not dims:
            return _C_any(input)
        out = input
        for d in dims:
            out = _C_any(out, d, True)
        return out if keepdim else _squeeze_dims(out, dims)
    return _C_any(input) if dim is None else _C_any(input, dim, keepdim)


def _squeeze_dims(t, dims):
    for d in sorted(dims, reverse=True):
        t = _squeeze_one(t, d)
    return t


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """torch.prod, with dtype= (the input converted first, as torch)."""
    if dtype is not None:
        input = input.to(dtype)
    return _C_prod(input) if dim is None else _C_prod(input, dim, keepdim)


def clamp(input, min=None, max=None):
    """torch.clamp: number bounds (one pass), or tensor bounds
    (aten.clamp.Tensor: maximum with min, then minimum with max,
    broadcast)."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is None and max is None:
            raise ValueError("[clamp] at least one of 'min' or 'max' must "
                             "not be None")
        out = input
        if min is not None:
            out = _C.maximum(out, min if isinstance(min, Tensor)
                             else _C.full_like(out, min))
        if max is not None:
            out = _C.minimum(out, max if isinstance(max, Tensor)
                             else _C.full_like(out, max))
        return out
    return _C_clamp(input, min, max)


def install(ns):
    for name in ("any", "prod", "clamp"):
        ns[name] = globals()[name]
    Tensor.any = lambda self, dim=None, keepdim=False: any(self, dim, keepdim)
    Tensor.prod = lambda self, dim=None, keepdim=False, *, dtype=None: prod(
        self, dim, keepdim, dtype=dtype)
    Tensor.clamp = lambda self, min=None, max=None: clamp(self, min, max)
    Tensor.squeeze = lambda self, dim=None: squeeze(self, dim)
    ns["clip"] = clamp
    for name in ("matrix_exp", "i0", "squeeze", "flipud", "fliplr", "column_stack",
                 "atleast_3d", "dstack", "tensor_split", "hsplit", "vsplit",
                 "dsplit", "cartesian_prod", "tril_indices", "triu_indices",
                 "block_diag", "diag_embed", "diagflat", "vander", "isclose",
                 "clamp_min", "clamp_max", "floor_divide", "fmax", "fmin",
                 "float_power", "heaviside", "deg2rad", "rad2deg", "angle",
                 "positive", "ldexp", "frexp", "nextafter", "logit", "sinc",
                 "diff", "nanmean", "dist", "renorm", "trapezoid", "trapz",
                 "cumulative_trapezoid", "cov", "corrcoef", "where",
                 "is_floating_point", "is_complex", "is_nonzero",
                 "result_type", "get_default_dtype", "set_default_dtype",
                 "finfo", "iinfo"):
        ns[name] = globals()[name]
    for name in ("isclose", "clamp_min", "clamp_max", "floor_divide", "fmax",
                 "fmin", "float_power", "heaviside", "deg2rad", "rad2deg",
                 "diff", "nanmean", "dist", "renorm", "logit", "sinc",
                 "tensor_split", "hsplit", "vsplit",
                 "diag_embed", "angle", "positive", "ldexp", "frexp"):
        fn = globals()[name]
        if not hasattr(Tensor, name):
            setattr(Tensor, name, lambda self, *a, _f=fn, **k: _f(self, *a, **k))
    Tensor.type_as = _type_as
    Tensor.new_tensor = _new_tensor
    Tensor.index_fill = _index_fill


# ---- Tensor methods and division modes
_div = _C.div


def div(input, other, *, rounding_mode=None):
    """torch.div: true division, or rounded 'trunc' / 'floor'."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode != "trunc":
        raise ValueError("div expected rounding_mode to be one of None, "
                         f"'trunc', or 'floor' but found '{rounding_mode}'")
    other = _t(other, input)
    if input.is_floating_point() or other.is_floating_point():
        return _C.trunc(_div(input, other))
    r = _C.fmod(input, other)
    return ((input - r).to(_C.float64) / other.to(_C.float64)).to(
        _result_type(input, other))


def _unfold(self, dimension, size, step):
    """Tensor.unfold: windows of size along dimension every step, as a
    new last dim."""
    d = dimension % _b.max(self.dim(), 1)
    n = (self.shape[d] - size) // step + 1
    if n <= 0:
        raise ValueError(f"[unfold] maximum size for tensor at dimension {d} "
                         f"is {self.shape[d]} but size is {size}")
    windows = [self.narrow(d, k * step, size) for k in range(n)]
    return _C.stack(windows, d).movedim(d + 1, -1)


def _compare_(name):
    def fn(self, other):
        return self.copy_(getattr(_C, name)(self, other).to(self.dtype))
    fn.__name__ = name + "_"
    return fn


def _apply_(self, callable):
    """Tensor.apply_: callable on each element, in place (CPU, no
    gradient)."""
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    return self.copy_(_C.tensor(vals, dtype=self.dtype).reshape(self.shape))


def msort(input):
    return _C.sort(input, 0, False)[0]


def ravel(input):
    return input.reshape(-1)


_round = _C.round


def round(input, *, decimals=0):
    """torch.round, with decimals: nearbyint(x * 10^d) / 10^d (d < 0:
    nearbyint(x / 10^-d) * 10^-d), torch's order."""
    if decimals == 0:
        return _round(input)
    if decimals > 0:
        p = 10.0 ** decimals
        return _round(input * p) / p
    p = 10.0 ** (-decimals)
    return _round(input / p) * p


def install_methods(ns):
    ns["div"] = ns["divide"] = div
    ns["msort"] = msort
    ns["ravel"] = ravel
    ns["round"] = round
    Tensor.div = lambda self, other, *, rounding_mode=None: div(
        self, other, rounding_mode=rounding_mode)
    Tensor.divide = Tensor.div
    Tensor.unfold = _unfold
    Tensor.apply_ = _apply_
    Tensor.msort = msort
    Tensor.ravel = ravel
    Tensor.round = lambda self, *, decimals=0: round(self, decimals=decimals)
    Tensor.true_divide = lambda self, other: _div(self, other)
    Tensor.clip = lambda self, min=None, max=None: clamp(self, min, max)
    Tensor.lerp_ = lambda self, end, weight: self.copy_(_C.lerp(self, end, weight))
    # The // and % operators (torch.floor_divide and torch.remainder).
    Tensor.__floordiv__ = floor_divide
    Tensor.__rfloordiv__ = lambda self, other: floor_divide(_t(other), self)
    Tensor.__ifloordiv__ = lambda self, other: self.copy_(
        floor_divide(self, other))
    Tensor.floor_divide_ = Tensor.__ifloordiv__
    Tensor.__mod__ = lambda self, other: _C.remainder(self, other)
    Tensor.__rmod__ = lambda self, other: _C.remainder(_t(other), self)
    Tensor.__imod__ = lambda self, other: self.copy_(_C.remainder(self, other))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Tensor, name + "_", _compare_(name))


def i0(input):
    """The modified Bessel function of the first kind, order 0: its power
    series sum ((x/2)^2k / k!^2) in float64 for |x| <= 50 (110 terms,
    all positive), and the asymptotic series e^|x| / sqrt(2 pi |x|)
    sum ((2k-1)!!^2 / (k! 8^k |x|^k)) (16 terms) above; rounded to input's
    dtype."""
    x = (input if input.is_floating_point() else input.to(_C.float32))
    a = x.to(_C.float64).abs()
    q = (a * 0.5) * (a * 0.5)
    term = _C.ones_like(a)
    series = _C.ones_like(a)
    for k in range(1, 110):
        term = term * q / float(k * k)
        series = series + term
    big = a.clamp(min=50.0)
    r = 1.0 / big
    coeffs = [1.0]
    for k in range(1, 16):
        coeffs.append(coeffs[-1] * (2 * k - 1) ** 2 / (8 * k))
    poly = _C.zeros_like(a)
    for c in reversed(coeffs):
        poly = poly * r + c
    # e^a split in two halves so that a near 710 does not overflow early
    half = _C.exp(big * 0.5)
    asym = (half / _C.sqrt(big * (2 * _math.pi))) * half * poly
    return _C.where(a <= 50.0, series, asym).to(x.dtype)
