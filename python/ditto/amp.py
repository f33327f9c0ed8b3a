"""ditto.autocast / ditto.cpu.amp.autocast / ditto.amp.autocast: torch
1.13's CPU autocast. Inside the context, the ops of its lower-precision
list (products and convolutions) cast their float32 tensor arguments to
bfloat16, and the ops of its float32 list (the losses below) cast
bfloat16 ones to float32; everything else runs in the dtypes it is given.
As torch 1.13 on CPU, bfloat16 is the one lower-precision dtype: another
warns and disables the context, and "cuda" (ditto has no CUDA) too."""
import functools
import threading
import warnings

from . import _C

# torch 1.13's CPU lists (aten/src/ATen/autocast_mode.cpp), the ops ditto has.
LOWER_PRECISION = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "bmm", "mm", "baddbmm", "addmm", "addbmm", "linear",
    "matmul", "prelu")
FP32 = (
    "mse_loss", "nll_loss", "cross_entropy", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "l1_loss", "ctc_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "poisson_nll_loss", "cosine_embedding_loss",
    "hinge_embedding_loss", "multilabel_soft_margin_loss", "cdist", "trace",
    "prod", "cholesky", "inverse", "pinverse", "avg_pool3d", "max_pool3d",
    "adaptive_avg_pool3d", "grid_sample")

_state = threading.local()


def _current():
    return getattr(_state, "stack", None) or []


def is_autocast_cpu_enabled():
    s = _current()
    return bool(s) and s[-1] is not None


def get_autocast_cpu_dtype():
    s = _current()
    return s[-1] if s and s[-1] is not None else _C.bfloat16


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True,
    cache_enabled=None), as a context manager and a decorator."""

    def __init__(self, device_type="cpu", dtype=None, enabled=True,
                 cache_enabled=None):
        if device_type not in ("cpu", "cuda"):
            raise RuntimeError(
                "User specified autocast device_type must be 'cuda' or "
                f"'cpu', but got {device_type!r}")
        self.device = device_type
        self.fast_dtype = _C.bfloat16 if dtype is None else dtype
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is "
                          "not available. Disabling")
            self._enabled = False
        if self._enabled and self.fast_dtype != _C.bfloat16:
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. "
                "Disabling autocast.\nCPU Autocast only supports dtype of "
                "torch.bfloat16 currently.")
            self._enabled = False

    def __enter__(self):
        if not hasattr(_state, "stack"):
            _state.stack = []
        _state.stack.append(self.fast_dtype if self._enabled else None)
        return self

    def __exit__(self, *exc):
        _state.stack.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return run


def _cast_all(value, want, eligible):
    if isinstance(value, _C.Tensor):
        return value.to(want) if eligible(value.dtype) else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_all(v, want, eligible) for v in value)
    return value


def _wrap(fn, lower):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        s = _current()
        if not s or s[-1] is None:
            return fn(*args, **kwargs)
        fast = s[-1]
        if lower:  # float32 (and float16) tensors to the autocast dtype
            want = fast
            eligible = lambda d: d.is_floating_point and d not in (
                _C.float64, fast)
        else:
            want = _C.float32
            eligible = lambda d: d == fast
        args = _cast_all(args, want, eligible)
        kwargs = {k: _cast_all(v, want, eligible) for k, v in kwargs.items()}
        # The op's own parts run outside autocast, as torch's kernels do.
        _state.stack.append(None)
        try:
            return fn(*args, **kwargs)
        finally:
            _state.stack.pop()
    run._autocast_wrapped = True
    return run


def install(ditto_ns, functional, tensor_cls):
    for names, lower in ((LOWER_PRECISION, True), (FP32, False)):
        for name in names:
            for ns in (ditto_ns, vars(functional)):
                fn = ns.get(name)
                if fn is not None and not getattr(fn, "_autocast_wrapped",
                                                  False):
                    if ns is ditto_ns:
                        ditto_ns[name] = _wrap(fn, lower)
                    else:
                        setattr(functional, name, _wrap(fn, lower))
    for name in ("matmul", "__matmul__", "mm", "bmm", "addmm", "baddbmm",
                 "addbmm", "prod", "trace", "inverse", "pinverse",
                 "cholesky"):
        fn = getattr(tensor_cls, name, None)
        if fn is not None and not getattr(fn, "_autocast_wrapped", False):
            setattr(tensor_cls, name,
                    _wrap(fn, name not in ("prod", "trace", "inverse",
                                           "pinverse", "cholesky")))
