"""ditto: reproducible tensors and training with PyTorch's API.

A Python package over ditto's C++ library (docs/python.md): the same
operations, the same bits, PyTorch's names.
"""
import random as _py_random
import sys as _sys

from . import _C
from ._C import (  # noqa: F401
    Generator, Tensor, dtype, promote_types, result_type,
    use_deterministic_algorithms, are_deterministic_algorithms_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, get_deterministic_debug_mode,
    is_grad_enabled, set_num_threads, get_num_threads,
    initial_seed, seed, get_rng_state, set_rng_state,
    uint8, int32, int64, float32, float64, bool, float, double, long, int,
    int8, int16, float16, bfloat16, half, short,
    # factories (the others are declared: ditto/ops/factories/*.ops.toml)
    tensor, from_numpy,
    # random (rand, randn, randint, randperm ...: random/random.ops.toml)
    bernoulli, multinomial,
    # elementwise
    add, sub, subtract, mul, multiply, div, divide, true_divide, pow,
    erfinv, clamp, clip,
    where, addcmul, addcdiv,
    # reductions, shape ops, matrix products
    sum, mean, prod, norm, all, any, max, min, argmax, argmin,
    cat, concat,
    kthvalue, median, nanmedian, mode, topk, cumsum, cumprod, logcumsumexp,
    cummax, cummin, repeat_interleave, quantile, nanquantile, lerp,
    stack, flip, pad, sort, equal, allclose, mm, bmm, matmul, addmm, linear,
    # index and scatter
    index_select, gather, take, index, masked_select, bincount, histc,
    embedding_bag, index_add, index_copy, index_put, put, masked_fill,
    scatter, scatter_add, scatter_reduce, index_reduce,
    # NN ops torch has at top level
    conv1d, conv2d, conv3d,
    conv1d_backward_input, conv1d_backward_weight, conv2d_backward_input,
    conv2d_backward_weight, conv3d_backward_input, conv3d_backward_weight,
    softmax, log_softmax,
    # devices (docs/device.md)
    is_vulkan_available)
# The declared ops' functions (ditto/ops/*.ops.toml; docs/ops.md).
globals().update({_n: getattr(_C, _n) for _n in _C._declared_functions})
from . import _composite  # noqa: E402
_composite.install(globals())
from . import _more  # noqa: E402
_more.install(globals())
from ._size import Size  # noqa: F401,E402
from .grad_mode import enable_grad, no_grad, set_grad_enabled  # noqa: F401
from . import autograd, backends, linalg, nn, return_types, utils  # noqa: F401
from . import cpu, cuda, distributions  # noqa: F401,E402
from . import optim, random, sparse, special, trace, vulkan  # noqa: F401
from .serialization import load, save  # noqa: F401
from .utils.dlpack import from_dlpack  # noqa: F401

__version__ = _C.__version__
default_generator = _C.default_generator()
svd_lowrank = linalg.svd_lowrank


class layout:
    """A tensor's layout (torch.layout): ditto.strided or ditto.sparse_coo."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ditto." + self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None,
                      device=None, requires_grad=False):
    """A sparse COO tensor from its entries (torch.sparse_coo_tensor):
    indices (sparse_dim, nnz) and values (nnz, dense sizes...), lists or
    tensors; the size inferred when omitted. docs/sparse.md."""
    if not isinstance(indices, Tensor):
        indices = tensor(indices, dtype=int64)
    if not isinstance(values, Tensor):
        values = tensor(values, dtype=dtype)
    elif dtype is not None:
        values = values.to(dtype)
    out = (_C.sparse_coo_tensor(indices, values) if size is None
           else _C.sparse_coo_tensor(indices, values, list(size)))
    if requires_grad:
        out.requires_grad_(True)
    return out


def manual_seed(seed):
    """Seeds the default generator (torch.manual_seed); returns it."""
    _C._manual_seed(seed)
    return _C.default_generator()


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None,
           requires_grad=False):
    """torch.normal: from float mean and std with a size, or from tensors
    of means and/or standard deviations (the same draws as torch's)."""
    mean_t = isinstance(mean, Tensor)
    std_t = isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() with float mean and std needs a size")
        out = empty(size, dtype=dtype)
        out.normal_(mean, std, generator=generator)
    elif mean_t and not std_t:
        out = empty_like(mean).normal_(0.0, std, generator=generator)
        out.add_(mean)
    elif std_t and not mean_t:
        out = empty_like(std).normal_(0.0, 1.0, generator=generator)
        out.mul_(std).add_(mean)
    else:
        out = empty_like(mean).normal_(0.0, 1.0, generator=generator)
        out.mul_(std).add_(mean)
    if requires_grad:
        out.requires_grad_()
    return out


def seed_everything(seed):
    """Seeds ditto's default generator, Python's random and NumPy's global
    generator (as Lightning's seed_everything does); returns the seed."""
    _C._seed_everything(seed)  # ditto's generators, streams, C's srand
    _py_random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass
    return seed


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def op_records():
    """Every op record: name, family, callables, determinism class."""
    return _C.op_records()



def __getattr__(name):
    # ditto.distributed on first use, as torch.distributed after
    # `import torch`: importing it loads Open MPI, which `import ditto`
    # alone does not.
    if name == "distributed":
        import importlib
        return importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module 'ditto' has no attribute {name!r}")


inference_mode = no_grad  # torch.inference_mode: ditto's no_grad


def can_cast(from_, to):
    """torch.can_cast: casting from_ to to under the same-kind rule."""
    kinds = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1,
             "int64": 1, "float16": 2, "bfloat16": 2, "float32": 2,
             "float64": 2}
    return kinds[str(from_).split(".")[-1]] <= kinds[str(to).split(".")[-1]]

