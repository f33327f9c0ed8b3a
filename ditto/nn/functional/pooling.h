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
#include <tuple>
#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto::nn::functional {

// Max pooling (ditto::max_pool1d/2d/3d and *_with_indices, declared in
// composite/pooling.ops.toml): the maximum of each window (the first one
// in row-major order on ties, the last NaN if any) and its flat index in
// the input plane (l, h * W + w, (d * H + h) * W + w). Padding counts as
// -inf and must be at most half the kernel. Average pooling (avg_pool1d/
// 2d/3d): each window's sum (in row-major order) divided by
// divisor_override if given, else by the window clipped to the padded input
// (count_include_pad) or by its cells inside the input; the backward
// spreads each output gradient, divided the same way, over its window.
// Adaptive average pooling (adaptive_avg_pool1d/2d/3d): output cell i of a
// dim covers the input bin [floor(i * In / Out), ceil((i + 1) * In / Out))
// (bins may overlap); the average is the bin's sum divided by each dim's
// bin length in turn (sum / kd / kh / kw, PyTorch's rounding), for the
// output and for the gradient. nn::functional names them as LibTorch does.
using ::ditto::adaptive_avg_pool1d;
using ::ditto::adaptive_avg_pool2d;
using ::ditto::adaptive_avg_pool3d;
using ::ditto::avg_pool1d;
using ::ditto::avg_pool2d;
using ::ditto::avg_pool3d;
using ::ditto::max_pool1d;
using ::ditto::max_pool1d_with_indices;
using ::ditto::max_pool2d;
using ::ditto::max_pool2d_with_indices;
using ::ditto::max_pool3d;
using ::ditto::max_pool3d_with_indices;

// The gradients of max_pool2d/3d (and of max_pool1d and the adaptive max
// poolings, through the one of their dims): grad_out added into a zero
// tensor of input_sizes at indices, which index the last two (three) dims'
// planes: max_pool2d_backward and max_pool3d_backward, declared
// (ditto/ops/composite/pooling.ops.toml, ditto/ops/declared.h).

// Adaptive max pooling, as LibTorch's: the maximum of each bin (as
// adaptive average pooling's) and its flat index in the input plane, as
// max pooling (ties and NaN alike), which is ATen's ditto::
// adaptive_max_pool1d/2d/3d; or the maxima alone. The backward is
// max_pool2d_backward's (max_pool3d_backward's for three dims).
DITTO_API std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& x,
    const IntArg& output_size);
DITTO_API std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& output_size);
DITTO_API std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& x,
    const IntArg& output_size);
DITTO_API Tensor
adaptive_max_pool1d(const Tensor& x, const IntArg& output_size);
DITTO_API Tensor
adaptive_max_pool2d(const Tensor& x, const IntArg& output_size);
DITTO_API Tensor
adaptive_max_pool3d(const Tensor& x, const IntArg& output_size);

// Fractional max pooling (Note [Fractional windows] in
// pooling_fractional.cpp):
// kernel_size one value or one per dim; output_size, or else output_ratio
// (each in (0, 1): output int(in * ratio)); random_samples [N, C, dims] in
// [0, 1) of x's dtype (PyTorch's _random_samples), drawn from the default
// generator as PyTorch draws them (rand(N, C, dims)) when undefined: the
// same windows as PyTorch 1.13 on CPU for the same seed. The backward is
// max_pool2d_backward's / max_pool3d_backward's.
DITTO_API std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size = {},
    const std::vector<double>& output_ratio = {},
    const Tensor& random_samples = {});
DITTO_API std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
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
// written. The gradient gathers grad_out at the indices. max_unpool1d is
// declared (ditto/ops/composite/pooling.ops.toml, ditto/ops/declared.h).
DITTO_API Tensor max_unpool2d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& output_size = {});
DITTO_API Tensor max_unpool3d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride = {},
    const IntArg& padding = {0},
    const IntArg& output_size = {});

} // namespace ditto::nn::functional
