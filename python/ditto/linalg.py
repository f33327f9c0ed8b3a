"""ditto.linalg (torch.linalg): ditto's deterministic decompositions."""
from . import _C
from . import return_types as _rt

_qr = _C._linalg.qr


def qr(A, mode="reduced"):
    """torch.linalg.qr; a wide A (m < n) factors its first m columns and
    takes R = Q^T A, as torch's reduced and complete forms give."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but "
                           "expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    if mode == "r":
        return _Q(_C.empty((0,), dtype=A.dtype), qr(A)[1])
    if A.dim() >= 2 and A.shape[-2] < A.shape[-1]:
        m = A.shape[-2]
        q = _qr(A[..., :m])[0]
        return _Q(q, q.mT @ A)
    if mode == "complete" and A.shape[-2] != A.shape[-1]:
        raise NotImplementedError("[linalg.qr] mode='complete' of a tall "
                                  "matrix is not supported yet")
    q, r = _qr(A)
    return _Q(q, r)


class _Q(tuple):
    """torch.return_types.linalg_qr: (Q, R) with .Q and .R."""

    def __new__(cls, q, r):
        return super().__new__(cls, (q, r))

    Q = property(lambda self: self[0])
    R = property(lambda self: self[1])
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


# ---- torch.linalg's everyday functions over ditto's ops. Gaussian
# elimination with partial pivoting, one row operation after another in
# a fixed order (so the bits are the same on every run, thread count and
# CPU, and autograd follows), for the small matrices these are used on.
import builtins as _b  # noqa: E402


def vector_norm(x, ord=2, dim=None, keepdim=False):
    """torch.linalg.vector_norm: ord 2, 1, inf, -inf, 0 or any p."""
    dims = list(range(x.dim())) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    a = x.abs()
    if ord == float("inf"):
        return _C.amax(a, dims, keepdim)
    if ord == float("-inf"):
        return _C.amin(a, dims, keepdim)
    if ord == 0:
        return (a != 0).to(x.dtype).sum(dims, keepdim)
    return _C.norm(x, ord, dims, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False):
    """torch.linalg.matrix_norm for ord 'fro', 1, -1, inf, -inf."""
    d0, d1 = dim
    if ord == "fro":
        return _C.norm(A, 2, [d0, d1], keepdim)
    a = A.abs()
    if ord in (1, -1):
        s = a.sum([d0], True)
        r = _C.amax(s, [d1], True) if ord == 1 else _C.amin(s, [d1], True)
    elif ord in (float("inf"), float("-inf")):
        s = a.sum([d1], True)
        r = _C.amax(s, [d0], True) if ord > 0 else _C.amin(s, [d0], True)
    else:
        raise ValueError(f"[linalg.matrix_norm] ord {ord!r} is not supported")
    return r if keepdim else r.squeeze(max(d0 % A.dim(), d1 % A.dim())).squeeze(
        min(d0 % A.dim(), d1 % A.dim()))


def norm(A, ord=None, dim=None, keepdim=False):
    """torch.linalg.norm: the 2-norm of the flattened input (Frobenius for
    matrices) when ord and dim are None; vector or matrix norms by dim."""
    if ord is None and dim is None:
        return _C.norm(A, 2, list(range(A.dim())), keepdim)
    if isinstance(dim, int) or (dim is None and A.dim() == 1):
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim)
    return matrix_norm(A, "fro" if ord is None else ord,
                       (-2, -1) if dim is None else dim, keepdim)


def _square(A, op):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"[linalg.{op}] A must be batches of square "
                         f"matrices, but they are {tuple(A.shape)}")


def _batched(fn, A, B=None):
    """fn over the matrices of A (and of B where B has A's batch: a batch
    of vectors or of matrices; otherwise B is shared)."""
    if A.dim() == 2:
        return fn(A) if B is None else fn(A, B)
    if B is None:
        return _C.stack([_batched(fn, a) for a in A.unbind(0)])
    per = B.dim() >= A.dim() - 1 and B.dim() > 1
    return _C.stack([_batched(fn, a, B[i] if per else B)
                     for i, a in enumerate(A.unbind(0))])


def _eliminate(A, B=None):
    """Rows of [A | B] in upper triangular form, and the permutation's
    sign; B may be None."""
    n = A.shape[-1]
    rows = list(A.unbind(0))
    brows = list(B.unbind(0)) if B is not None else None
    sign = 1.0
    for k in range(n):
        col = _C.stack([rows[i][k] for i in range(k, n)]).abs()
        p = k + int(col.argmax().item())
        if p != k:
            rows[k], rows[p] = rows[p], rows[k]
            if brows is not None:
                brows[k], brows[p] = brows[p], brows[k]
            sign = -sign
        piv = rows[k][k]
        if piv.item() == 0:
            return rows, brows, sign, False
        for i in range(k + 1, n):
            f = rows[i][k] / piv
            rows[i] = rows[i] - f * rows[k]
            if brows is not None:
                brows[i] = brows[i] - f * brows[k]
    return rows, brows, sign, True


def _det2(A):
    rows, _, sign, ok = _eliminate(A)
    if not ok:
        return (A * 0).sum()
    d = rows[0][0] * sign
    for k in range(1, A.shape[-1]):
        d = d * rows[k][k]
    return d


def det(A):
    """torch.linalg.det."""
    _square(A, "det")
    return _batched(_det2, A)


def _solve2(A, B):
    rows, brows, _, ok = _eliminate(A, B)
    if not ok:
        raise RuntimeError("[linalg.solve] The solver failed because the input "
                           "matrix is singular.")
    n = A.shape[-1]
    x = [None] * n
    for k in range(n - 1, -1, -1):
        acc = brows[k]
        for j in range(k + 1, n):
            acc = acc - rows[k][j] * x[j]
        x[k] = acc / rows[k][k]
    return _C.stack(x)


def solve(A, B, *, left=True):
    """torch.linalg.solve: X with A X = B (B a vector or matrix, batches
    alike)."""
    _square(A, "solve")
    if not left:
        return solve(A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    return _batched(_solve2, A, B)


def inv(A):
    """torch.linalg.inv."""
    _square(A, "inv")
    n = A.shape[-1]
    eye = _C.eye(n, dtype=A.dtype)
    return _batched(_solve2, A, eye)


def _cholesky2(A, upper):
    n = A.shape[-1]
    L = [[None] * n for _ in range(n)]
    zero = A[0][0] * 0
    for j in range(n):
        s = A[j][j]
        for k in range(j):
            s = s - L[j][k] * L[j][k]
        if s.item() <= 0:
            raise RuntimeError(
                f"[linalg.cholesky] The factorization could not be completed "
                f"because the input is not positive-definite (the leading "
                f"minor of order {j + 1} is not positive-definite).")
        L[j][j] = _C.sqrt(s)
        for i in range(j + 1, n):
            t = A[i][j]
            for k in range(j):
                t = t - L[i][k] * L[j][k]
            L[i][j] = t / L[j][j]
    out = _C.stack([_C.stack([L[i][j] if j <= i else zero for j in range(n)])
                    for i in range(n)])
    return out.transpose(0, 1) if upper else out


def cholesky(A, *, upper=False):
    """torch.linalg.cholesky: L with A = L L^H (upper: L^H)."""
    _square(A, "cholesky")
    return _batched(lambda a: _cholesky2(a, upper), A)


def matrix_power(A, n):
    """torch.linalg.matrix_power: A^n by repeated squaring (n < 0: of the
    inverse)."""
    _square(A, "matrix_power")
    if n == 0:
        return _C.eye(A.shape[-1], dtype=A.dtype).expand(A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else _C.matmul(result, base)
        n >>= 1
        if n:
            base = _C.matmul(base, base)
    return result


def cross(input, other, dim=-1):
    """torch.linalg.cross: the cross product of 3-vectors along dim."""
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    return _C.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]], dim % _b.max(input.dim(), 1))


def _jacobi_eigh(rows):
    """Cyclic Jacobi on a symmetric matrix of Python floats (IEEE double
    arithmetic and sqrt: the same on every machine): eigenvalues
    ascending and the eigenvectors as columns."""
    n = len(rows)
    a = [list(map(float, r)) for r in rows]
    v = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for _sweep in range(100):
        off = _b.sum(a[i][j] * a[i][j] for i in range(n) for j in range(n)
                     if i != j)
        if off == 0.0:
            break
        scale = _b.sum(a[i][i] * a[i][i] for i in range(n)) + off
        if off <= 1e-34 * scale:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p][q]
                if apq == 0.0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + (theta * theta + 1.0) ** 0.5)
                if theta < 0:
                    t = -t
                c = 1.0 / (t * t + 1.0) ** 0.5
                s = t * c
                for k in range(n):
                    akp, akq = a[k][p], a[k][q]
                    a[k][p] = c * akp - s * akq
                    a[k][q] = s * akp + c * akq
                for k in range(n):
                    apk, aqk = a[p][k], a[q][k]
                    a[p][k] = c * apk - s * aqk
                    a[q][k] = s * apk + c * aqk
                for k in range(n):
                    vkp, vkq = v[k][p], v[k][q]
                    v[k][p] = c * vkp - s * vkq
                    v[k][q] = s * vkp + c * vkq
    order = sorted(range(n), key=lambda i: a[i][i])
    w = [a[i][i] for i in order]
    vec = [[v[k][i] for i in order] for k in range(n)]
    return w, vec


def eigh(A, UPLO="L"):
    """torch.linalg.eigh: eigenvalues (ascending) and orthonormal
    eigenvectors (columns) of a symmetric matrix, by cyclic Jacobi in
    double precision (from the lower triangle, or the upper with
    UPLO='U'). Each eigenvector's sign is Jacobi's, not LAPACK's. No
    gradient."""
    from . import return_types as _rt  # noqa: F811
    _square(A, "eigh")
    if A.dim() > 2:
        parts = [eigh(a, UPLO) for a in A.unbind(0)]
        return _rt.linalg_eigh(_C.stack([p[0] for p in parts]),
                               _C.stack([p[1] for p in parts]))
    m = A.detach().double().tolist()
    n = len(m)
    sym = [[m[max(i, j)][min(i, j)] if UPLO == "L" else m[min(i, j)][max(i, j)]
            for j in range(n)] for i in range(n)]
    w, vec = _jacobi_eigh(sym)
    return _rt.linalg_eigh(_C.tensor(w, dtype=A.dtype),
                           _C.tensor(vec, dtype=A.dtype))


def eigvalsh(A, UPLO="L"):
    """torch.linalg.eigvalsh: eigh's eigenvalues."""
    return eigh(A, UPLO)[0]


