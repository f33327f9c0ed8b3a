"""The padding layers (torch.nn's): ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d, ConstantPad1d/2d/3d and ZeroPad2d, with torch's
printed forms; F.pad does the work."""
from .. import functional as F
from .module import Module


class _PadNd(Module):
    _mode = "constant"
    _dims = 0

    def __init__(self, padding, value=0.0):
        super().__init__()
        n = 2 * type(self)._dims
        self.padding = (tuple(padding) if isinstance(padding, (tuple, list))
                        else (padding,) * n)
        if len(self.padding) != n:
            raise ValueError(f"[{type(self).__name__}] padding must be one "
                             f"int or {n} ints, got {len(self.padding)}")
        self.value = value

    def forward(self, input):
        return F.pad(input, list(self.padding), type(self)._mode, self.value)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _layer(name, base, mode, dims):
    cls = type(name, (base,), {"_mode": mode, "_dims": dims})
    cls.__module__ = __name__
    return cls


ReflectionPad1d = _layer("ReflectionPad1d", _PadNd, "reflect", 1)
ReflectionPad2d = _layer("ReflectionPad2d", _PadNd, "reflect", 2)
ReflectionPad3d = _layer("ReflectionPad3d", _PadNd, "reflect", 3)
ReplicationPad1d = _layer("ReplicationPad1d", _PadNd, "replicate", 1)
ReplicationPad2d = _layer("ReplicationPad2d", _PadNd, "replicate", 2)
ReplicationPad3d = _layer("ReplicationPad3d", _PadNd, "replicate", 3)
ConstantPad1d = _layer("ConstantPad1d", _ConstantPadNd, "constant", 1)
ConstantPad2d = _layer("ConstantPad2d", _ConstantPadNd, "constant", 2)
ConstantPad3d = _layer("ConstantPad3d", _ConstantPadNd, "constant", 3)


class ZeroPad2d(_PadNd):
    _dims = 2
