"""Dropout and Dropout2d (torch.nn's): the masks come from the default
generator, in training mode only, with PyTorch's draws."""
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError("dropout probability has to be between 0 and 1, "
                             f"but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """inplace is kept for the printed form; the result is a new tensor."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels (one draw per channel)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)
