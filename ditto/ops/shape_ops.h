#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto {

DITTO_API Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
DITTO_API Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
DITTO_API Tensor flip(const Tensor& a, const IntList& dims);

// Pads the last dims: {left, right} for the last dim, then {left, right} for
// the one before, as torch.nn.functional.pad. mode is "constant",
// "reflect" (the edge not repeated; pads below the size) or "replicate"
// (the edge repeated). The backward of reflect and replicate adds into the
// input gradient with index_add_, whose variant the determinism policy
// picks.
DITTO_API Tensor
pad(const Tensor& a,
    const IntList& pads,
    std::string_view mode = "constant",
    double value = 0.0);

// Stable sort along dim; returns values and int64 indices. NaNs sort last
// (first when descending), as in PyTorch.
DITTO_API std::pair<Tensor, Tensor> sort(
    const Tensor& a,
    int64_t dim = -1,
    bool descending = false);

// Same shape, dtype and values (NaN != NaN, as torch.equal).
DITTO_API bool equal(const Tensor& a, const Tensor& b);
// |a - b| <= atol + rtol * |b| elementwise, with broadcasting.
DITTO_API bool allclose(
    const Tensor& a,
    const Tensor& b,
    double rtol = 1e-5,
    double atol = 1e-8,
    bool equal_nan = false);

} // namespace ditto
