#pragma once

// Normalizations, each with its backward.

#include <cstdint>

#include "ditto/core/tensor.h"

namespace ditto::nn::functional {

// Batch normalization over dim 1 of x (N, C, ...): PyTorch 1.13's CPU
// arithmetic (docs/nn.md): per channel, the mean and the biased variance
// summed in double in memory order, invstd = 1/sqrt(var + eps), and
// y = fma(x, a, fma(-mean, a, b)) with a = invstd * weight. With training
// (or no running statistics) the batch's statistics are used, and defined
// running_mean/running_var are updated in place with momentum (the
// unbiased variance); otherwise the running statistics are used. weight
// and bias may be undefined (1 and 0). Each channel is reduced by one task:
// the same bits for any thread count.
DITTO_API Tensor batch_norm(
    const Tensor& x,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& weight = {},
    const Tensor& bias = {},
    bool training = false,
    double momentum = 0.1,
    double eps = 1e-5);

// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims of
// normalized_shape (biased variance).
DITTO_API Tensor layer_norm(
    const Tensor& x,
    const Shape& normalized_shape,
    const Tensor& weight = {},
    const Tensor& bias = {},
    double eps = 1e-5);

// Normalizes each of num_groups channel groups of x (N, C, ...) per sample,
// then applies the per-channel weight and bias.
DITTO_API Tensor group_norm(
    const Tensor& x,
    int64_t num_groups,
    const Tensor& weight = {},
    const Tensor& bias = {},
    double eps = 1e-5);

// x / max(||x||_2 along dim, eps).
DITTO_API Tensor
normalize(const Tensor& x, int64_t dim = 1, double eps = 1e-12);

} // namespace ditto::nn::functional

namespace ditto {
// torch.batch_norm, torch.layer_norm, torch.group_norm.
using nn::functional::batch_norm;
using nn::functional::group_norm;
using nn::functional::layer_norm;
} // namespace ditto
