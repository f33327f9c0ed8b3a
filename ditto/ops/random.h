#pragma once

#include <optional>

#include "ditto/core/tensor.h"
#include "ditto/random/generator.h"

namespace ditto {

// Every random op takes an optional generator last; without one it draws
// from the current thread's default generator (ditto::default_generator()).
// With an mt19937 generator the values are PyTorch 1.13's on CPU, bit for
// bit: ditto::manual_seed(0); ditto::rand({3}) is torch.rand(3) after
// torch.manual_seed(0).

// Uniform on [0, 1); float32 or float64.
DITTO_API Tensor rand(
    const Shape& shape,
    Dtype dtype = kFloat32,
    const std::optional<Generator>& gen = {});
DITTO_API Tensor
rand_like(const Tensor& t, const std::optional<Generator>& gen = {});

} // namespace ditto
