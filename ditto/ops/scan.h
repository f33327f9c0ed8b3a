#pragma once

// Scans along a dim: cumsum, cumprod, logcumsumexp, cummax and cummin, with
// PyTorch 1.13's CPU semantics (dtypes, NaN and tie rules, the accumulator:
// double for float32 cumsum and cumprod) and bits that do not depend on the
// thread count or the CPU (Note [Scans in fixed blocks] in scan.cpp): a row
// of up to kScanBlock elements is one serial chain, PyTorch's loop; a longer
// row is cut into blocks of kScanBlock, the blocks' totals are folded in
// order, and each block's chain continues from that offset, so long rows
// run on every thread and the cut depends on the row's length alone.

#include <cstdint>
#include <optional>
#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // logcumsumexp, cummax, cummin: reduce/reduce.ops.toml

namespace ditto {

// The length of one block of a long row's scan (Note [Scans in fixed
// blocks]): rows this long or shorter are one serial chain.
inline constexpr int64_t kScanBlock = 16384;

// Running sum along dim: out[i] = a[0] + ... + a[i]. The result's dtype is
// dtype when given (a is converted to it first), else a's, with integer and
// bool inputs giving int64 (as PyTorch). float32 sums accumulate in double
// and round each output once.
DITTO_API Tensor
cumsum(const Tensor& a, int64_t dim, std::optional<Dtype> dtype = std::nullopt);

// Running product along dim, the same dtype rules (float32 in double).
DITTO_API Tensor cumprod(
    const Tensor& a,
    int64_t dim,
    std::optional<Dtype> dtype = std::nullopt);

// logcumsumexp, cummax and cummin are declared in reduce/reduce.ops.toml
// (generated into declared.h).

} // namespace ditto
