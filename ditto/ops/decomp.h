#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/random/generator.h"

namespace ditto::linalg {

// Thin QR of an [m, n] float32/float64 matrix with m >= n by Householder
// reflections, in a fixed order (deterministic, serial): Q [m, n] with
// orthonormal columns, R [n, n] upper triangular with A = Q R.
DITTO_API std::pair<Tensor, Tensor> qr(const Tensor& a);

// Thin SVD of an [m, n] matrix: A = U diag(S) V^T with U [m, k], S [k]
// descending, V [n, k], k = min(m, n). One-sided Jacobi sweeps in a fixed
// order: deterministic, meant for the small matrices of svd_lowrank
// (signs of singular vectors may differ from LAPACK's).
struct SVD {
  Tensor U, S, V;
};
DITTO_API SVD svd(const Tensor& a);

// torch.svd_lowrank: a rank-q approximation A ~ U diag(S) V^T by the
// randomized range finder (Halko, Martinsson and Tropp 2009, algorithm
// 5.1, with niter power iterations), PyTorch's steps: the random [n, q]
// (or [m, q]) matrix is randn from gen (default: the default generator), so
// the same seed gives the same bits and a new draw gives a different
// result. q <= min(m, n).
DITTO_API SVD svd_lowrank(
    const Tensor& a,
    int64_t q = 6,
    int64_t niter = 2,
    const std::optional<Generator>& gen = {});

} // namespace ditto::linalg
