"""ditto.special (torch.special): the special functions under torch's
names, over ditto's ops."""
from . import _C

erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
expm1 = _C.expm1
exp2 = _C.exp2
log1p = _C.log1p
logsumexp = _C.logsumexp
xlogy = _C.xlogy
gammaln = _C.lgamma
digamma = _C.digamma
psi = _C.digamma
expit = _C.sigmoid
round = _C.round


def log_softmax(input, dim, *, dtype=None):
    return _C.log_softmax(input if dtype is None else input.to(dtype), dim)


def softmax(input, dim, *, dtype=None):
    return _C.softmax(input if dtype is None else input.to(dtype), dim)


def logit(input, eps=None):
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given."""
    x = input if eps is None else input.clamp(eps, 1 - eps)
    return _C.log(x / (1 - x))


def ndtr(input):
    """The standard normal CDF, erfc(-x / sqrt(2)) / 2."""
    return _C.erfc(input * -0.7071067811865476) * 0.5


def entr(input):
    """-x log x elementwise (0 at 0, -inf below 0)."""
    out = _C.where(input > 0, -input * _C.log(input.clamp(min=1e-300)),
                   input * 0)
    return _C.where(input < 0, input * 0 - float("inf"), out)


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0."""
    px = input * 3.141592653589793
    return _C.where(input == 0, input * 0 + 1, _C.sin(px) / px)


def i0(input):
    """The modified Bessel function I0 (ditto.i0)."""
    from . import i0 as _i0
    return _i0(input)
