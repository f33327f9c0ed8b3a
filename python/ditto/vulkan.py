"""ditto.vulkan: the Vulkan devices, with torch.cuda's functions
(docs/device.md). Each device has its own default generator, a Philox
stream that ditto.manual_seed seeds with the others; random fills of a
device tensor draw from it unless given a generator."""
from . import _C


def is_available():
    """Whether a Vulkan device can be used."""
    return _C.is_vulkan_available()


def device_count():
    """The number of Vulkan devices (0 without a driver)."""
    return _C._vulkan_device_count()


def get_device_name(device=0):
    """The device's name as its driver reports it."""
    return _C._vulkan_device_name(_index(device))


def _index(device):
    if isinstance(device, int):
        return device
    text = str(device)
    return int(text.split(":", 1)[1]) if ":" in text else 0


def _generator(device):
    return _C._device_generator("vulkan:%d" % _index(device))


def default_generator(device=0):
    """The device's default generator (torch.cuda.default_generators[i])."""
    return _generator(device)


def manual_seed(seed):
    """Seeds vulkan:0's default generator (torch.cuda.manual_seed)."""
    _generator(0).manual_seed(seed)


def manual_seed_all(seed):
    """Seeds every Vulkan device's default generator."""
    for i in range(device_count()):
        _generator(i).manual_seed(seed)


def initial_seed():
    """vulkan:0's default generator's seed."""
    return _generator(0).initial_seed()


def get_rng_state(device="vulkan"):
    """The device generator's state as a uint8 tensor."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="vulkan"):
    """Restores a state from get_rng_state."""
    _generator(device).set_state(new_state)
