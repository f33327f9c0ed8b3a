"""torch names that are another spelling of what ditto has: in-place
function forms (torch.sin_(x)), comparison and linear-algebra aliases
(torch.greater, torch.inverse, Tensor.det), nn.functional's functions at
the top level (torch.cosine_similarity), small functions made of others
(broadcast_tensors, isin, logaddexp2, the window functions, rrelu,
alpha_dropout, prelu) and the modules over them (PReLU, RReLU,
AlphaDropout, Dropout1d/3d, KLDivLoss, ...). Each follows torch 1.13's
documented semantics; what ditto cannot do raises."""
import builtins
import itertools
import math
import sys

from . import _C

Tensor = _C.Tensor


def _D():
    """The ditto package (its Python-level functions too), at call time."""
    return sys.modules[__package__]


def _t(x):
    return x if isinstance(x, Tensor) else _D().tensor(x)


# ---- top-level functions
INPLACE = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ "
    "asin_ asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ "
    "cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ expm1_ fix_ floor_ frac_ log10_ "
    "log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ "
    "reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ "
    "square_ tan_ tanh_ trunc_ xlogy_ i0_ ldexp_ index_put_ "
    "detach_ addmv_ dropout_").split()


def _inplace(name):
    def f(input, *args, **kwargs):
        if name == "dropout_":
            from .nn import functional as F
            return input.copy_(F.dropout(input, *args, **kwargs))
        return getattr(input, name)(*args, **kwargs)
    f.__name__ = name
    return f


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes: the shape all of them broadcast to."""
    from ._size import Size
    out = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = max(len(out), len(shape))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(shape)) + list(shape)
        for i in range(n):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(
                    f"Shape mismatch: objects cannot be broadcast to a "
                    f"single shape.  Mismatch is between {a[i]} and {b[i]} "
                    f"at dimension {i}")
            a[i] = b[i] if a[i] == 1 else a[i]
        out = a
    return Size(out)


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    e = _t(elements)
    s = _t(test_elements).reshape(-1)
    hit = (e.unsqueeze(-1) == s).any(-1) if s.numel() else \
        _D().zeros(tuple(e.shape), dtype=_D().bool)
    return hit.logical_not() if invert else hit


def logaddexp2(input, other):
    """log2(2^a + 2^b), as max + log2(1 + 2^-|a - b|)."""
    other = _t(other)
    m = _D().maximum(input, other)
    d = (input - other).abs()
    r = m + _D().log2(1 + _D().exp2(-d))
    # Equal infinities: the difference is NaN, the result the infinity.
    return _D().where(input == other, input + 1, r)


def rsub(input, other, alpha=1):
    return _t(other) - input * alpha if alpha != 1 else _t(other) - input


def vdot(input, other):
    return _D().dot(input, other)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    outer = _D().outer(vec1, vec2)
    outer = outer * alpha if alpha != 1 else outer
    if beta == 0:
        return outer + _D().zeros_like(input) * 0
    return (input * beta if beta != 1 else input) + outer


def chain_matmul(*matrices):
    from .linalg import multi_dot
    return multi_dot(list(matrices))


def combinations(input, r=2, with_replacement=False):
    n = input.shape[0]
    gen = (itertools.combinations_with_replacement if with_replacement
           else itertools.combinations)
    idx = list(gen(range(n), r))
    if not idx:
        return _D().empty((0, r) if r > 0 else (0,), dtype=input.dtype)
    cols = [_D().tensor([c[k] for c in idx]) for k in builtins.range(r)]
    return _D().stack([input.index_select(0, c) for c in cols], 1)


def _window(n, periodic, dtype, fill):
    dtype = dtype or _D().float32
    if n < 0:
        raise RuntimeError(f"window_length must be non-negative, got {n}")
    if n == 0:
        return _D().empty((0,), dtype=dtype)
    if n == 1:
        return _D().ones(1, dtype=dtype)
    m = n + 1 if periodic else n
    w = fill(m, dtype)
    return w[:n].contiguous() if periodic else w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *,
                   dtype=None, **_):
    return _window(window_length, periodic, dtype, lambda m, d: (
        _D().cos(_D().arange(m, dtype=d) * (2 * math.pi / (m - 1))) * -beta
        + alpha))


def hann_window(window_length, periodic=True, *, dtype=None, **_):
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype)


def blackman_window(window_length, periodic=True, *, dtype=None, **_):
    def fill(m, d):
        w = _D().arange(m, dtype=d) * (math.pi / (m - 1))
        return _D().cos(w * 4) * 0.08 - _D().cos(w * 2) * 0.5 + 0.42
    return _window(window_length, periodic, dtype, fill)


def bartlett_window(window_length, periodic=True, *, dtype=None, **_):
    def fill(m, d):
        w = _D().arange(m, dtype=d) * (2.0 / (m - 1))
        half = (m - 1) >> 1
        tail = w[half + 1:] * -1 + 2
        return _D().cat([w[:half + 1], tail])
    return _window(window_length, periodic, dtype, fill)


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension p."""
    p = int(p)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if p > 4096:  # p terms: a larger p is a mistake, not a dimension
        raise ValueError(f"[mvlgamma] p={p} is too large (at most 4096)")
    out = p * (p - 1) / 4 * math.log(math.pi)
    for j in builtins.range(p):
        out = out + _D().lgamma(input - j / 2)
    return out


