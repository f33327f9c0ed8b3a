#pragma once

// The result of ditto::linalg::svd and svd_lowrank (declared in
// ditto/ops/composite/decomp.ops.toml): A = U diag(S) V^T.

#include "ditto/core/tensor.h"

namespace ditto::linalg {

struct SVD {
  Tensor U, S, V;
};

} // namespace ditto::linalg
