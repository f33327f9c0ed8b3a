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

// cumsum and cumprod (running sum and product along dim, their in-place
// forms), logcumsumexp, cummax and cummin are declared in
// reduce/reduce.ops.toml (generated into declared.h). The result's dtype is
// dtype when given (the input is converted to it first), else the input's,
// with integer and bool inputs giving int64 (as PyTorch). float32 scans
// accumulate in double and round each output once.

} // namespace ditto