def polygamma(n, input):
    if n == 0:
        return _D().digamma(input)
    raise NotImplementedError(
        f"[polygamma] n={n}: ditto has digamma (n=0) and its derivative "
        f"only through autograd")


def unique_consecutive(input, return_inverse=False, return_counts=False,
                       dim=None):
    if dim is not None:
        raise NotImplementedError("[unique_consecutive] dim= is not "
                                  "supported yet: flatten first")
    x = input.reshape(-1)
    if x.numel() == 0:
        out = [x]
        if return_inverse:
            out.append(_D().zeros(tuple(input.shape), dtype=_D().int64))
        if return_counts:
            out.append(_D().zeros((0,), dtype=_D().int64))
        return out[0] if len(out) == 1 else tuple(out)
    starts = _D().cat([_D().ones(1, dtype=_D().bool), x[1:] != x[:-1]])
    values = x[starts]
    out = [values]
    if return_inverse:
        out.append((_D().cumsum(starts.to(_D().int64), 0) - 1).reshape(
            tuple(input.shape)))
    if return_counts:
        pos = _D().nonzero(starts).reshape(-1)
        ends = _D().cat([pos[1:], _D().tensor([x.numel()])])
        out.append(ends - pos)
    return out[0] if len(out) == 1 else tuple(out)


