#pragma once

// The transposed convolutions. conv2d and conv3d are ditto/ops/conv.h's,
// named here too.

#include <cstdint>

#include "ditto/core/tensor.h"
#include "ditto/ops/conv.h"

namespace ditto::nn::functional {

using ::ditto::conv2d;
using ::ditto::conv3d;

// The transposed convolution (the gradient of conv2d with respect to its
// input, as a layer): x (N, C_in, H, W), weight (C_in, C_out / groups, kh,
// kw); output size (H - 1) s - 2 p + d (kh - 1) + output_padding + 1 per
// dim. Its backward is conv2d (input) and conv2d_backward_weight (weight):
// the same bits for any thread count.
DITTO_API Tensor conv_transpose2d(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias = {},
    const IntArg& stride = {1},
    const IntArg& padding = {0},
    const IntArg& output_padding = {0},
    int64_t groups = 1,
    const IntArg& dilation = {1});

// The same for sequences: x (N, C_in, L), weight (C_in, C_out / groups, k);
// conv_transpose2d over a height of 1 (its bits and its backward). Each
// size one value (or a list of one).
DITTO_API Tensor conv_transpose1d(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias = {},
    const IntArg& stride = {1},
    const IntArg& padding = {0},
    const IntArg& output_padding = {0},
    int64_t groups = 1,
    const IntArg& dilation = {1});

// The same for volumes: x (N, C_in, D, H, W), weight (C_in, C_out / groups,
// kd, kh, kw); its backward is conv3d and conv3d_backward_weight, every
// direction deterministic (Note [conv3d's one chain]).
DITTO_API Tensor conv_transpose3d(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias = {},
    const IntArg& stride = {1},
    const IntArg& padding = {0},
    const IntArg& output_padding = {0},
    int64_t groups = 1,
    const IntArg& dilation = {1});

} // namespace ditto::nn::functional

namespace ditto {
// torch.conv_transpose2d.
using nn::functional::conv_transpose1d;
using nn::functional::conv_transpose2d;
using nn::functional::conv_transpose3d;
} // namespace ditto
