#pragma once

// The convolutions of nn::functional: ditto/ops/conv.h's, named here.

#include <cstdint>

#include "ditto/core/tensor.h"
#include "ditto/ops/conv.h"

namespace ditto::nn::functional {

// conv2d and conv3d, and the transposed convolutions (the gradient of a
// convolution with respect to its input, as a layer: x (N, C_in, ...),
// weight (C_in, C_out / groups, k...); output size (in - 1) s - 2 p +
// d (k - 1) + output_padding + 1 per dim; the backward is the convolution
// (input) and its weight gradient (weight): the same bits for any thread
// count), declared in ops/conv/conv.ops.toml: nn::functional names them as
// LibTorch does. conv_transpose1d is conv_transpose2d over a height of 1.
using ::ditto::conv2d;
using ::ditto::conv3d;
using ::ditto::conv_transpose1d;
using ::ditto::conv_transpose2d;
using ::ditto::conv_transpose3d;

} // namespace ditto::nn::functional
