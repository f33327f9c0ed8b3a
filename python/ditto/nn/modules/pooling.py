"""The pooling layers (torch.nn's): MaxPool1d/2d/3d, AvgPool1d/2d/3d,
AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, MaxUnpool1d/2d/3d and
FractionalMaxPool2d/3d,
with torch's arguments and printed forms."""
from .. import functional as F
from .module import Module


def _tuple(v, n):
    """torch's _single/_pair/_triple."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride,
                              self.padding, self.dilation,
                              ceil_mode=self.ceil_mode,
                              return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _fn = F.max_pool1d


class MaxPool2d(_MaxPoolNd):
    _fn = F.max_pool2d


class MaxPool3d(_MaxPoolNd):
    _fn = F.max_pool3d


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride,
                            self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class _AvgPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride,
                              self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class AvgPool2d(_AvgPoolNd):
    _fn = F.avg_pool2d


class AvgPool3d(_AvgPoolNd):
    _fn = F.avg_pool3d


class _AdaptivePoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if return_indices:
            self.return_indices = True

    def forward(self, input):
        if getattr(self, "return_indices", False):
            return type(self)._fn(input, self.output_size, True)
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    _fn = F.adaptive_avg_pool1d

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    _fn = F.adaptive_avg_pool2d


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    _fn = F.adaptive_avg_pool3d


class AdaptiveMaxPool1d(_AdaptivePoolNd):
    _fn = F.adaptive_max_pool1d


class AdaptiveMaxPool2d(_AdaptivePoolNd):
    _fn = F.adaptive_max_pool2d


class AdaptiveMaxPool3d(_AdaptivePoolNd):
    _fn = F.adaptive_max_pool3d


class _MaxUnpoolNd(Module):
    _fn = None
    _dims = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = type(self)._dims
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride if stride is not None else kernel_size, n)
        self.padding = _tuple(padding, n)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride,
                              self.padding, output_size)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class MaxUnpool1d(_MaxUnpoolNd):
    _fn = F.max_unpool1d
    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _fn = F.max_unpool2d
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _fn = F.max_unpool3d
    _dims = 3


class _FractionalMaxPoolNd(Module):
    """torch.nn.FractionalMaxPool2d/3d: each forward draws its samples from
    the default generator (as PyTorch) unless _random_samples is given;
    prints with no arguments, as PyTorch's."""
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices=False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output "
                             "size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may "
                             "be specified")
        n = type(self)._dims
        self.kernel_size = _tuple(kernel_size, n)
        self.output_size = (None if output_size is None
                            else _tuple(output_size, n))
        self.output_ratio = (None if output_ratio is None
                             else _tuple(output_ratio, n))
        if self.output_ratio is not None and not all(
                0 < r < 1 for r in self.output_ratio):
            raise ValueError("output_ratio must be between 0 and 1 (got "
                             f"{output_ratio})")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size,
                              self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _fn = F.fractional_max_pool2d
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _fn = F.fractional_max_pool3d
    _dims = 3
