"""ditto.cuda: what torch.cuda answers on a machine without CUDA, so that
the usual `device = "cuda" if torch.cuda.is_available() else "cpu"` and
the reproducibility note's seeding lines run unchanged. ditto's GPU path
is the Vulkan device (ditto.vulkan, docs/device.md)."""


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """As torch's without CUDA: silently ignored (there is no CUDA
    generator to seed)."""
    return None


def manual_seed_all(seed):
    return None


def is_initialized():
    return False


def synchronize(device=None):
    return None


def empty_cache():
    return None


class amp:
    """torch.cuda.amp without CUDA: autocast warns and does nothing (as
    torch's without CUDA), and GradScaler is disabled, so
    `scaler.scale(loss).backward(); scaler.step(opt); scaler.update()`
    runs as plain `loss.backward(); opt.step()`."""

    class autocast:
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            from .amp import autocast as _autocast
            self._inner = _autocast("cuda", dtype=dtype, enabled=enabled)

        def __enter__(self):
            return self._inner.__enter__()

        def __exit__(self, *exc):
            return self._inner.__exit__(*exc)

        def __call__(self, fn):
            return self._inner(fn)

    class GradScaler:
        def __init__(self, init_scale=65536.0, growth_factor=2.0,
                     backoff_factor=0.5, growth_interval=2000, enabled=True):
            if enabled:
                import warnings
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but "
                              "CUDA is not available.  Disabling.")
            self._enabled = False

        def scale(self, outputs):
            return outputs

        def unscale_(self, optimizer):
            return None

        def step(self, optimizer, *args, **kwargs):
            return optimizer.step(*args, **kwargs)

        def update(self, new_scale=None):
            return None

        def get_scale(self):
            return 1.0

        def is_enabled(self):
            return self._enabled

        def state_dict(self):
            return {}

        def load_state_dict(self, state_dict):
            return None