def _svd(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with input = U diag(S) V^T (V, not V^T)."""
    from . import linalg
    u, s, vh = linalg.svd(input, full_matrices=not some)
    if not compute_uv:
        return (_D().zeros_like(u), s, _D().zeros_like(vh.mT))
    return (u, s, vh.mT)


def _qr(input, some=True):
    from . import linalg
    return linalg.qr(input, mode="reduced" if some else "complete")


def _logdet(input):
    from . import linalg
    sign, logabs = linalg.slogdet(input)
    return _D().where(sign < 0, logabs * float("nan"), logabs)


def _linalg(name):
    def f(input, *args, **kwargs):
        from . import linalg
        return getattr(linalg, name)(input, *args, **kwargs)
    f.__name__ = name
    return f


_PRINT_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3,
                   "linewidth": 80, "profile": "default", "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None,
                     linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: ditto prints with torch's default options
    only; the defaults are accepted, another value raises."""
    given = {"precision": precision, "threshold": threshold,
             "edgeitems": edgeitems, "linewidth": linewidth,
             "profile": profile, "sci_mode": sci_mode}
    for k, v in given.items():
        if v is not None and v != _PRINT_DEFAULTS[k]:
            raise NotImplementedError(
                f"[set_printoptions] {k}={v!r}: ditto prints with torch's "
                f"default options only ({k}={_PRINT_DEFAULTS[k]!r})")


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """Accepted as torch's: float32 products are always computed in
    float32 here (torch on CPU ignores it too)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}")
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


def set_flush_denormal(mode):
    """False: ditto does not flush denormals (its bits must not depend on
    the CPU's mode), torch's documented answer where flushing is off."""
    return False


def get_num_interop_threads():
    return 1


def set_num_interop_threads(num):
    if int(num) < 1:
        raise RuntimeError("Expected positive number of threads")


def install(ns):
    for name in INPLACE:
        if name not in ns and hasattr(Tensor, name) or name == "dropout_":
            ns.setdefault(name, _inplace(name))
    ns.setdefault("greater", _D().gt)
    ns.setdefault("greater_equal", _D().ge)
    ns.setdefault("less", _D().lt)
    ns.setdefault("less_equal", _D().le)
    ns.setdefault("not_equal", _D().ne)
    ns.setdefault("concatenate", _D().cat)
    ns.setdefault("det", _linalg("det"))
    ns.setdefault("inverse", _linalg("inv"))
    ns.setdefault("slogdet", _linalg("slogdet"))
    ns.setdefault("matrix_power", _linalg("matrix_power"))
    ns.setdefault("pinverse", _linalg("pinv"))
    ns.setdefault("cholesky", _linalg("cholesky"))
    ns.setdefault("logdet", _logdet)
    ns.setdefault("svd", _svd)
    ns.setdefault("qr", _qr)
    for f in (broadcast_shapes, broadcast_tensors, isin, logaddexp2, rsub,
              vdot, addr, chain_matmul, combinations, hamming_window,
              hann_window, blackman_window, bartlett_window, mvlgamma,
              polygamma, unique_consecutive, set_printoptions,
              set_float32_matmul_precision, get_float32_matmul_precision,
              set_flush_denormal, get_num_interop_threads,
              set_num_interop_threads):
        ns.setdefault(f.__name__, f)
    ns.setdefault("asarray", lambda obj, *, dtype=None, device=None,
                  copy=None: ns["as_tensor"](obj, dtype=dtype))
    ns.setdefault("detach", lambda input: input.detach())
    ns.setdefault("fill", lambda input, value: input.clone().fill_(value))
    ns.setdefault("real", lambda input: input)
    ns.setdefault("conj", lambda input: input)
    ns.setdefault("resolve_conj", lambda input: input)
    ns.setdefault("resolve_neg", lambda input: input)
    ns.setdefault("is_conj", lambda input: False)
    ns.setdefault("is_neg", lambda input: False)
    ns.setdefault("isreal", lambda input: _D().ones_like(input).to(_D().bool))
    ns.setdefault("is_signed", _is_signed)
    ns.setdefault("is_same_size", lambda a, b: tuple(a.shape) == tuple(
        b.shape))
    ns.setdefault("index_fill", lambda input, dim, index, value:
                  input.index_fill(dim, index, value))
    ns.setdefault("masked_scatter", lambda input, mask, source:
                  input.masked_scatter(mask, source))
    ns.setdefault("as_strided", lambda input, size, stride,
                  storage_offset=0: input.as_strided(size, stride,
                                                     storage_offset))
    from .nn import functional as F
    for name in ("cosine_similarity", "pairwise_distance", "pixel_shuffle",
                 "pixel_unshuffle", "embedding", "prelu", "rrelu",
                 "conv_transpose1d", "bilinear", "pdist", "channel_shuffle",
                 "alpha_dropout", "feature_alpha_dropout", "selu_", "celu_",
                 "threshold_", "rrelu_"):
        if hasattr(F, name):
            ns.setdefault(name, getattr(F, name))


def _is_signed(input):
    return input.dtype not in (_D().uint8, _D().bool)


def imag(input):
    raise RuntimeError("imag is not implemented for tensors with "
                       "non-complex dtypes.")


# ---- nn.functional
def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight per channel (dim 1)."""
    w = weight
    if weight.numel() != 1:
        if input.dim() < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. "
                f"Found parameter numbers = {weight.numel()} and channel "
                f"size = {input.shape[1] if input.dim() > 1 else 1}.")
        w = weight.reshape([-1] + [1] * (input.dim() - 2))
    return _D().where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False,
          inplace=False):
    """Randomized leaky ReLU: in training each element <= 0 (in order)
    draws its slope, a float64 uniform in [lower, upper] (torch's
    rrelu_with_noise: one 64-bit draw per such element), the product
    rounded once; (lower + upper) / 2 otherwise."""
    D = _D()
    if training:
        neg = (input <= 0).reshape(-1)
        slopes = D.empty((int(neg.sum()),), dtype=D.float64).uniform_(
            lower, upper)
        flat = input.reshape(-1)
        scaled = D.ones(flat.shape, dtype=D.float64)
        if slopes.numel():
            scaled = scaled.masked_scatter(neg, slopes)
        out = (flat.to(D.float64) * scaled).to(input.dtype).reshape(
            tuple(input.shape))
    else:
        out = _D().where(input >= 0, input, input * ((lower + upper) / 2))
    return input.copy_(out) if inplace else out


def _alpha_dropout(input, p, training, feature):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, "
                         f"but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    if feature:
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
        noise = _D().empty(shape, dtype=input.dtype)
    else:
        noise = _D().empty(tuple(input.shape), dtype=input.dtype)
    noise.bernoulli_(1 - p)
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = (noise - 1) * (alpha * a) + alpha * a * p
    return input * (noise * a) + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    out = _alpha_dropout(input, p, training, False)
    return input.copy_(out) if inplace and out is not input else out


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    out = _alpha_dropout(input, p, training, True)
    return input.copy_(out) if inplace and out is not input else out


def bilinear(input1, input2, weight, bias=None):
    """x1^T W x2 + b for each output feature: W [out, in1, in2]."""
    y = _D().einsum("...i,oij,...j->...o", input1, weight, input2)
    return y + bias if bias is not None else y


