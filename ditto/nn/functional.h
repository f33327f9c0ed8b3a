#pragma once

// nn::functional: PyTorch's torch.nn.functional for ditto tensors. Losses
// take LibTorch-style options; every function records its gradient.

#include <optional>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/nn/options.h"
#include "ditto/ops/nn_ops.h"
#include "ditto/random/generator.h"

namespace ditto::nn::functional {

using ::ditto::Reduction;

// ---- activations
DITTO_API Tensor relu(const Tensor& x);
DITTO_API Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
DITTO_API Tensor silu(const Tensor& x);
// x/2 (1 + erf(x/sqrt(2))), or with approximate "tanh"
// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as PyTorch.
DITTO_API Tensor gelu(const Tensor& x, std::string_view approximate = "none");
DITTO_API Tensor sigmoid(const Tensor& x);
DITTO_API Tensor tanh(const Tensor& x);
DITTO_API Tensor softmax(const Tensor& x, int64_t dim);
DITTO_API Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- layers as functions
DITTO_API Tensor
linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
// Zeroes elements with probability p while training (PyTorch's mask bits).
DITTO_API Tensor dropout(
    const Tensor& x,
    double p = 0.5,
    bool training = true,
    const std::optional<Generator>& gen = {});
DITTO_API Tensor max_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride = {},
    const IntList& padding = {0},
    const IntList& dilation = {1},
    bool ceil_mode = false);
// Zeroes whole channels of (N, C, H, W) with probability p while training
// (one Bernoulli draw per channel). A 3-D input is taken as (N, C, L), as
// PyTorch 1.13 does.
DITTO_API Tensor dropout2d(
    const Tensor& x,
    double p = 0.5,
    bool training = true,
    const std::optional<Generator>& gen = {});
DITTO_API Tensor avg_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride = {},
    const IntList& padding = {0},
    bool ceil_mode = false,
    bool count_include_pad = true,
    std::optional<int64_t> divisor_override = std::nullopt);
DITTO_API Tensor
adaptive_avg_pool2d(const Tensor& x, const IntList& output_size);
DITTO_API Tensor embedding(
    const Tensor& indices,
    const Tensor& weight,
    std::optional<int64_t> padding_idx = std::nullopt);
DITTO_API Tensor batch_norm(
    const Tensor& x,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& weight = {},
    const Tensor& bias = {},
    bool training = false,
    double momentum = 0.1,
    double eps = 1e-5);
DITTO_API Tensor layer_norm(
    const Tensor& x,
    const Shape& normalized_shape,
    const Tensor& weight = {},
    const Tensor& bias = {},
    double eps = 1e-5);
DITTO_API Tensor group_norm(
    const Tensor& x,
    int64_t num_groups,
    const Tensor& weight = {},
    const Tensor& bias = {},
    double eps = 1e-5);
// Pads the last dims, {left, right} of the last dim first; mode
// "constant", "reflect" or "replicate".
DITTO_API Tensor
pad(const Tensor& x,
    const IntList& pads,
    std::string_view mode = "constant",
    double value = 0.0);
using ::ditto::InterpolateMode;
struct DITTO_API InterpolateOptions {
  // Exactly one of size (one or two values) and scale_factor.
  DITTO_NN_ARG(IntList, size);
  DITTO_NN_ARG(std::vector<double>, scale_factor);
  DITTO_NN_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  // Bilinear only; false when unset.
  DITTO_NN_ARG(std::optional<bool>, align_corners);
  // Map indices with in / out instead of 1 / scale_factor.
  DITTO_NN_ARG(bool, recompute_scale_factor) = false;
};
// Resizes the last two dims of (N, C, H, W): output size from size, or
// floor(in * scale_factor).
DITTO_API Tensor
interpolate(const Tensor& x, const InterpolateOptions& options);

