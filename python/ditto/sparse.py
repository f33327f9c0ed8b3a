"""ditto.sparse (torch.sparse): products of a sparse COO matrix with a dense
one. ditto.mm, ditto.bmm and ditto.addmm take a sparse first operand too.
docs/sparse.md."""
from ._C._sparse import addmm, mm  # noqa: F401