def svdvals(A):
    """torch.linalg.svdvals: the singular values, descending."""
    return svd(A, full_matrices=False)[1]


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """torch.linalg.pinv through the SVD: singular values at or below
    max(atol, rtol * s_max) are dropped (rtol defaults to eps * max(m, n))."""
    U, S, Vh = svd(A, full_matrices=False)
    eps = 2.220446049250313e-16 if A.dtype == _C.float64 else 1.1920928955078125e-07
    smax = S.max().item() if S.numel() else 0.0
    tol = max(atol or 0.0, (rtol if rtol is not None else
                            (eps * max(A.shape[-2], A.shape[-1]) if atol is None
                             else 0.0)) * smax)
    keep = S > tol
    inv_s = _C.where(keep, 1.0 / _C.where(keep, S, S * 0 + 1), S * 0)
    return _C.matmul(Vh.transpose(-2, -1) * inv_s.unsqueeze(-2),
                     U.transpose(-2, -1))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    S = svdvals(A)
    eps = 2.220446049250313e-16 if A.dtype == _C.float64 else 1.1920928955078125e-07
    smax = S.max().item() if S.numel() else 0.0
    if tol is not None:
        cut = tol
    else:
        cut = max(atol or 0.0, (rtol if rtol is not None else
                                (eps * max(A.shape[-2], A.shape[-1])
                                 if atol is None else 0.0)) * smax)
    return (S > cut).to(_C.int64).sum()