using ::ditto::GridSampleMode;
using ::ditto::GridSamplePadding;
struct DITTO_API GridSampleOptions {
  DITTO_NN_ARG(GridSampleMode, mode) = GridSampleMode::Bilinear;
  DITTO_NN_ARG(GridSamplePadding, padding_mode) = GridSamplePadding::Zeros;
  DITTO_NN_ARG(bool, align_corners) = false;
};
DITTO_API Tensor grid_sample(
    const Tensor& input,
    const Tensor& grid,
    const GridSampleOptions& options = {});
DITTO_API Tensor
affine_grid(const Tensor& theta, const Shape& size, bool align_corners = false);

// x / max(||x||_2 along dim, eps).
DITTO_API Tensor
normalize(const Tensor& x, int64_t dim = 1, double eps = 1e-12);
// int64 class indices -> (..., num_classes) int64 one-hot; num_classes -1
// means max + 1.
DITTO_API Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// ---- losses
struct DITTO_API CrossEntropyOptions {
  // Per-class weights (C).
  DITTO_NN_ARG(Tensor, weight);
  DITTO_NN_ARG(int64_t, ignore_index) = -100;
  DITTO_NN_ARG(Reduction, reduction) = Reduction::Mean;
  DITTO_NN_ARG(double, label_smoothing) = 0.0;
};
// Class indices (int64, N or N x d...) or class probabilities (the shape
// of input) as target; PyTorch's formulas, including label smoothing and
// the weighted mean.
DITTO_API Tensor cross_entropy(
    const Tensor& input,
    const Tensor& target,
    const CrossEntropyOptions& options = {});

struct DITTO_API NLLLossOptions {
  DITTO_NN_ARG(Tensor, weight);
  DITTO_NN_ARG(int64_t, ignore_index) = -100;
  DITTO_NN_ARG(Reduction, reduction) = Reduction::Mean;
};
DITTO_API Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const NLLLossOptions& options = {});

DITTO_API Tensor mse_loss(
    const Tensor& input,
    const Tensor& target,
    Reduction reduction = Reduction::Mean);
DITTO_API Tensor l1_loss(
    const Tensor& input,
    const Tensor& target,
    Reduction reduction = Reduction::Mean);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: l1).
DITTO_API Tensor smooth_l1_loss(
    const Tensor& input,
    const Tensor& target,
    Reduction reduction = Reduction::Mean,
    double beta = 1.0);

struct DITTO_API BCEWithLogitsOptions {
  DITTO_NN_ARG(Tensor, weight);
  DITTO_NN_ARG(Tensor, pos_weight);
  DITTO_NN_ARG(Reduction, reduction) = Reduction::Mean;
};
// PyTorch's stable form, op for op (bit-exact with PyTorch in float32).
DITTO_API Tensor binary_cross_entropy_with_logits(
    const Tensor& input,
    const Tensor& target,
    const BCEWithLogitsOptions& options = {});

// KL divergence with input as log-probabilities. batchmean divides the sum
// by the batch size (what the math means); Mean divides by the number of
// elements, as PyTorch's 'mean'.
enum class KLDivReduction { None, BatchMean, Sum, Mean };
DITTO_API Tensor kl_div(
    const Tensor& input,
    const Tensor& target,
    KLDivReduction reduction = KLDivReduction::Mean,
    bool log_target = false);

// Connectionist temporal classification loss (PyTorch's F.ctc_loss):
// log_probs (T, N, C) log-softmax outputs, targets int64 padded (N, S) or
// concatenated (sum of target_lengths), one input and one target length
// per sample. Per sample, the negative log-likelihood of its target over
// all alignments (+inf when none fits); zero_infinity turns those (and
// their gradients) into 0. Mean divides each loss by its target length
// (at least 1), then averages. The gradient is PyTorch's; the same bits
// for any thread count.
DITTO_API Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths,
    int64_t blank = 0,
    Reduction reduction = Reduction::Mean,
    bool zero_infinity = false);
// The lengths as 1-D integer tensors.
DITTO_API Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const Tensor& input_lengths,
    const Tensor& target_lengths,
    int64_t blank = 0,
    Reduction reduction = Reduction::Mean,
    bool zero_infinity = false);

} // namespace ditto::nn::functional
