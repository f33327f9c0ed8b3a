#pragma once

// Poolings over the last two dims of (N, C, H, W) or (C, H, W), each with
// its backward. stride empty means stride = kernel_size; one value stands
// for both dims.

#include <optional>
#include <utility>

#include "ditto/core/tensor.h"

namespace ditto::nn::functional {

// Max pooling: the maximum of each window (the first one in row-major
// order on ties, the last NaN if any) and its flat index h * W + w in the
// input plane. Padding counts as -inf and must be at most half the kernel.
DITTO_API std::pair<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride = {},
    const IntList& padding = {0},
    const IntList& dilation = {1},
    bool ceil_mode = false);
DITTO_API Tensor max_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride = {},
    const IntList& padding = {0},
    const IntList& dilation = {1},
    bool ceil_mode = false);

// The gradient of max_pool2d: grad_out added into a zero tensor of
// input_sizes at indices, plane by plane (each plane's additions in output
// order: the same bits for any thread count).
DITTO_API Tensor max_pool2d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes);

// Average pooling: each window's sum divided by divisor_override if given,
// else by the window clipped to the padded input (count_include_pad) or by
// its cells inside the input. The backward spreads each output gradient
// over its window, plane by plane in output order: the same bits for any
// thread count.
DITTO_API Tensor avg_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride = {},
    const IntList& padding = {0},
    bool ceil_mode = false,
    bool count_include_pad = true,
    std::optional<int64_t> divisor_override = std::nullopt);

// Mean over the bin [floor(i * In / Out), ceil((i + 1) * In / Out)) of each
// output cell, per dim (bins may overlap). output_size one or two values.
DITTO_API Tensor
adaptive_avg_pool2d(const Tensor& x, const IntList& output_size);

} // namespace ditto::nn::functional

namespace ditto {
// torch.max_pool2d.
using nn::functional::max_pool2d;
} // namespace ditto
