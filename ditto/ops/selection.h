#pragma once

// Order statistics along a dim: kthvalue, median and nanmedian (with
// indices), mode, topk and quantile, with PyTorch 1.13's CPU algorithms, so
// that of tied values the same index comes back as in PyTorch (the rules:
// docs/determinism.md): kthvalue partitions with PyTorch's quickselect
// (Sedgewick's, median of three); median and nanmedian take the element of rank
// (n - 1) / 2 in (value, index) order (a NaN, the first one, when median
// meets one; nanmedian ranks NaNs last and skips them); mode is the last
// element of the most frequent value's run after std::sort by value; topk
// uses std::partial_sort (k * 64 <= n) or std::nth_element and std::sort,
// NaN counting as the largest. Each row is one task: the same result for
// any thread count. Gradients flow to the chosen elements (median and
// nanmedian over all elements: spread evenly over every element equal to
// the result, as PyTorch's).

#include <optional>
#include <string_view>
#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto {

// kthvalue, median, nanmedian, mode, topk, quantile and nanquantile (with
// their overloads) are declared in reduce/reduce.ops.toml (declared.h).
// Each row is one task over a stable sort or a selection, so the results do
// not depend on the thread count; ties take the first index, a NaN sorts
// last, as torch's CPU kernels.

} // namespace ditto
