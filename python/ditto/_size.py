"""ditto.Size: a tensor's sizes, a tuple as torch.Size is."""


class Size(tuple):
    """The sizes of a tensor: a tuple of ints (torch.Size)."""

    __slots__ = ()

    def __repr__(self):
        return f"ditto.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))