def channel_shuffle(input, groups):
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} "
            f"channels and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(
        1, 2).reshape((n, c) + rest)


def _inplace_activation(name):
    def f(input, *args, **kwargs):
        from .nn import functional as F
        return input.copy_(getattr(F, name)(input, *args, **kwargs))
    f.__name__ = name + "_"
    return f


def install_functional(F):
    for f in (prelu, rrelu, alpha_dropout, feature_alpha_dropout, bilinear,
              channel_shuffle):
        if not hasattr(F, f.__name__):
            setattr(F, f.__name__, f)
    for name in ("relu", "elu", "selu", "celu", "leaky_relu", "hardtanh",
                 "threshold", "rrelu"):
        if not hasattr(F, name + "_"):
            setattr(F, name + "_", _inplace_activation(name))


# ---- the draws torch 1.13 makes one element at a time, in order, from
# float64 distributions (cpu_serial_kernel), each cast to the tensor's dtype
def _serial_uniform(n, generator):
    return _D().empty((n,), dtype=_D().float64).uniform_(
        0.0, 1.0, generator=generator)


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """median + sigma * tan(pi (u - 1/2)), u a float64 uniform: float32
    results are torch's bits; float64 within 1e-14 relative (ditto's tan,
    and torch's compiler contracting the last multiply-add)."""
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found "
                           f"sigma={sigma}")
    u = _serial_uniform(self.numel(), generator)
    v = _D().tan((u - 0.5) * math.pi) * sigma + median
    return self.copy_(v.reshape(tuple(self.shape)))


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """exp of torch's serial float64 normal (its cached second Box-Muller
    sample included): normal_ on blocks of 15 float64 elements takes that
    path, so the stream is torch's; float32 results are torch's bits."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found "
                           f"std={std}")
    n = self.numel()
    parts = [_D().empty((min(15, n - i),), dtype=_D().float64).normal_(
        mean, std, generator=generator) for i in range(0, n, 15)]
    v = _D().exp(_D().cat(parts)) if parts else _D().empty(
        (0,), dtype=_D().float64)
    return self.copy_(v.reshape(tuple(self.shape)))


def _geometric_(self, p, *, generator=None):
    """ceil(log(u) / log(1 - p)), u a float64 uniform: torch's bits."""
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got "
                           f"p={p}")
    u = _serial_uniform(self.numel(), generator)
    v = _D().ceil(_D().log(u) / math.log(1.0 - p))
    return self.copy_(v.reshape(tuple(self.shape)))


# ---- Tensor methods
def install_methods():
    from . import linalg

    def method(name, fn):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    method("cauchy_", _cauchy_)
    method("log_normal_", _log_normal_)
    method("geometric_", _geometric_)
    method("greater", lambda self, other: _D().gt(self, other))
    method("greater_equal", lambda self, other: _D().ge(self, other))
    method("less", lambda self, other: _D().lt(self, other))
    method("less_equal", lambda self, other: _D().le(self, other))
    method("not_equal", lambda self, other: _D().ne(self, other))
    method("subtract", lambda self, other, alpha=1: _D().sub(
        self, other, alpha=alpha))
    method("multiply", lambda self, other: _D().mul(self, other))
    method("det", lambda self: linalg.det(self))
    method("inverse", lambda self: linalg.inv(self))
    method("slogdet", lambda self: linalg.slogdet(self))
    method("logdet", _logdet)
    method("matrix_power", lambda self, n: linalg.matrix_power(self, n))
    method("matrix_exp", lambda self: linalg.matrix_exp(self))
    method("pinverse", lambda self, rcond=1e-15: linalg.pinv(self))
    method("cholesky", lambda self, upper=False: (
        linalg.cholesky(self).mT if upper else linalg.cholesky(self)))
    method("svd", _svd)
    method("qr", _qr)
    method("cross", lambda self, other, dim=None: linalg.cross(
        self, other, dim=-1 if dim is None else dim))
    method("fliplr", lambda self: self.flip(1))
    method("flipud", lambda self: self.flip(0))
    method("diagflat", lambda self, offset=0: _D().diag(
        self.reshape(-1), offset))
    method("logaddexp2", logaddexp2)
    method("isin", lambda self, test_elements, **k: isin(
        self, test_elements, **k))
    method("is_signed", _is_signed)
    method("is_nonzero", lambda self: bool(self.item() != 0))
    method("is_same_size", lambda self, other: tuple(self.shape) == tuple(
        other.shape))
    method("is_complex", lambda self: False)
    method("is_conj", lambda self: False)
    method("is_neg", lambda self: False)
    method("isreal", lambda self: _D().ones_like(self).to(_D().bool))
    method("get_device", lambda self: -1)
    method("narrow_copy", lambda self, dim, start, length: self.narrow(
        dim, start, length).clone())
    method("vdot", vdot)
    method("addr", lambda self, vec1, vec2, *, beta=1, alpha=1: addr(
        self, vec1, vec2, beta=beta, alpha=alpha))
    method("unique_consecutive", unique_consecutive)
    method("conj", lambda self: self)
    method("resolve_conj", lambda self: self)
    method("resolve_neg", lambda self: self)
    method("adjoint", lambda self: self.transpose(-2, -1))
    method("prelu", prelu)
    method("index_fill_", lambda self, dim, index, value: self.copy_(
        self.index_fill(dim, index, value)))
    method("masked_scatter_", lambda self, mask, source: self.copy_(
        self.masked_scatter(mask, source)))
    for name, op in (("greater_", "gt_"), ("greater_equal_", "ge_"),
                     ("less_", "lt_"), ("less_equal_", "le_"),
                     ("not_equal_", "ne_")):
        if hasattr(Tensor, op):
            method(name, getattr(Tensor, op))
    if not hasattr(Tensor, "real"):
        Tensor.real = property(lambda self: self)
    if not hasattr(Tensor, "H"):
        Tensor.H = property(lambda self: self.transpose(-2, -1)
                            if self.dim() == 2 else self)
        Tensor.mH = property(lambda self: self.transpose(-2, -1))
    if not hasattr(Tensor, "is_cuda"):
        Tensor.is_cuda = property(lambda self: False)


