#pragma once

// Dropout: random zeroing while training, from the given generator or the
// default one.

#include <optional>

#include "ditto/core/tensor.h"
#include "ditto/random/generator.h"

namespace ditto::nn::functional {

// Zeroes elements with probability p and scales the rest by 1/(1-p) while
// training; returns x itself when p == 0 or !training. PyTorch's CPU mask.
// (ditto::dropout is torch.dropout: p and train required.)
DITTO_API Tensor dropout(
    const Tensor& x,
    double p = 0.5,
    bool training = true,
    const std::optional<Generator>& gen = {});
// Zeroes whole channels of (N, C, H, W) with probability p while training
// (one Bernoulli draw per channel). A 3-D input is taken as (N, C, L), as
// PyTorch 1.13 does.
DITTO_API Tensor dropout2d(
    const Tensor& x,
    double p = 0.5,
    bool training = true,
    const std::optional<Generator>& gen = {});

} // namespace ditto::nn::functional
