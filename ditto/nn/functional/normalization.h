#pragma once

// Normalizations, each with its backward.

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "ditto/core/options.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

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

// Instance normalization: each (sample, channel) plane of x (N, C, ...)
// normalized by its own statistics, as PyTorch computes it: batch_norm of x
// viewed as (1, N * C, ...) with weight, bias and the running statistics
// repeated per sample, so the bits are batch_norm's. With use_input_stats
// the plane's statistics are used and defined running statistics are
// updated (with momentum) to the mean over the samples; otherwise the
// running statistics (which must be defined) are used.
DITTO_API Tensor instance_norm(
    const Tensor& x,
    const Tensor& running_mean = {},
    const Tensor& running_var = {},
    const Tensor& weight = {},
    const Tensor& bias = {},
    bool use_input_stats = true,
    double momentum = 0.1,
    double eps = 1e-5);

// BatchNorm's running-statistics update, per channel: what batch_norm does
// in training mode, and what a replay of deferred updates must do to give
// the same bits.
template <typename T>
inline T updated_running_mean(T running, T mean, double momentum) {
  return T(T(momentum) * mean) + T(T(1.0 - momentum) * running);
}
template <typename T>
inline T updated_running_var(T running, T unbiased_var, double momentum) {
  return T(std::fma(T(momentum), unbiased_var, T(T(1.0 - momentum) * running)));
}

// While one lives on a thread, batch_norm in training mode does not update
// the running statistics it is given: it records the batch's mean and
// unbiased variance (and the momentum) here instead, in call order, and
// the owner applies them later with updated_running_mean/var (the micro-batch
// steps of docs/distributed.md replay every micro-batch's statistics in
// index order, whichever rank computed it). Nested recorders: the newest
// records.
class DITTO_API RunningStatsRecorder {
 public:
  struct Entry {
    Tensor running_mean, running_var; // the buffers, not updated
    Tensor mean, unbiased_var; // this batch's, per channel
    double momentum = 0;
  };
  RunningStatsRecorder();
  ~RunningStatsRecorder();
  RunningStatsRecorder(const RunningStatsRecorder&) = delete;
  RunningStatsRecorder& operator=(const RunningStatsRecorder&) = delete;
  // The entries recorded since the last take(), in call order.
  std::vector<Entry> take();
  // The recorder batch_norm reports to on this thread, or null.
  static RunningStatsRecorder* current();
  void record(Entry e);

 private:
  RunningStatsRecorder* previous_;
  std::vector<Entry> entries_;
};

// LibTorch's options of F::normalize: p, dim, eps, and out (a tensor that
// takes the result).
struct DITTO_API NormalizeFuncOptions {
  DITTO_NN_ARG(double, p) = 2.0;
  DITTO_NN_ARG(int64_t, dim) = 1;
  DITTO_NN_ARG(double, eps) = 1e-12;
  DITTO_NN_ARG(std::optional<Tensor>, out);
};

// LibTorch's F::normalize: input over its p-norm along dim, the norm at
// least eps. p = 2 is normalize(input, dim, eps) below (its bits); another
// p LibTorch's formula, input / norm(p, dim, keepdim).clamp_min(eps). out,
// when given, is resized to input's shape and takes the result.
DITTO_API Tensor
normalize(const Tensor& input, const NormalizeFuncOptions& options = {});

// normalize(x, dim, eps = 1e-12) (the p = 2 form, whose bits the options
// form gives) and normalize(x, p, dim, eps) are declared
// (ditto/ops/composite/normalization.ops.toml, ditto/ops/declared.h).

} // namespace ditto::nn::functional

// The ATen forms (torch::batch_norm(input, weight, bias, running_mean,
// running_var, training, momentum, eps, cudnn_enabled), torch::layer_norm,
// ...) are declared in ditto/ops/composite/normalization.ops.toml
// (ditto/ops/declared.h); their bodies are in normalization.cpp.
