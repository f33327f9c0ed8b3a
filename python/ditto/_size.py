"""ditto.Size: a tensor's sizes, a tuple as torch.Size is."""
from ._C import _SizeBase


class Size(_SizeBase):
    """The sizes of a tensor: a tuple of ints (torch.Size). Indexing is
    _SizeBase's, in C: a slice gives a Size."""

    __slots__ = ()

    def __repr__(self):
        return f"ditto.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))
