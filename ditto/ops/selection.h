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

namespace ditto {

// The k-th smallest element (k from 1) along dim and its index.
DITTO_API std::pair<Tensor, Tensor> kthvalue(
    const Tensor& a,
    int64_t k,
    int64_t dim = -1,
    bool keepdim = false);

// The lower median of all elements (NaN if there is one).
DITTO_API Tensor median(const Tensor& a);
DITTO_API std::pair<Tensor, Tensor> median(
    const Tensor& a,
    int64_t dim,
    bool keepdim = false);
// The same, ignoring NaNs (NaN only where everything is).
DITTO_API Tensor nanmedian(const Tensor& a);
DITTO_API std::pair<Tensor, Tensor> nanmedian(
    const Tensor& a,
    int64_t dim,
    bool keepdim = false);

// The most frequent value along dim (the smallest of equally frequent
// ones) and an index of it.
DITTO_API std::pair<Tensor, Tensor> mode(
    const Tensor& a,
    int64_t dim = -1,
    bool keepdim = false);

// The k largest (or smallest) elements along dim and their indices,
// ordered when sorted.
DITTO_API std::pair<Tensor, Tensor> topk(
    const Tensor& a,
    int64_t k,
    int64_t dim = -1,
    bool largest = true,
    bool sorted = true);

// The q-th quantiles of a along dim (of every element when dim is absent),
// as torch.quantile: the values sorted, q mapped to the rank q * (n - 1),
// and interpolation "linear" (lerp between the neighbouring values, as
// torch.lerp: from the lower one when the weight is below 1/2, else from
// the upper), "lower", "higher", "nearest" (ties to even) or "midpoint". A
// NaN in a row makes its quantiles NaN; nanquantile ignores NaNs (NaN only
// where a row is all NaN). q is a number or a 0-d or 1-d tensor of a's
// dtype; a 1-d q puts its dim first in the result. Floating dtypes only.
DITTO_API Tensor quantile(
    const Tensor& a,
    const Tensor& q,
    std::optional<int64_t> dim = std::nullopt,
    bool keepdim = false,
    std::string_view interpolation = "linear");
DITTO_API Tensor quantile(
    const Tensor& a,
    double q,
    std::optional<int64_t> dim = std::nullopt,
    bool keepdim = false,
    std::string_view interpolation = "linear");
DITTO_API Tensor nanquantile(
    const Tensor& a,
    const Tensor& q,
    std::optional<int64_t> dim = std::nullopt,
    bool keepdim = false,
    std::string_view interpolation = "linear");
DITTO_API Tensor nanquantile(
    const Tensor& a,
    double q,
    std::optional<int64_t> dim = std::nullopt,
    bool keepdim = false,
    std::string_view interpolation = "linear");

} // namespace ditto
