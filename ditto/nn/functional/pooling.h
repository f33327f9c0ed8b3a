#pragma once

// Poolings over the last one, two or three dims, each with its backward:
// max, average, adaptive average and adaptive max pooling of (N, C, L) or
// (C, L), (N, C, H, W) or (C, H, W), (N, C, D, H, W) or (C, D, H, W), and
// max unpooling. stride empty means stride = kernel_size; one value stands
// for every dim. All of them compute one plane (one N x C slice) per task,
// in PyTorch's loop order, so outputs have PyTorch's bits; backwards add
// plane by plane in output order (the same bits for any thread count) or,
// when not deterministic and the planes are fewer than the threads, split a
// plane between threads (Note [Plane scatters] in scatter_engine.h).

#include <optional>
#include <utility>

#include "ditto/core/tensor.h"

namespace ditto::nn::functional {

// Max pooling: the maximum of each window (the first one in row-major
// order on ties, the last NaN if any) and its flat index in the input
// plane (l, h * W + w, (d * H + h) * W + w). Padding counts as -inf and
// must be at most half the kernel.
DITTO_API std::pair<Tensor, Tensor> max_pool1d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& dilation = {1},
    bool ceil_mode = false);
DITTO_API Tensor max_pool1d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& dilation = {1},
    bool ceil_mode = false);
DITTO_API std::pair<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& dilation = {1},
    bool ceil_mode = false);
DITTO_API Tensor max_pool2d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& dilation = {1},
    bool ceil_mode = false);
DITTO_API std::pair<Tensor, Tensor> max_pool3d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& dilation = {1},
    bool ceil_mode = false);
DITTO_API Tensor max_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& dilation = {1},
    bool ceil_mode = false);

// The gradients of max_pool2d/3d (and of max_pool1d and the adaptive max
// poolings, through the one of their dims): grad_out added into a zero
// tensor of input_sizes at indices, which index the last two (three) dims'
// planes.
DITTO_API Tensor max_pool2d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes);
DITTO_API Tensor max_pool3d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes);

// Average pooling: each window's sum (in row-major order) divided by
// divisor_override if given, else by the window clipped to the padded input
// (count_include_pad) or by its cells inside the input. The backward
// spreads each output gradient, divided the same way, over its window.
DITTO_API Tensor avg_pool1d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    bool ceil_mode = false,
    bool count_include_pad = true);
DITTO_API Tensor avg_pool2d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    bool ceil_mode = false,
    bool count_include_pad = true,
    std::optional<int64_t> divisor_override = std::nullopt);
DITTO_API Tensor avg_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    bool ceil_mode = false,
    bool count_include_pad = true,
    std::optional<int64_t> divisor_override = std::nullopt);

// Adaptive pooling: output cell i of a dim covers the input bin
// [floor(i * In / Out), ceil((i + 1) * In / Out)) (bins may overlap).
// output_size one value or one per dim. The average is the bin's sum
// divided by each dim's bin length in turn (sum / kd / kh / kw, PyTorch's
// rounding), for the output and for the gradient.
DITTO_API Tensor
adaptive_avg_pool1d(const Tensor& x, const IntList& output_size);
DITTO_API Tensor
adaptive_avg_pool2d(const Tensor& x, const IntList& output_size);
DITTO_API Tensor
adaptive_avg_pool3d(const Tensor& x, const IntList& output_size);
// The maximum of each bin and its flat index in the input plane, as
// max pooling (ties and NaN alike); the backward is max_pool2d_backward's
// (max_pool3d_backward's for three dims).
DITTO_API std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& x,
    const IntList& output_size);
DITTO_API std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& x,
    const IntList& output_size);
DITTO_API std::pair<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& x,
    const IntList& output_size);
DITTO_API Tensor
adaptive_max_pool1d(const Tensor& x, const IntList& output_size);
DITTO_API Tensor
adaptive_max_pool2d(const Tensor& x, const IntList& output_size);
DITTO_API Tensor
adaptive_max_pool3d(const Tensor& x, const IntList& output_size);

// Fractional max pooling (Note [Fractional windows] in
// pooling_fractional.cpp):
// kernel_size one value or one per dim; output_size, or else output_ratio
// (each in (0, 1): output int(in * ratio)); random_samples [N, C, dims] in
// [0, 1) of x's dtype (PyTorch's _random_samples), drawn from the default
// generator as PyTorch draws them (rand(N, C, dims)) when undefined: the
// same windows as PyTorch 1.13 on CPU for the same seed. The backward is
// max_pool2d_backward's / max_pool3d_backward's.
DITTO_API std::pair<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size = {},
    const std::vector<double>& output_ratio = {},
    const Tensor& random_samples = {});
DITTO_API std::pair<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size = {},
    const std::vector<double>& output_ratio = {},
    const Tensor& random_samples = {});
DITTO_API Tensor fractional_max_pool2d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size = {},
    const std::vector<double>& output_ratio = {},
    const Tensor& random_samples = {});
DITTO_API Tensor fractional_max_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size = {},
    const std::vector<double>& output_ratio = {},
    const Tensor& random_samples = {});

// Max unpooling, the partial inverse of max pooling: a zero tensor of the
// unpooled size with each input element written at its index in its
// plane. The size is (in - 1) * stride - 2 * padding + kernel_size per
// dim, or output_size (the last dims' sizes, each within stride of that
// size, as PyTorch's). Each plane is written serially in input order, so
// of duplicate indices the last one wins, for any thread count: there is
// no nondeterministic path. Every index is checked before anything is
// written. The gradient gathers grad_out at the indices.
DITTO_API Tensor max_unpool1d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntList& output_size = {});
DITTO_API Tensor max_unpool2d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntList& output_size = {});
DITTO_API Tensor max_unpool3d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntList& output_size = {});

} // namespace ditto::nn::functional

namespace ditto {
// torch.max_pool1d/2d/3d, torch.avg_pool1d, torch.adaptive_avg_pool1d.
using nn::functional::adaptive_avg_pool1d;
using nn::functional::avg_pool1d;
using nn::functional::max_pool1d;
using nn::functional::max_pool2d;
using nn::functional::max_pool3d;
} // namespace ditto
