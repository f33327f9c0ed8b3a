#pragma once

// nn::init: PyTorch's initializers, drawing exactly as PyTorch 1.13 does
// (the same helper arithmetic in double, the same fills), so the same seed
// gives the same bits. Each fills t in place without recording a gradient,
// takes an optional generator (default: the thread's default one), and
// returns t.

#include <optional>
#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/random/generator.h"

namespace ditto::nn::init {

enum class Nonlinearity {
  Linear,
  Conv1d,
  Conv2d,
  Conv3d,
  ConvTranspose1d,
  ConvTranspose2d,
  ConvTranspose3d,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU,
  SELU
};
enum class FanMode { FanIn, FanOut };

// PyTorch's calculate_gain: 1 for linear, conv and sigmoid; 5/3 for tanh;
// sqrt(2) for relu; sqrt(2 / (1 + slope^2)) for leaky_relu (slope = param,
// default 0.01); 3/4 for selu.
DITTO_API double calculate_gain(
    Nonlinearity nonlinearity,
    std::optional<double> param = std::nullopt);
// (fan_in, fan_out) = (size(1), size(0)) times the product of the other
// sizes. ValueError for fewer than 2 dims.
DITTO_API std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(
    const Tensor& t);

using OptGen = std::optional<Generator>;

DITTO_API Tensor uniform_(
    const Tensor& t,
    double a = 0.0,
    double b = 1.0,
    const OptGen& gen = {});
DITTO_API Tensor normal_(
    const Tensor& t,
    double mean = 0.0,
    double std = 1.0,
    const OptGen& gen = {});
DITTO_API Tensor constant_(const Tensor& t, double value);
DITTO_API Tensor zeros_(const Tensor& t);
DITTO_API Tensor ones_(const Tensor& t);
// The identity matrix (2-D tensors).
DITTO_API Tensor eye_(const Tensor& t);
// uniform(-bound, bound) with bound = sqrt(3) * gain / sqrt(fan); a is the
// leaky_relu slope. A tensor with a zero size is left alone (no draws).
DITTO_API Tensor kaiming_uniform_(
    const Tensor& t,
    double a = 0.0,
    FanMode mode = FanMode::FanIn,
    Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
    const OptGen& gen = {});
DITTO_API Tensor kaiming_normal_(
    const Tensor& t,
    double a = 0.0,
    FanMode mode = FanMode::FanIn,
    Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
    const OptGen& gen = {});
DITTO_API Tensor
xavier_uniform_(const Tensor& t, double gain = 1.0, const OptGen& gen = {});
DITTO_API Tensor
xavier_normal_(const Tensor& t, double gain = 1.0, const OptGen& gen = {});

// A normal(mean, std) truncated to [a, b], as PyTorch 1.13: one uniform
// fill between the bounds' CDF values, then erfinv (PyTorch's, with glibc:
// docs/numerics.md), scaled, shifted and clamped.
DITTO_API Tensor trunc_normal_(
    const Tensor& t,
    double mean = 0.0,
    double std = 1.0,
    double a = -2.0,
    double b = 2.0,
    const OptGen& gen = {});
// A (semi-)orthogonal matrix from the QR decomposition of one normal
// fill, signs fixed by R's diagonal, times gain (tensors of 2+ dims are
// viewed as rows x the rest). Equals PyTorch's to rounding (its QR is
// LAPACK's); the generator ends in PyTorch's state.
DITTO_API Tensor
orthogonal_(const Tensor& t, double gain = 1.0, const OptGen& gen = {});

} // namespace ditto::nn::init
