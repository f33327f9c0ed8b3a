#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // equal, allclose: shape/shape.ops.toml

namespace ditto {

// cat (concat) and stack are declared in shape/shape.ops.toml.
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

// repeat_interleave (its three overloads) is declared in
// index/index.ops.toml.

// sort, equal and allclose are declared in shape/shape.ops.toml
// (declared.h).

} // namespace ditto
