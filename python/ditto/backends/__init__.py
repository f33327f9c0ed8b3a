"""ditto.backends: the backend switches (torch.backends).

ditto.backends.conv is torch.backends.cudnn's counterpart for ditto's
convolutions: its benchmark, deterministic and benchmark_limit attributes
are read and set like cudnn's.
"""
import sys
import types

from .. import _C


class _ConvModule(types.ModuleType):
    @property
    def benchmark(self):
        return _C._conv_benchmark()

    @benchmark.setter
    def benchmark(self, value):
        _C._set_conv_benchmark(bool(value))

    @property
    def deterministic(self):
        return _C._conv_deterministic()

    @deterministic.setter
    def deterministic(self, value):
        _C._set_conv_deterministic(bool(value))

    @property
    def benchmark_limit(self):
        return _C._conv_benchmark_limit()

    @benchmark_limit.setter
    def benchmark_limit(self, value):
        _C._set_conv_benchmark_limit(int(value))


conv = _ConvModule(__name__ + ".conv", "ditto's convolution switches "
                   "(torch.backends.cudnn's benchmark, deterministic, "
                   "benchmark_limit)")
sys.modules[conv.__name__] = conv


class _CudnnModule(_ConvModule):
    """torch.backends.cudnn's switches, the same as ditto.backends.conv's
    (so the reproducibility note's cudnn lines run unchanged); enabled and
    allow_tf32 are kept but change nothing on the CPU."""
    enabled = True
    allow_tf32 = True

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def version():
        return None


cudnn = _CudnnModule(__name__ + ".cudnn", "torch.backends.cudnn's switches, "
                     "those of ditto.backends.conv")
sys.modules[cudnn.__name__] = cudnn


def _submodule(name, doc, **attrs):
    mod = types.ModuleType(__name__ + "." + name, doc)
    for key, value in attrs.items():
        setattr(mod, key, value)
    sys.modules[mod.__name__] = mod
    return mod


# torch.backends.cuda and torch.backends.mps, as a CPU-only torch has them:
# scripts probe them before choosing a device. The TF32 switches are kept
# but change nothing (ditto's float32 products are float32).
cuda = _submodule(
    "cuda", "torch.backends.cuda's switches (no CUDA here)",
    is_built=lambda: False,
    matmul=types.SimpleNamespace(allow_tf32=False,
                                 allow_fp16_reduced_precision_reduction=True))
mps = _submodule("mps", "torch.backends.mps (no MPS here)",
                 is_available=lambda: False, is_built=lambda: False)
