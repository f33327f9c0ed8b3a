#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // equal, allclose: shape/shape.ops.toml

namespace ditto {

DITTO_API Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
DITTO_API Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// flip is declared in shape/shape.ops.toml.

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

// Each element of a repeated along dim (a flattened when dim is absent):
// repeats is an int, or an int64 tensor with one count per element along dim
// (or a single count). output_size, when given, must equal the result's
// length along dim (torch's hint that spares a pass over repeats). The
// gradient of each input element sums its copies' gradients in order:
// each input element is written by one task, deterministic without a
// variant.
DITTO_API Tensor repeat_interleave(
    const Tensor& a,
    const Tensor& repeats,
    std::optional<int64_t> dim = std::nullopt,
    std::optional<int64_t> output_size = std::nullopt);
DITTO_API Tensor repeat_interleave(
    const Tensor& a,
    int64_t repeats,
    std::optional<int64_t> dim = std::nullopt,
    std::optional<int64_t> output_size = std::nullopt);
// The indices 0, 1, ... each repeated repeats[i] times (a 1-d int64 tensor
// of counts): repeat_interleave(tensor({2, 3})) is {0, 0, 1, 1, 1}.
DITTO_API Tensor repeat_interleave(
    const Tensor& repeats,
    std::optional<int64_t> output_size = std::nullopt);

// sort, equal and allclose are declared in shape/shape.ops.toml
// (declared.h).

} // namespace ditto