# ---- torch.device
class device(str):
    """torch.device: a device's type and index. A str subclass ("cpu",
    "vulkan:0"), so everything that takes a device string takes it;
    equal to its string. torch.device("cuda") can be made, as in torch
    without CUDA; a tensor asked to go there is refused (DeviceError)."""

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            return type if index is None else device(type.type, index)
        if isinstance(type, int):  # torch.device(0): a CUDA ordinal
            type, index = "cuda", type
        text = str(type)
        if ":" in text:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index "
                                   f"because index was passed explicitly: "
                                   f"{text}")
            kind, _, idx = text.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{text}'")
            kind, index = kind, int(idx)
        else:
            kind = text
        if kind not in ("cpu", "cuda", "vulkan", "mps", "meta", "xpu"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, vulkan, mps, meta, xpu device "
                f"type at start of device string: {text}")
        if index is not None and int(index) < 0:
            raise RuntimeError(f"Device index must not be negative, got "
                               f"{index}")
        s = kind if index is None else f"{kind}:{int(index)}"
        obj = super().__new__(cls, s)
        obj._type = kind
        obj._index = None if index is None else int(index)
        return obj

    @property
    def type(self):
        return self._type

    @property
    def index(self):
        return self._index

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return str.__str__(self)

    def __eq__(self, other):
        return str.__eq__(self, str(other)) if isinstance(
            other, (str, device)) else NotImplemented

    def __hash__(self):
        return str.__hash__(self)

    def __reduce__(self):
        return (device, (str(self),))


