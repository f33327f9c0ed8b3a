"""ditto.distributions (torch.distributions): Normal, Categorical,
Bernoulli and Uniform with torch 1.13's parameterizations, the same draws
(sample and rsample go through normal_, multinomial, bernoulli and rand as
torch's do, so the same seed gives the same samples) and log_prob,
entropy, mean, variance; kl_divergence for pairs of the same family."""
import math

from .. import _C
from ..grad_mode import no_grad

Tensor = _C.Tensor


def _as(x, like=None):
    if isinstance(x, Tensor):
        return x
    return _C.tensor(float(x), dtype=like.dtype if like is not None else _C.float32)


def _shape(sample_shape, batch_shape, event_shape=()):
    return list(sample_shape) + list(batch_shape) + list(event_shape)


class Distribution:
    has_rsample = False

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return ()

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        with no_grad():
            return self.rsample(sample_shape)

    def sample_n(self, n):
        return self.sample((n,))

    def __repr__(self):
        return type(self).__name__ + "()"


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = _as(loc), _as(scale)
        shape = list((loc + scale).shape)
        self.loc = loc.expand(shape)
        self.scale = scale.expand(shape)
        self._batch_shape = tuple(shape)

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return self.scale.pow(2)

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape, self._batch_shape)
        from .. import normal
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = _shape(sample_shape, self._batch_shape)
        eps = _C.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = _as(value, self.loc)
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - \
            math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + _C.erf((_as(value, self.loc) - self.loc) *
                                 self.scale.reciprocal() / math.sqrt(2)))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + _C.log(self.scale)

    def __repr__(self):
        return f"Normal(loc: {self.loc}, scale: {self.scale})"


class Categorical(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, "
                             "but not both.")
        if probs is not None:
            self.probs = probs / probs.sum([probs.dim() - 1], True)
            eps = 1.1920928955078125e-07 if probs.dtype == _C.float32 \
                else 2.220446049250313e-16
            clamped = self.probs.clamp(eps, 1 - eps)
            self.logits = clamped.log()
        else:
            self.logits = logits - logits.logsumexp([logits.dim() - 1], True)
            self.probs = _C.softmax(self.logits, -1)
        self._param = self.probs
        self._num_events = self.probs.shape[-1]
        self._batch_shape = tuple(self.probs.shape[:-1])

    @property
    def mean(self):
        return _C.full(list(self._batch_shape), float("nan"))

    @property
    def variance(self):
        return _C.full(list(self._batch_shape), float("nan"))

    def sample(self, sample_shape=()):
        n = 1
        for s in sample_shape:
            n *= s
        probs_2d = self.probs.reshape(-1, self._num_events)
        with no_grad():
            samples_2d = _C.multinomial(probs_2d, n, True).t()
        return samples_2d.reshape(_shape(sample_shape, self._batch_shape))

    def log_prob(self, value):
        value = value.long().unsqueeze(-1)
        logits = self.logits
        if value.dim() > logits.dim() or list(value.shape[:-1]) != list(logits.shape[:-1]):
            lead = list((value[..., :1].to(logits.dtype) * 0 +
                         logits[..., :1]).shape[:-1])
            value = value.expand(lead + [1])
            logits = logits.expand(lead + [self._num_events])
        return logits.gather(-1, value).squeeze(-1)

    def entropy(self):
        lo = -3.4028234663852886e38 if self.logits.dtype == _C.float32 \
            else -1.7976931348623157e308
        logits = self.logits.clamp(min=lo)
        return -(logits * self.probs).sum([logits.dim() - 1])

    def enumerate_support(self, expand=True):
        values = _C.tensor(list(range(self._num_events)), dtype=_C.int64)
        values = values.reshape([-1] + [1] * len(self._batch_shape))
        if expand:
            values = values.expand([-1] + list(self._batch_shape))
        return values


