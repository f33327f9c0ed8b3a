#pragma once

// The ops behind ditto::nn: softmax, losses and pooling, each with its
// backward. ditto/nn/functional.h has PyTorch's functional forms on top.

#include <utility>

#include "ditto/core/tensor.h"

namespace ditto {

// How a loss reduces its per-element values (PyTorch's reduction=).
enum class Reduction { None, Mean, Sum };
DITTO_API const char* reduction_name(Reduction r);

// log(softmax(x)) along dim, as (x - max) - log(sum(exp(x - max))).
// Floating types only.
DITTO_API Tensor log_softmax(const Tensor& x, int64_t dim);
// exp(x - max) / sum(exp(x - max)) along dim.
DITTO_API Tensor softmax(const Tensor& x, int64_t dim);

// Negative log-likelihood of log-probabilities input (N, C) or
// (N, C, d1, ...) at int64 class indices target (N) or (N, d1, ...):
// -weight[t] * input[n, t, ...], 0 where t == ignore_index. Mean divides by
// the summed weights of the counted targets (NaN if there are none).
// Sums run in double in element order, whatever the thread count.
DITTO_API Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight = {},
    int64_t ignore_index = -100,
    Reduction reduction = Reduction::Mean);

// Max pooling over the last two dims of (N, C, H, W) or (C, H, W): the
// maximum of each window (the first one in row-major order on ties, the
// last NaN if any) and its flat index h * W + w in the input plane. stride
// empty means stride = kernel_size; one value stands for both dims.
// Padding counts as -inf and must be at most half the kernel.
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

// The output length of a pooling window along one dim (PyTorch's formula,
// with ceil_mode's rule that the last window starts inside the input or
// the left padding). ValueError naming op if it is below 1.
DITTO_API int64_t pooling_output_size(
    int64_t in,
    int64_t kernel,
    int64_t stride,
    int64_t pad,
    int64_t dilation,
    bool ceil_mode,
    const char* op);

} // namespace ditto
