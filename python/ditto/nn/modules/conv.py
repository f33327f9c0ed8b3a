"""Conv1d, Conv2d, Conv3d, ConvTranspose2d and ConvTranspose3d (torch.nn's),
drawn as PyTorch's."""
from ... import _C
from .. import functional as F
from ..parameter import Parameter
from .linear import _reset_weight_and_bias
from .module import Module


def _tuple(v, n):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"expected {n} values, got {v}")
    return v


class _ConvNd(Module):
    _dims = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", output_padding=0, dtype=None):
        super().__init__()
        name = type(self).__name__
        if in_channels <= 0 or out_channels <= 0:
            raise ValueError(f"[{name}] in_channels and out_channels must be "
                             "positive")
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"[{name}] in_channels and out_channels must be "
                             f"divisible by groups ({groups})")
        modes = ("zeros", "reflect", "replicate", "circular")
        if padding_mode not in modes:
            raise ValueError(f"[{name}] padding_mode must be one of {modes}, "
                             f"but got padding_mode='{padding_mode}'")
        if self._transposed and (padding_mode != "zeros" or
                                 isinstance(padding, str)):
            raise ValueError(f"[{name}] Only 'zeros' padding mode and "
                             "integer padding are supported")
        n = self._dims
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"[{name}] Invalid padding string "
                                 f"'{padding}', should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError(f"[{name}] padding='same' is not supported "
                                 "for strided convolutions")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = (padding if isinstance(padding, str)
                        else _tuple(padding, n))
        self.dilation = _tuple(dilation, n)
        self.output_padding = _tuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = self._transposed
        dtype = dtype or _C.float32
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(_C.empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_C.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self):
        n = self._dims
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size="
             f"{self.kernel_size}, stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s

    def _conv_forward(self, input, conv):
        """conv of input (batched) with this module's weights; a padding_mode
        other than zeros pads first (F.pad, PyTorch's order) and convolves
        with no padding."""
        padding = self.padding
        if self.padding_mode != "zeros":
            if padding == "same":
                pads = F._same_padding(self.kernel_size, self.dilation)
            elif padding == "valid":
                pads = [(0, 0)] * self._dims
            else:
                pads = [(p, p) for p in padding]
            input = F.pad(input, F._pad_list(pads), mode=self.padding_mode)
            padding = 0
        return conv(input, self.weight, self.bias, self.stride, padding,
                    self.dilation, self.groups)

    def _batched(self, input, fn):
        """fn on input with a batch dim (PyTorch's unbatched input: one
        dim less, a batch of one added and removed)."""
        if input.dim() == self._dims + 1:
            return fn(input.unsqueeze(0)).squeeze(0)
        return fn(input)


class Conv1d(_ConvNd):
    _dims = 1

    def forward(self, input):
        return self._batched(
            input, lambda x: self._conv_forward(x, F.conv1d))


class Conv2d(_ConvNd):
    _dims = 2

    def forward(self, input):
        return self._batched(
            input, lambda x: self._conv_forward(x, F.conv2d))


class Conv3d(_ConvNd):
    _dims = 3

    def forward(self, input):
        return self._batched(
            input, lambda x: self._conv_forward(x, F.conv3d))


class ConvTranspose2d(_ConvNd):
    _dims = 2
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride,
                         padding, dilation, groups, bias, padding_mode,
                         output_padding, dtype)

    def forward(self, input):
        return self._batched(input, lambda x: F.conv_transpose2d(
            x, self.weight, self.bias, self.stride, self.padding,
            self.output_padding, self.groups, self.dilation))


class ConvTranspose3d(ConvTranspose2d):
    _dims = 3

    def forward(self, input):
        return self._batched(input, lambda x: F.conv_transpose3d(
            x, self.weight, self.bias, self.stride, self.padding,
            self.output_padding, self.groups, self.dilation))


class ConvTranspose1d(ConvTranspose2d):
    _dims = 1

    def forward(self, input):
        return self._batched(input, lambda x: F.conv_transpose1d(
            x, self.weight, self.bias, self.stride, self.padding,
            self.output_padding, self.groups, self.dilation))
