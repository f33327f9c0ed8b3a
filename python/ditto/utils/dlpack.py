"""ditto.utils.dlpack (torch.utils.dlpack): DLPack capsules both ways,
without copies."""
from .._C import _from_dlpack


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of ext_tensor: an object with
    __dlpack__ (a NumPy array, a PyTorch tensor) or a DLPack capsule, which
    is consumed (renamed "used_dltensor")."""
    return _from_dlpack(ext_tensor)


def to_dlpack(tensor):
    """A DLPack capsule ("dltensor") sharing tensor's memory."""
    return tensor.__dlpack__()