def cond(A, p=None):
    """torch.linalg.cond: s_max / s_min for p None or 2 (other p: the
    norms of A and its inverse)."""
    if p in (None, 2):
        S = svdvals(A)
        return S.max() / S.min()
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def _slogdet2(A):
    rows, _, sign, ok = _eliminate(A)
    if not ok:
        return (A * 0).sum(), (A * 0).sum() - float("inf")
    s, logabs = sign, None
    for k in range(A.shape[-1]):
        d = rows[k][k]
        s = s * (1.0 if d.item() > 0 else -1.0)
        term = _C.log(d.abs())
        logabs = term if logabs is None else logabs + term
    return (A[0][0] * 0 + s), logabs


def slogdet(A):
    """torch.linalg.slogdet: (sign, log|det|) by elimination."""
    from . import return_types as _rt2
    _square(A, "slogdet")
    if A.dim() > 2:
        parts = [slogdet(a) for a in A.unbind(0)]
        return _rt2.linalg_slogdet(_C.stack([p[0] for p in parts]),
                                   _C.stack([p[1] for p in parts]))
    s, l = _slogdet2(A)
    return _rt2.linalg_slogdet(s, l)


def lstsq(A, B, rcond=None, *, driver=None):
    """torch.linalg.lstsq: the least-squares solution through the
    pseudo-inverse (solution only; residuals, rank and singular values
    empty, as torch's default gelsy driver on CPU leaves some)."""
    from . import return_types as _rt2
    vec = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vec else B
    X = _C.matmul(pinv(A), Bm)
    if vec:
        X = X.squeeze(-1)
    empty = _C.zeros([0], dtype=A.dtype)
    return _rt2.linalg_lstsq(X, empty, _C.zeros([0], dtype=_C.int64), empty)


def multi_dot(tensors):
    """torch.linalg.multi_dot: the product left to right (1-d first and
    last operands as row and column vectors)."""
    ts = list(tensors)
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    out = ts[0]
    for t in ts[1:]:
        out = _C.matmul(out, t)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def matrix_exp(A):
    """torch.linalg.matrix_exp: scaling and squaring with an 18-term Taylor
    series (A scaled below norm 1/2), in a fixed order."""
    _square(A, "matrix_exp")
    n = A.shape[-1]
    norm = matrix_norm(A, 1).max().item() if A.numel() else 0.0
    s = 0
    while norm > 0.5:
        norm /= 2
        s += 1
    X = A / (2 ** s)
    eye = _C.eye(n, dtype=A.dtype).expand(A.shape)
    term = eye
    result = eye
    for k in range(1, 19):
        term = _C.matmul(term, X) / k
        result = result + term
    for _ in range(s):
        result = _C.matmul(result, result)
    return result