_more.install_methods(globals())

from . import _aliases  # noqa: E402


import builtins as _builtins  # noqa: E402


def _legacy_constructor(name, dtype):
    def make(*args):
        """torch's legacy typed constructor: sizes (uninitialized) or a
        sequence of data, in this dtype."""
        if args and _builtins.all(isinstance(a, _builtins.int) and
                        not isinstance(a, _builtins.bool) for a in args):
            return empty(*args, dtype=dtype)
        if len(args) == 1:
            return tensor(args[0], dtype=dtype)
        if not args:
            return empty(0, dtype=dtype)
        raise TypeError(f"{name}() takes sizes as ints, or one sequence of "
                        "data")
    make.__name__ = make.__qualname__ = name
    return make


FloatTensor = _legacy_constructor("FloatTensor", float32)
DoubleTensor = _legacy_constructor("DoubleTensor", float64)
HalfTensor = _legacy_constructor("HalfTensor", float16)
BFloat16Tensor = _legacy_constructor("BFloat16Tensor", bfloat16)
LongTensor = _legacy_constructor("LongTensor", int64)
IntTensor = _legacy_constructor("IntTensor", int32)
ShortTensor = _legacy_constructor("ShortTensor", int16)
CharTensor = _legacy_constructor("CharTensor", int8)
ByteTensor = _legacy_constructor("ByteTensor", uint8)
BoolTensor = _legacy_constructor("BoolTensor", bool)

# torch.conv1d/2d/3d take padding='same' and 'valid' too.
from .nn.functional import conv1d, conv2d, conv3d  # noqa: F401,E402
_aliases.install_functional(nn.functional)
_aliases.install(globals())
_aliases.install_methods()
_aliases.install_device(globals())
_aliases.install_more(globals())
_aliases.install_last()
_aliases.install_int_products(globals())
_aliases.install_modules(_sys.modules[__name__])

# torch.autocast: last, over the final functions and methods.
from . import amp  # noqa: E402
from .amp import autocast, get_autocast_cpu_dtype  # noqa: F401,E402
from .amp import is_autocast_cpu_enabled  # noqa: F401,E402
amp.install(globals(), nn.functional, Tensor)


def as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: data itself when it is a tensor of that dtype and
    on that device, else a tensor of it (moved to device)."""
    if device is not None:
        out = as_tensor(data, dtype)
        moved = out.to(device if isinstance(device, str) else str(device))
        # Tensor.to gives a new handle on the same tensor when nothing moves
        same = moved.device == out.device and moved.data_ptr() == out.data_ptr()
        return out if same else moved
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    # A NumPy array of a dtype ditto holds shares its memory, as torch's.
    if type(data).__module__ == "numpy" and hasattr(data, "__array__") \
            and getattr(data, "ndim", None) is not None:
        try:
            shared = from_numpy(data)
        except (TypeError, ValueError):
            shared = None
        if shared is not None:
            return shared if dtype is None or shared.dtype == dtype \
                else shared.to(dtype)
    return tensor(data, dtype=dtype) if dtype is not None else tensor(data)
