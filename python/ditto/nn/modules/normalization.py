"""BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm and GroupNorm (torch.nn's): running
statistics as buffers (running_mean, running_var, num_batches_tracked)."""
import numbers

from ... import _C
from ...grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class _BatchNorm(Module):
    _ranks = ()
    _rank_text = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__()
        if num_features <= 0:
            raise ValueError(f"[{type(self).__name__}] num_features must be "
                             f"positive, got {num_features}")
        dtype = dtype or _C.float32
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_C.empty(num_features, dtype=dtype))
            self.bias = Parameter(_C.empty(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean",
                                 _C.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var",
                                 _C.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 _C.tensor(0, dtype=_C.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        if input.dim() not in self._ranks:
            raise ValueError(f"expected {self._rank_text} input (got "
                             f"{input.dim()}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and \
                self.running_var is None
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(
            input, self.running_mean if use_stats else None,
            self.running_var if use_stats else None, self.weight, self.bias,
            bn_training, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum="
                f"{self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _ranks = (2, 3)
    _rank_text = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    _ranks = (4,)
    _rank_text = "4D"


class BatchNorm3d(_BatchNorm):
    _ranks = (5,)
    _rank_text = "5D"


class _InstanceNorm(_BatchNorm):
    """InstanceNorm1d/2d/3d: torch's defaults (no affine parameters, no
    running statistics); the statistics of each (sample, channel) plane."""
    _dims = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, dtype=None):
        super().__init__(num_features, eps, momentum, affine,
                         track_running_stats, dtype)

    def forward(self, input):
        n = type(self)._dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got "
                             f"{input.dim()}D input)")
        if input.dim() == n + 1:  # unbatched
            return self.forward(input.unsqueeze(0)).squeeze(0)
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight,
            self.bias, self.training or not self.track_running_stats,
            self.momentum, self.eps)


class InstanceNorm1d(_InstanceNorm):
    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    _dims = 3


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dtype = dtype or _C.float32
        if elementwise_affine:
            self.weight = Parameter(_C.empty(self.normalized_shape,
                                             dtype=dtype))
            self.bias = Parameter(_C.empty(self.normalized_shape,
                                           dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight,
                            self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True,
                 dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        dtype = dtype or _C.float32
        if affine:
            self.weight = Parameter(_C.empty(num_channels, dtype=dtype))
            self.bias = Parameter(_C.empty(num_channels, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias,
                            self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}")