_LEGACY = {"float32": "FloatTensor", "float64": "DoubleTensor",
           "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
           "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
           "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient with a scalar spacing: central differences inside,
    one-sided (first order) or second-order differences at the edges."""
    D = _D()
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and "
                           "edge_order=2.")
    dims = list(range(input.dim())) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    spacings = spacing if isinstance(spacing, (list, tuple)) else \
        [spacing] * len(dims)
    x = input if input.is_floating_point() else input.to(D.float32)
    out = []
    for d, h in zip(dims, spacings):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least "
                "edge_order+1")
        inner = (x.narrow(d, 2, n - 2) - x.narrow(d, 0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (x.narrow(d, 1, 1) - x.narrow(d, 0, 1)) / h
            last = (x.narrow(d, n - 1, 1) - x.narrow(d, n - 2, 1)) / h
        else:
            first = (x.narrow(d, 0, 1) * -1.5 + x.narrow(d, 1, 1) * 2
                     - x.narrow(d, 2, 1) * 0.5) / h
            last = (x.narrow(d, n - 3, 1) * 0.5 - x.narrow(d, n - 2, 1) * 2
                    + x.narrow(d, n - 1, 1) * 1.5) / h
        out.append(D.cat([first, inner, last], d))
    return tuple(out)


def install_device(ns):
    ns["device"] = device
    ns.setdefault("gradient", gradient)
    ns.setdefault("poisson", poisson)
    raw = Tensor.device
    if isinstance(raw, property):
        getter = raw.fget
        made = {}  # one device object per device string: no parse per read

        def tensor_device(self):
            s = getter(self)
            d = made.get(s)
            if d is None:
                d = made.setdefault(s, device(s))
            return d
        Tensor.device = property(tensor_device)
    typed = Tensor.type

    def type_(self, dtype=None, non_blocking=False, **kwargs):
        """Tensor.type(): the legacy type name ("ditto.FloatTensor");
        type(dtype or "torch.DoubleTensor"): the tensor in that dtype."""
        if dtype is None:
            return "ditto." + _LEGACY[str(self.dtype).split(".")[-1]]
        if isinstance(dtype, str):
            name = dtype.split(".")[-1]
            for k, v in _LEGACY.items():
                if v == name:
                    return self.to(getattr(_D(), k))
            raise ValueError(f"invalid type: '{dtype}'")
        return typed(self, dtype)
    Tensor.type = type_


def poisson(input, generator=None):
    """torch.poisson: torch 1.13's sampler, element by element in order
    (Knuth's product of uniforms below 10, Hoermann's transformed rejection
    from 10), its float64 uniforms from the generator and its arithmetic in
    the tensor's dtype (NumPy's float32 functions stand in for glibc's: a
    draw differs only where the two round a log differently)."""
    import numpy as np
    D = _D()
    if not input.is_floating_point():
        raise RuntimeError(f"\"poisson_cpu\" not implemented for "
                           f"'{str(input.dtype).split('.')[-1]}'")
    S = np.float32 if input.dtype != D.float64 else np.float64
    lam = input.detach().to(D.float64 if S is np.float64 else D.float32)
    rates = lam.reshape(-1).tolist()
    buf = D.empty((1,), dtype=D.float64)

    def uniform():
        return buf.uniform_(0.0, 1.0, generator=generator).item()
    from math import lgamma
    out = []
    with np.errstate(all="ignore"):
        for r in rates:
            lam_s = S(r)
            if lam_s < 0 or r != r:
                raise RuntimeError("invalid Poisson rate, expected rate to "
                                   "be non-negative")
            if lam_s >= 10:
                slam = np.sqrt(lam_s)
                loglam = np.log(lam_s)
                b = S(0.931) + S(2.53) * slam
                a = S(-0.059) + S(0.02483) * b
                invalpha = S(1.1239) + S(1.1328) / (b - S(3.4))
                vr = S(0.9277) - S(3.6224) / (b - S(2))
                while True:
                    U = S(uniform() - 0.5)
                    V = S(uniform())
                    us = S(0.5) - np.abs(U)
                    k = int(np.floor((S(2) * a / us + b) * U + lam_s + S(0.43)))
                    if us >= S(0.07) and V <= vr:
                        break
                    if k < 0 or (us < S(0.013) and V > us):
                        continue
                    if (np.log(V) + np.log(invalpha) - np.log(a / (us * us) + b)
                            <= -lam_s + S(k) * loglam - S(lgamma(float(S(k) + S(1))))):
                        break
                out.append(float(max(k, 0)))
            elif lam_s == 0:
                out.append(0.0)
            else:
                enlam = np.exp(-lam_s)
                x, prod = 0, S(1.0)
                while True:
                    prod = S(prod * S(uniform()))
                    if prod > enlam:
                        x += 1
                    else:
                        break
                out.append(float(x))
    return D.tensor(out, dtype=input.dtype).reshape(tuple(input.shape))


# ---- in-place forms of Tensor methods torch has and ditto spells out of
# place: self.copy_(self.op(...)), refusing what torch refuses (a floating
# result into an integer tensor); shape-changing ones are views, not here.
INPLACE_METHODS = (
    "absolute addbmm addmm addmv addr arccos arccosh arcsin arcsinh arctan "
    "arctan2 arctanh baddbmm bitwise_and bitwise_not bitwise_or bitwise_xor "
    "clamp_max clamp_min clip deg2rad divide erf erfinv fix float_power "
    "heaviside ldexp logical_and logical_not logical_or logical_xor logit "
    "multiply negative rad2deg renorm sinc subtract tril triu true_divide "
    "xlogy gcd lcm i0 nextafter mvlgamma polygamma").split()


def _inplace_method(name):
    def f(self, *args, **kwargs):
        out = getattr(self, name)(*args, **kwargs)
        if out.is_floating_point() and not self.is_floating_point():
            raise RuntimeError(f"result type {str(out.dtype).split('.')[-1]}"
                               f" can't be cast to the desired output type "
                               f"{str(self.dtype).split('.')[-1]}")
        return self.copy_(out)
    f.__name__ = name + "_"
    return f


def _int_binary(fn, name):
    def f(input, other):
        import numpy as np
        D = _D()
        other = other if isinstance(other, Tensor) else D.tensor(other)
        if input.is_floating_point() or other.is_floating_point():
            raise RuntimeError(f"\"{name}_cpu\" not implemented for "
                               f"'{str(input.dtype).split('.')[-1]}'")
        a, b = D.broadcast_tensors(input, other)
        r = fn(np.asarray(a.contiguous().tolist(), dtype=np.int64),
               np.asarray(b.contiguous().tolist(), dtype=np.int64))
        return D.tensor(r.tolist(), dtype=D.promote_types(
            input.dtype, other.dtype)).reshape(tuple(a.shape))
    f.__name__ = name
    return f


def _fill_diagonal_(self, fill_value, wrap=False):
    """torch's fill_diagonal_: the main diagonal of a matrix (every dim
    equal above 2-d); a tall matrix with wrap=True restarts it every
    columns + 1 rows."""
    D = _D()
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    if self.dim() == 2:
        rows, cols = self.shape
        step = cols + 1
        count = n
        if wrap and rows > cols:
            count = (rows * cols + cols) // step
        flat_idx = [k * step for k in range(count) if k * step < rows * cols]
    else:
        step = sum(int(self.numel() // (n ** (d + 1))) for d in
                   range(self.dim()))
        flat_idx = [k * step for k in range(n)]
    w = self.contiguous().reshape(-1).clone()
    w[D.tensor(flat_idx, dtype=D.int64)] = fill_value
    return self.copy_(w.reshape(tuple(self.shape)))


def install_more(ns):
    import numpy as np
    ns.setdefault("gcd", _int_binary(np.gcd, "gcd"))
    ns.setdefault("lcm", _int_binary(np.lcm, "lcm"))
    D = _D()
    for name in ("gcd", "lcm", "cov", "corrcoef", "i0", "nextafter",
                 "mvlgamma", "polygamma", "bitwise_left_shift",
                 "bitwise_right_shift"):
        fn = ns.get(name)
        if fn is not None and not hasattr(Tensor, name):
            if name == "polygamma":  # torch: x.polygamma(n)
                setattr(Tensor, name, lambda self, n, _f=fn: _f(n, self))
            else:
                setattr(Tensor, name, lambda self, *a, _f=fn, **k:
                        _f(self, *a, **k))
    for name in INPLACE_METHODS:
        if hasattr(Tensor, name) and not hasattr(Tensor, name + "_"):
            setattr(Tensor, name + "_", _inplace_method(name))
    if not hasattr(Tensor, "fill_diagonal_"):
        Tensor.fill_diagonal_ = _fill_diagonal_
    if not hasattr(Tensor, "detach_"):
        Tensor.detach_ = lambda self: self.requires_grad_(False) \
            if self.is_leaf else self.detach()
    ns.setdefault("is_inference_mode_enabled", lambda: False)
    ns.setdefault("is_autocast_enabled", lambda: False)  # CUDA's: none
    ns.setdefault("typename", lambda obj: obj.type() if isinstance(
        obj, Tensor) else type(obj).__name__)
    ns.setdefault("kaiser_window", kaiser_window)
    ns.setdefault("range", lambda start=0, end=None, step=1, *, dtype=None,
                  **_: D.arange(start, end + step / 2 if step > 0 else
                                end + step / 2, step,
                                dtype=dtype or D.float32))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None,
                  **_):
    """torch.kaiser_window: I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) /
    I0(beta), N the length (+1 when periodic) - 1."""
    D = _D()
    dtype = dtype or D.float32
    if window_length == 0:
        return D.empty((0,), dtype=dtype)
    if window_length == 1:
        return D.ones(1, dtype=dtype)
    m = window_length + 1 if periodic else window_length
    n = D.arange(m, dtype=dtype)
    alpha = (m - 1) / 2.0
    w = D.i0(beta * D.sqrt(1 - ((n - alpha) / alpha) ** 2)) / D.i0(
        D.tensor(beta, dtype=dtype))
    return w[:window_length].contiguous()


def _legacy_new(self, *args, **kwargs):
    """Tensor.new: the legacy constructor in self's dtype: new() empty,
    new(2, 3) uninitialized (empty's fill rules), new([1, 2]) from data,
    new(tensor) that tensor's values."""
    D = _D()
    if not args:
        return D.empty((0,), dtype=self.dtype)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(self.dtype).clone()
    from ._size import Size
    if len(args) == 1 and isinstance(args[0], Size):
        return D.empty(tuple(args[0]), dtype=self.dtype)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return D.tensor(list(args[0]), dtype=self.dtype)  # data, as torch
    return D.empty(tuple(args), dtype=self.dtype)


def install_last():
    def method(name, fn):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    method("new", _legacy_new)
    method("share_memory_", lambda self: self)  # one process's memory
    method("is_shared", lambda self: False)
    method("is_pinned", lambda self: False)
    method("is_inference", lambda self: False)
    method("pin_memory", lambda self, device=None: (_ for _ in ()).throw(
        RuntimeError("Cannot access accelerator device when none is "
                     "available.")))


def install_modules(ditto_mod):
    """torch's deprecated and alias spellings in the submodules."""
    import warnings
    D = ditto_mod
    init = D.nn.init
    for name in ("uniform", "normal", "constant", "xavier_uniform",
                 "xavier_normal", "kaiming_uniform", "kaiming_normal",
                 "orthogonal", "sparse", "dirac", "eye"):
        fn = getattr(init, name + "_", None)
        if fn is not None and not hasattr(init, name):
            def deprecated(*args, _fn=fn, _name=name, **kwargs):
                warnings.warn(f"nn.init.{_name} is now deprecated in favor "
                              f"of nn.init.{_name}_.", stacklevel=2)
                return _fn(*args, **kwargs)
            setattr(init, name, deprecated)
    utils = D.nn.utils
    if not hasattr(utils, "clip_grad_norm"):
        utils.clip_grad_norm = utils.clip_grad_norm_
    ag = D.autograd
    if not hasattr(ag, "Variable"):
        def Variable(data, requires_grad=False, volatile=False):
            """The deprecated torch.autograd.Variable: the tensor itself."""
            return data.requires_grad_(requires_grad) if requires_grad \
                else data
        ag.Variable = Variable
    if not hasattr(ag, "inference_mode"):
        ag.inference_mode = D.inference_mode
    la = D.linalg
    for name, fn in (
            ("matmul", D.matmul),
            ("diagonal", lambda A, *, offset=0, dim1=-2, dim2=-1:
             D.diagonal(A, offset, dim1, dim2)),
            ("vecdot", lambda x, y, *, dim=-1: (x * y).sum(dim)),
            ("vander", lambda x, *, N=None: D.stack(
                [x ** k for k in range(x.shape[-1] if N is None else N)],
                -1))):
        if not hasattr(la, name):
            setattr(la, name, fn)
    sp = D.special
    for name, fn in (
            ("xlog1py", lambda input, other: D.where(
                _t(input) == 0, _t(input) * 0, _t(input) * D.log1p(
                    _t(other)))),
            ("multigammaln", lambda input, p: mvlgamma(input, p)),
            ("polygamma", polygamma),
            ("i0e", lambda input: D.exp(-input.abs()) * D.i0(input))):
        if not hasattr(sp, name):
            setattr(sp, name, fn)


def _is_int(t):
    return isinstance(t, Tensor) and not t.is_floating_point() and \
        t.dtype != _C.bool


def _int_matmul(a, b, name):
    """torch's integer products: exact sums of products in int64 (wrapping
    as torch's), in the operands' promoted dtype."""
    D = _D()
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to {name} need to be at least "
                           f"1D, but they are {a.dim()}D and {b.dim()}D")
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({a2.shape[-2]}x{a2.shape[-1]} and "
            f"{b2.shape[-2]}x{b2.shape[-1]})")
    prod = (a2.to(D.int64).unsqueeze(-1) * b2.to(D.int64).unsqueeze(-3))
    out = prod.sum(-2)
    if a.dim() == 1:
        out = out.squeeze(-2)
    if b.dim() == 1:
        out = out.squeeze(-1)
    return out.to(D.promote_types(a.dtype, b.dtype))


def _int_product(fn, name, dims=None):
    def run(input, other, *args, **kwargs):
        if _is_int(input) and _is_int(other) and not args and not kwargs:
            if dims is not None and (input.dim() != dims or
                                     other.dim() != dims):
                raise RuntimeError(f"{name}: expected {dims}-D tensors, got "
                                   f"{input.dim()}-D and {other.dim()}-D")
            return _int_matmul(input, other, name)
        return fn(input, other, *args, **kwargs)
    run.__name__ = name
    run.__doc__ = fn.__doc__
    return run


def install_int_products(ns):
    for name, dims in (("matmul", None), ("mm", 2), ("bmm", 3)):
        fn = ns.get(name)
        if fn is not None:
            ns[name] = _int_product(fn, name, dims)
        meth = getattr(Tensor, name, None)
        if meth is not None:
            setattr(Tensor, name, _int_product(meth, name, dims))
    Tensor.__matmul__ = _int_product(Tensor.__matmul__, "matmul")
