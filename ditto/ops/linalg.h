#pragma once

#include <string>

#include "ditto/core/scalar.h"
#include "ditto/core/tensor.h"

namespace ditto {

// Matrix products of float32 or float64 tensors (both the same dtype).
// Every output element is one chain of fused multiply-adds over k in order
// (Note [GEMM accumulation order]): the same bits for any thread count and
// on every CPU capability. Split-K (small outputs with a huge k) is the
// exception to the chain: see docs/linalg.md.

// [m, k] @ [k, n].
DITTO_API Tensor mm(const Tensor& a, const Tensor& b);
// [b, m, k] @ [b, k, n].
DITTO_API Tensor bmm(const Tensor& a, const Tensor& b);
// torch.matmul: dot, matrix-vector, matrix-matrix, and batched products
// with the batch dims broadcast; 1-d operands gain and then lose a dim.
DITTO_API Tensor matmul(const Tensor& a, const Tensor& b);
// beta * input + alpha * (a @ b), input broadcast to [m, n]; with beta = 0
// input is ignored (NaN included), as in BLAS.
DITTO_API Tensor addmm(
    const Tensor& input,
    const Tensor& a,
    const Tensor& b,
    const Scalar& beta = 1,
    const Scalar& alpha = 1);
// x @ weight^T + bias (torch.nn.functional.linear); bias may be undefined.
DITTO_API Tensor
linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

namespace backends::gemm {

// The split-K reduction workspace, as PyTorch's CUBLAS_WORKSPACE_CONFIG:
// ":SIZE_KiB:COUNT[:SIZE_KiB:COUNT...]" (total SIZE_KiB * 1024 * COUNT
// bytes). Read once from DITTO_GEMM_WORKSPACE_CONFIG at first use; set_...
// replaces it (ValueError, and no change, for bad syntax). It bounds how
// many split-K partials are held at once, never the bits; the deterministic
// mode works with any size, the default included.
DITTO_API void set_workspace_config(const std::string& config);
// The configuration in force ("" when unset).
DITTO_API std::string workspace_config();
// Its size in bytes (unset: 8 MiB).
DITTO_API int64_t workspace_bytes();

} // namespace backends::gemm

} // namespace ditto
