#pragma once

// Losses of nn::functional, PyTorch's formulas, each with its gradient.
// Losses take LibTorch-style options where PyTorch's take several keyword
// arguments.

#include <cstdint>
#include <vector>

#include "ditto/core/options.h"
#include "ditto/core/reduction.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto::nn::functional {

// How a loss reduces its per-element values (PyTorch's reduction=).
enum class Reduction { None, Mean, Sum };
DITTO_API const char* reduction_name(Reduction r);

struct DITTO_API NLLLossOptions {
  DITTO_NN_ARG(Tensor, weight);
  DITTO_NN_ARG(int64_t, ignore_index) = -100;
  DITTO_NN_ARG(Reduction, reduction) = Reduction::Mean;
};
// Negative log-likelihood of log-probabilities input (N, C) or
// (N, C, d1, ...) at int64 class indices target (N) or (N, d1, ...):
// -weight[t] * input[n, t, ...], 0 where t == ignore_index. Mean divides by
// the summed weights of the counted targets (NaN if there are none).
// Sums run in double in element order, whatever the thread count.
DITTO_API Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const NLLLossOptions& options = {});

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

struct DITTO_API BinaryCrossEntropyFuncOptions {
  BinaryCrossEntropyFuncOptions(Reduction reduction = Reduction::Mean)
      : reduction_(reduction) {}
  DITTO_NN_ARG(Tensor, weight);
  DITTO_NN_ARG(Reduction, reduction);
};
// -w (t log(x) + (1 - t) log(1 - x)) of probabilities x in [0, 1], each log
// clamped to at least -100 (PyTorch's rule: a 0 or 1 gives a finite loss).
// ValueError for an input outside [0, 1] or a shape mismatch.
DITTO_API Tensor binary_cross_entropy(
    const Tensor& input,
    const Tensor& target,
    const BinaryCrossEntropyFuncOptions& options = {});

// ---- LibTorch's option names (torch::nn::functional::MSELossFuncOptions,
// torch::nn::CrossEntropyLossOptions, ...): reduction as torch::kMean,
// torch::kSum or torch::kNone.
struct DITTO_API MSELossOptions {
  MSELossOptions(Reduction reduction = Reduction::Mean)
      : reduction_(reduction) {}
  DITTO_NN_ARG(Reduction, reduction);
};
struct DITTO_API L1LossOptions {
  L1LossOptions(Reduction reduction = Reduction::Mean)
      : reduction_(reduction) {}
  DITTO_NN_ARG(Reduction, reduction);
};
struct DITTO_API SmoothL1LossOptions {
  SmoothL1LossOptions(Reduction reduction = Reduction::Mean)
      : reduction_(reduction) {}
  DITTO_NN_ARG(Reduction, reduction);
  DITTO_NN_ARG(double, beta) = 1.0;
};
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyOptions;
using CrossEntropyLossOptions = CrossEntropyOptions;
using BCEWithLogitsFuncOptions = BCEWithLogitsOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsOptions;
using BCEWithLogitsLossOptions = BCEWithLogitsOptions;
using BCELossOptions = BinaryCrossEntropyFuncOptions;
inline Tensor mse_loss(
    const Tensor& input,
    const Tensor& target,
    const MSELossOptions& o) {
  return mse_loss(input, target, o.reduction());
}
inline Tensor l1_loss(
    const Tensor& input,
    const Tensor& target,
    const L1LossOptions& o) {
  return l1_loss(input, target, o.reduction());
}
inline Tensor smooth_l1_loss(
    const Tensor& input,
    const Tensor& target,
    const SmoothL1LossOptions& o) {
  return smooth_l1_loss(input, target, o.reduction(), o.beta());
}

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
// all alignments (+inf when none fits), by the alpha recursion in log space
// (PyTorch's CPU arithmetic, ditto's own exp and log); zero_infinity turns
// those (and their gradients) into 0. Mean divides each loss by its target
// length (at least 1), then averages. The gradient is PyTorch's
// ctc_loss_backward_cpu (beta recursion). Samples run in parallel, each one
// serially: the same bits for any thread count.
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

namespace ditto::detail {
// LibTorch's reduction int (ditto::Reduction) as nn::functional's enum;
// ValueError naming op otherwise. Internal: the ATen forms' bodies.
nn::functional::Reduction reduction_of(int64_t reduction, const char* op);
} // namespace ditto::detail

namespace ditto {

// LibTorch's torch::kNone, torch::kMean, torch::kSum, for the losses'
// options: MSELossOptions(torch::kSum), .reduction(torch::kNone).
inline constexpr nn::functional::Reduction kNone =
    nn::functional::Reduction::None;
inline constexpr nn::functional::Reduction kMean =
    nn::functional::Reduction::Mean;
inline constexpr nn::functional::Reduction kSum =
    nn::functional::Reduction::Sum;

// The losses' ATen forms (torch::mse_loss(x, y, torch::Reduction::Sum),
// torch::nll_loss, torch::kl_div, torch::ctc_loss, ...) are declared in
// ditto/ops/composite/loss.ops.toml (ditto/ops/declared.h); their bodies
// are in loss.cpp and ctc.cpp. Where a call names both (mse_loss(x, y) with
// nn::functional's names in scope too), qualify it, as in LibTorch.

} // namespace ditto
