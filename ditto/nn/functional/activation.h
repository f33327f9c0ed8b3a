#pragma once

// Activations of nn::functional, each with its backward. relu, sigmoid and
// tanh are elementwise ops (ditto/ops/elementwise.h), named here too.

#include <string_view>

#include "ditto/core/tensor.h"
#include "ditto/ops/elementwise.h"

namespace ditto::nn::functional {

using ::ditto::relu;
using ::ditto::sigmoid;
using ::ditto::tanh;
// Declared in ditto/ops/composite/activation.ops.toml (declared.h):
// leaky_relu(x, negative_slope = 0.01), silu(x), gelu(x, approximate =
// "none": x/2 (1 + erf(x/sqrt(2))), or "tanh": PyTorch's tanh form), and
// softmax/log_softmax(x, dim, dtype = nullopt) along dim, floating types.
using ::ditto::gelu;
using ::ditto::leaky_relu;
using ::ditto::log_softmax;
using ::ditto::silu;
using ::ditto::softmax;

} // namespace ditto::nn::functional
