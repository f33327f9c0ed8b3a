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

DITTO_API Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
DITTO_API Tensor silu(const Tensor& x);
// x/2 (1 + erf(x/sqrt(2))), or with approximate "tanh"
// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch.
DITTO_API Tensor gelu(const Tensor& x, std::string_view approximate = "none");

// log(softmax(x)) along dim, as (x - max) - log(sum(exp(x - max))).
// Floating types only.
DITTO_API Tensor log_softmax(const Tensor& x, int64_t dim);
// exp(x - max) / sum(exp(x - max)) along dim.
DITTO_API Tensor softmax(const Tensor& x, int64_t dim);

} // namespace ditto::nn::functional

namespace ditto {
// torch.softmax, torch.log_softmax.
using nn::functional::log_softmax;
using nn::functional::softmax;
} // namespace ditto
