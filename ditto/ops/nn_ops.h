#pragma once

// The ops behind ditto::nn: softmax, losses and pooling, each with its
// backward. ditto/nn/functional.h has PyTorch's functional forms on top.

#include <optional>
#include <utility>
#include <vector>

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

namespace ditto {

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
    const Tensor& weight,
    const Tensor& bias,
    bool training,
    double momentum,
    double eps);

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

} // namespace ditto

namespace ditto {

// Rows of weight (num, dim) at int64 indices: output indices.sizes + {dim}.
// The backward adds each gradient row into its weight row with index_add_
// (its deterministic or fast variant, as the policy says); rows at
// padding_idx get no gradient.
DITTO_API Tensor embedding(
    const Tensor& weight,
    const Tensor& indices,
    std::optional<int64_t> padding_idx = std::nullopt);

// Average pooling over the last two dims of (N, C, H, W) or (C, H, W): each
// window's sum divided by divisor_override if given, else by the window
// clipped to the padded input (count_include_pad) or by its cells inside
// the input. The backward spreads each output gradient over its window,
// plane by plane in output order: the same bits for any thread count.
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

} // namespace ditto

namespace ditto {

// The transposed convolution (the gradient of conv2d with respect to its
// input, as a layer): x (N, C_in, H, W), weight (C_in, C_out / groups, kh,
// kw); output size (H - 1) s - 2 p + d (kh - 1) + output_padding + 1 per
// dim. Its backward is conv2d (input) and conv2d_backward_weight (weight):
// the same bits for any thread count.
DITTO_API Tensor conv_transpose2d(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias = {},
    const IntList& stride = {1},
    const IntList& padding = {0},
    const IntList& output_padding = {0},
    int64_t groups = 1,
    const IntList& dilation = {1});

} // namespace ditto

namespace ditto {

enum class InterpolateMode { Nearest, NearestExact, Bilinear };

// Resizes the last two dims of (N, C, H, W) to (out_h, out_w): PyTorch's
// index mapping (docs/nn.md). scale_h/scale_w, when given, are the scale
// factors the user passed (PyTorch maps indices with 1/scale then);
// align_corners only for Bilinear. The backward adds each output gradient
// into its source cells, plane by plane in output order: the same bits
// for any thread count.
DITTO_API Tensor upsample2d(
    const Tensor& x,
    int64_t out_h,
    int64_t out_w,
    InterpolateMode mode,
    bool align_corners = false,
    std::optional<double> scale_h = std::nullopt,
    std::optional<double> scale_w = std::nullopt);

} // namespace ditto

namespace ditto {

enum class GridSampleMode { Bilinear, Nearest };
enum class GridSamplePadding { Zeros, Border, Reflection };

// Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) points (x, y) in
// [-1, 1]: PyTorch's unnormalization, padding and weights. Gradients for
// input and grid (bilinear); the input gradient is summed per plane in
// output order, the grid gradient per point over channels in order: the
// same bits for any thread count.
DITTO_API Tensor grid_sample(
    const Tensor& input,
    const Tensor& grid,
    GridSampleMode mode = GridSampleMode::Bilinear,
    GridSamplePadding padding = GridSamplePadding::Zeros,
    bool align_corners = false);

// The sampling grid (N, H, W, 2) of the affine maps theta (N, 2, 3) for an
// output of size (N, C, H, W).
DITTO_API Tensor
affine_grid(const Tensor& theta, const Shape& size, bool align_corners = false);

} // namespace ditto

namespace ditto {

// The inverse error function with PyTorch 1.13's algorithm (a rational
// first guess, two Newton steps), PyTorch's bits: it calls glibc's erf, exp,
// log and sqrt as ATen does (docs/numerics.md, "The libm calls left").
DITTO_API Tensor erfinv(const Tensor& x);

} // namespace ditto

namespace ditto {
// The LSTM cell's gates, fused: gates (B, 4H) pre-activation in PyTorch's
// order i, f, g, o and c (B, H) give (h', c') with c' = s(f) c + s(i)
// tanh(g), h' = s(o) tanh(c') (s: sigmoid; ditto's own sigmoid and tanh).
DITTO_API std::pair<Tensor, Tensor> lstm_cell_gates(
    const Tensor& gates,
    const Tensor& c);
// The GRU cell's gates, fused: gi = W_ih x + b_ih and gh = W_hh h + b_hh
// (B, 3H) in PyTorch's order r, z, n, and h (B, H) give
// h' = (1 - z) n + z h with r = s(gi_r + gh_r), z = s(gi_z + gh_z),
// n = tanh(gi_n + r gh_n).
DITTO_API Tensor
gru_cell_gates(const Tensor& gi, const Tensor& gh, const Tensor& h);
// x cut along dim 0 into consecutive blocks of rows[i] rows (copies). The
// backward concatenates the blocks' gradients: one op for what per-block
// narrows would do with one full-size gradient each (the recurrent layers'
// steps).
DITTO_API std::vector<Tensor> split_rows(
    const Tensor& x,
    const std::vector<int64_t>& rows);
// PyTorch's _ctc_loss: the negative log-likelihood of each sample's target
// under log_probs (T, N, C), by the alpha recursion in log space (PyTorch's
// CPU arithmetic, ditto's own exp and log). targets: int64, padded (N, S)
// or concatenated (sum of target_lengths). The backward is PyTorch's
// ctc_loss_backward_cpu (beta recursion); with zero_infinity an infinite
// loss gets a zero gradient. Samples run in parallel, each one serially:
// the same bits for any thread count.
DITTO_API Tensor ctc_loss_nll(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths,
    int64_t blank = 0,
    bool zero_infinity = false);
} // namespace ditto
