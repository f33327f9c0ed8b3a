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
// after an error, self is unchanged. The in-place members of the family are
// Tensor methods (ditto/core/tensor.h): t.index_add_(0, idx, src).

// self.index_select(dim, index): rows of self along dim, in index order.
DITTO_API Tensor
index_select(const Tensor& self, int64_t dim, const Tensor& index);

// out[i][j] = self[index[i][j]][j] along dim (torch.gather).
DITTO_API Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);

// self.flatten()[index], shaped like index; negative indices count from the
// end (torch.take).
DITTO_API Tensor take(const Tensor& self, const Tensor& index);

// self[indices] (torch's advanced indexing read, at::index): indices as
// index_put_ takes them (an undefined Tensor is a full slice, int64/int32
// tensors broadcast together, bool masks select their true positions).
DITTO_API Tensor index(const Tensor& self, const std::vector<Tensor>& indices);

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
