#pragma once

// Internal: what the transformer layers share (attention.cpp,
// transformer.cpp).

#include "ditto/core/tensor.h"
#include "ditto/nn/modules/attention.h"

namespace ditto::nn {

// The feed-forward activation: LibTorch's kReLU and kGELU, or the function
// given.
Tensor transformer_activation(const TransformerActivation& a, const Tensor& h);

} // namespace ditto::nn