class Bernoulli(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, "
                             "but not both.")
        if probs is not None:
            self.probs = _as(probs)
            eps = 1.1920928955078125e-07 if self.probs.dtype == _C.float32 \
                else 2.220446049250313e-16
            p = self.probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (-p).log1p()
        else:
            self.logits = _as(logits)
            self.probs = _C.sigmoid(self.logits)
        self._batch_shape = tuple(self.probs.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape, self._batch_shape)
        with no_grad():
            return _C.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        from ..nn.functional import binary_cross_entropy_with_logits
        value = _as(value, self.logits)
        logits = self.logits
        if list(value.shape) != list(logits.shape):
            both = value + logits * 0
            logits, value = logits.expand(both.shape), value.expand(both.shape)
        return -binary_cross_entropy_with_logits(logits, value,
                                                 reduction="none")

    def entropy(self):
        from ..nn.functional import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none")


class Uniform(Distribution):
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        low, high = _as(low), _as(high)
        shape = list((low + high).shape)
        self.low = low.expand(shape)
        self.high = high.expand(shape)
        self._batch_shape = tuple(shape)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = _shape(sample_shape, self._batch_shape)
        rand = _C.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        value = _as(value, self.low)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return _C.log(lb * ub) - _C.log(self.high - self.low)

    def entropy(self):
        return _C.log(self.high - self.low)


class Exponential(Distribution):
    """torch.distributions.Exponential: rsample = exponential_() / rate
    (torch's draws)."""
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        self.rate = _as(rate)
        self._batch_shape = tuple(self.rate.shape)

    mean = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))
    stddev = property(lambda self: self.rate.reciprocal())

    def rsample(self, sample_shape=()):
        shape = _shape(sample_shape, self._batch_shape)
        return _C.empty(shape, dtype=self.rate.dtype).exponential_() / \
            self.rate

    def log_prob(self, value):
        value = _as(value, self.rate)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        return 1 - _C.exp(-self.rate * _as(value, self.rate))

    def entropy(self):
        return 1.0 - _C.log(self.rate)


class Laplace(Distribution):
    """torch.distributions.Laplace: rsample draws u uniform in
    (eps - 1, 1) and gives loc - scale sign(u) log1p(-|u|) (torch's)."""
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = _as(loc), _as(scale)
        shape = list((loc + scale).shape)
        self.loc, self.scale = loc.expand(shape), scale.expand(shape)
        self._batch_shape = tuple(shape)

    mean = property(lambda self: self.loc)
    variance = property(lambda self: 2 * self.scale.pow(2))
    stddev = property(lambda self: math.sqrt(2) * self.scale)

    def rsample(self, sample_shape=()):
        from .. import finfo
        shape = _shape(sample_shape, self._batch_shape)
        eps = finfo(self.loc.dtype).eps
        u = _C.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * _C.log1p(-u.abs())

    def log_prob(self, value):
        value = _as(value, self.loc)
        return -_C.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        value = _as(value, self.loc)
        return 0.5 - 0.5 * (value - self.loc).sign() * _C.expm1(
            -(value - self.loc).abs() / self.scale)

    def entropy(self):
        return 1 + _C.log(2 * self.scale)


class LogNormal(Distribution):
    """torch.distributions.LogNormal: exp of Normal(loc, scale)."""
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.base_dist = Normal(loc, scale)
        self.loc, self.scale = self.base_dist.loc, self.base_dist.scale
        self._batch_shape = self.base_dist.batch_shape

    mean = property(lambda self: (self.loc + self.scale.pow(2) / 2).exp())
    variance = property(lambda self: (self.scale.pow(2).exp() - 1) * (
        2 * self.loc + self.scale.pow(2)).exp())

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape).exp()

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value):
        value = _as(value, self.loc)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def entropy(self):
        return self.base_dist.entropy() + self.loc


def kl_divergence(p, q):
    """KL(p || q) for two Normals, two Categoricals or two Bernoullis."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        var_ratio = (p.scale / q.scale).pow(2)
        t1 = ((p.loc - q.loc) / q.scale).pow(2)
        return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        t = p.probs * (p.logits - q.logits)
        t = t.masked_fill(q.probs == 0, float("inf"))
        t = t.masked_fill(p.probs == 0, 0.0)
        return t.sum([t.dim() - 1])
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        from ..nn.functional import softplus
        t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
        t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
        return t1 + t2
    raise NotImplementedError(f"kl_divergence({type(p).__name__}, "
                              f"{type(q).__name__}) is not implemented")
