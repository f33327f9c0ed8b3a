"""ditto.cpu: torch.cpu's names (torch.cpu.amp.autocast)."""
from . import amp  # noqa: F401


def is_available():
    return True


def device_count():
    return 1
