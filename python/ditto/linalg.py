"""ditto.linalg (torch.linalg): ditto's deterministic decompositions."""
from . import _C
from . import return_types as _rt

qr = _C._linalg.qr
svd_lowrank = _C._linalg.svd_lowrank


def svd(A, full_matrices=True):
    """U, S, Vh with A = U diag(S) Vh (the reduced SVD: ditto has no other,
    so full_matrices=True is refused for a non-square A)."""
    m, n = A.shape[-2], A.shape[-1]
    if full_matrices and m != n:
        raise ValueError("[linalg.svd] ditto computes the reduced SVD only: "
                         "pass full_matrices=False")
    U, S, V = _C._linalg.svd(A)
    return _rt.linalg_svd(U, S, V.t())
