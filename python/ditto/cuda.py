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
