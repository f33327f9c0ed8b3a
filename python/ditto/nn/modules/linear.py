"""Linear, Identity, Flatten and Unflatten (torch.nn's)."""
import math

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _reset_weight_and_bias(weight, bias):
    """PyTorch's reset_parameters of Linear and the conv layers."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        if fan_in > 0:
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(bias, -bound, bound)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b, W (out_features, in_features) drawn as PyTorch's."""

    def __init__(self, in_features, out_features, bias=True, dtype=None):
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError("[Linear] in_features and out_features must be "
                             f"non-negative, got {in_features} and "
                             f"{out_features}")
        self.in_features = in_features
        self.out_features = out_features
        dtype = dtype or _C.float32
        self.weight = Parameter(_C.empty(out_features, in_features,
                                         dtype=dtype))
        if bias:
            self.bias = Parameter(_C.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features="
                f"{self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        d = self.dim % input.dim()
        shape = list(input.shape)
        return input.reshape(shape[:d] + list(self.unflattened_size)
                             + shape[d + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Bilinear(Module):
    """y = x1^T A x2 + b, A (out, in1, in2) and b drawn uniform(-1/sqrt(in1),
    1/sqrt(in1)) as torch's, weight first."""

    def __init__(self, in1_features, in2_features, out_features, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        dtype = dtype or _C.float32
        self.weight = Parameter(_C.empty(out_features, in1_features,
                                         in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_C.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        # out[..., o] = sum_ij x1[..., i] A[o, i, j] x2[..., j]
        t = _C.matmul(input1.unsqueeze(-2).unsqueeze(-2), self.weight)
        out = _C.matmul(t, input2.unsqueeze(-2).unsqueeze(-1))
        out = out.squeeze(-1).squeeze(-1)
        return out + self.bias if self.bias is not None else out

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features="
                f"{self.in2_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class LazyLinear(Module):
    """torch.nn.LazyLinear: a Linear whose in_features is the last dim of
    the first input; its parameters are made and drawn then (torch's order:
    a dry run before building the optimizer)."""

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = 0
        self.out_features = out_features
        self._bias = bias
        self._dtype = dtype or _C.float32
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)

    def forward(self, input):
        if self.weight is None:
            self.in_features = input.shape[-1]
            self.weight = Parameter(_C.empty(self.out_features,
                                             self.in_features,
                                             dtype=self._dtype))
            if self._bias:
                self.bias = Parameter(_C.empty(self.out_features,
                                               dtype=self._dtype))
            _reset_weight_and_bias(self.weight, self.bias)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features="
                f"{self.out_features}, bias={self._bias}")
