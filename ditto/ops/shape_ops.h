#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // equal ... pad: shape/shape.ops.toml

namespace ditto {

// cat (concat) and stack are declared in shape/shape.ops.toml.
// flip is declared in shape/shape.ops.toml.

// pad (torch.nn.functional.pad, LibTorch's torch::pad) is declared in
// shape/shape.ops.toml.

// repeat_interleave (its three overloads) is declared in
// index/index.ops.toml.

// sort, equal and allclose are declared in shape/shape.ops.toml
// (declared.h).

} // namespace ditto
