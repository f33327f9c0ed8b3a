"""ditto.nn.parallel: DistributedDataParallel (torch.nn.parallel's)."""
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
