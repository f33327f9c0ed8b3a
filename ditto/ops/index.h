#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ditto/core/scalar.h"
#include "ditto/core/tensor.h"

namespace ditto {

// The scatter/index family. Ops that combine several values into one
// destination have two variants (docs/determinism.md): with the
// deterministic mode on, every destination receives its values in index
// order, the bits of the serial loop for any thread count; with it off,
// threads combine values in whatever order they get there (faster under
// some loads, not reproducible for floating types; integer sums, products
// and extrema are exact either way). Ops where duplicate indices pick a
// winner (index_copy_, scatter_ with a tensor src, index_put_ and put_
// without accumulate) keep the last occurrence in index order in the
// deterministic variant. Indices are validated before anything is written:
// after an error, self is unchanged.

// self.index_select(dim, index): rows of self along dim, in index order.
DITTO_API Tensor
index_select(const Tensor& self, int64_t dim, const Tensor& index);

// out[i][j] = self[index[i][j]][j] along dim (torch.gather).
DITTO_API Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);

// self.flatten()[index], shaped like index; negative indices count from the
// end (torch.take).
DITTO_API Tensor take(const Tensor& self, const Tensor& index);

// self[index[i]] += alpha * source[i] along dim.
DITTO_API Tensor& index_add_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    const Scalar& alpha = 1);

// self[index[i]] = source[i] along dim.
DITTO_API Tensor& index_copy_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source);

// self[index[i][j]][j] += src[i][j] along dim (torch.Tensor.scatter_add_).
DITTO_API Tensor& scatter_add_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src);

// self[index[i][j]][j] = src[i][j] along dim.
DITTO_API Tensor& scatter_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src);
// self[index[i][j]][j] = value.
DITTO_API Tensor& scatter_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Scalar& value);

// Reduces src into self at index along dim with reduce "sum", "prod",
// "mean", "amax" or "amin" (torch.Tensor.scatter_reduce_). include_self =
// false leaves self's value out of the reduction at scattered positions;
// integer means use floor division, as PyTorch.
DITTO_API Tensor& scatter_reduce_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    std::string_view reduce,
    bool include_self = true);

// self[indices] = values (or += with accumulate), with PyTorch's advanced
// indexing: an undefined Tensor in indices is a full slice (":"), int64 or
// int32 tensors broadcast together, bool masks select their true positions;
// negative indices count from the end.
DITTO_API Tensor& index_put_(
    Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate = false);

// self.flatten()[index] = source (or += with accumulate).
DITTO_API Tensor& put_(
    Tensor& self,
    const Tensor& index,
    const Tensor& source,
    bool accumulate = false);

// self[mask] = value, mask (bool) broadcast to self's shape.
DITTO_API Tensor& masked_fill_(
    Tensor& self,
    const Tensor& mask,
    const Scalar& value);

// The elements of self where mask (broadcast together) is true, 1-d, in
// row-major order.
DITTO_API Tensor masked_select(const Tensor& self, const Tensor& mask);

// Counts of each value of a 1-d non-negative integer input (int64), or the
// sums of weights per value (float32 for float32 weights, float64
// otherwise); at least minlength bins.
DITTO_API Tensor bincount(
    const Tensor& input,
    const Tensor& weights = {},
    int64_t minlength = 0);

// Histogram of a floating input in `bins` equal bins over [min, max] (the
// data's range when min == max), values outside and NaN not counted.
// Counts are exact integers whatever the thread count.
DITTO_API Tensor
histc(const Tensor& input, int64_t bins = 100, double min = 0, double max = 0);

// Sums, means or maxima of bags of weight rows (torch.nn.functional.
// embedding_bag): input 1-d with offsets (bag b is input[offsets[b] :
// offsets[b + 1]]) or 2-d (a bag per row, offsets undefined). mode "sum",
// "mean" or "max"; per_sample_weights scale rows in mode sum; entries equal
// to padding_idx are skipped; empty bags give zeros. Output [bags, dim].
DITTO_API Tensor embedding_bag(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& offsets = {},
    std::string_view mode = "mean",
    const Tensor& per_sample_weights = {},
    bool include_last_offset = false,
    std::optional<int64_t> padding_idx = std::nullopt);

} // namespace ditto
