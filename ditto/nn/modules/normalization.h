#pragma once

// The normalization layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d,
// LayerNorm and GroupNorm.

#include <optional>
#include <string>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

struct DITTO_API BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  DITTO_NN_ARG(int64_t, num_features);
  DITTO_NN_ARG(double, eps) = 1e-5;
  // Empty: the cumulative average (1 / num_batches_tracked).
  DITTO_NN_ARG(std::optional<double>, momentum) = 0.1;
  DITTO_NN_ARG(bool, affine) = true;
  DITTO_NN_ARG(bool, track_running_stats) = true;
};

// weight (ones), bias (zeros), buffers running_mean (zeros), running_var
// (ones), num_batches_tracked (int64, 0-dim). Training uses the batch's
// statistics and updates the running ones; eval uses the running ones.
class DITTO_API BatchNormImplBase : public Module {
 public:
  Tensor forward(const Tensor& x);
  std::string extra_repr() const override;

  BatchNormOptions options;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;

 protected:
  BatchNormImplBase(
      const char* name,
      const BatchNormOptions& options,
      IntList ranks);

 private:
  IntList ranks_; // accepted input ranks
};

// Over (N, C) or (N, C, L).
class DITTO_API BatchNorm1dImpl : public BatchNormImplBase {
 public:
  BatchNorm1dImpl(int64_t num_features)
      : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm1dImpl(const BatchNormOptions& options)
      : BatchNormImplBase("BatchNorm1d", options, {2, 3}) {}
};
DITTO_MODULE(BatchNorm1d);

// Over (N, C, H, W).
class DITTO_API BatchNorm2dImpl : public BatchNormImplBase {
 public:
  BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options)
      : BatchNormImplBase("BatchNorm2d", options, {4}) {}
};
DITTO_MODULE(BatchNorm2d);

// Over (N, C, D, H, W).
class DITTO_API BatchNorm3dImpl : public BatchNormImplBase {
 public:
  BatchNorm3dImpl(int64_t num_features)
      : BatchNorm3dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm3dImpl(const BatchNormOptions& options)
      : BatchNormImplBase("BatchNorm3d", options, {5}) {}
};
DITTO_MODULE(BatchNorm3d);

struct DITTO_API InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}
  DITTO_NN_ARG(int64_t, num_features);
  DITTO_NN_ARG(double, eps) = 1e-5;
  DITTO_NN_ARG(double, momentum) = 0.1;
  DITTO_NN_ARG(bool, affine) = false;
  DITTO_NN_ARG(bool, track_running_stats) = false;
};

// Instance normalization over (N, C, ...) with D dims after C, or the same
// without N (PyTorch's layers and defaults: no affine parameters, no
// running statistics). weight (ones) and bias (zeros) when affine;
// running_mean (zeros), running_var (ones) and num_batches_tracked when
// tracking, used in eval mode.
template <int D>
class DITTO_API InstanceNormNd : public Module {
 public:
  InstanceNormNd(int64_t num_features)
      : InstanceNormNd(InstanceNormOptions(num_features)) {}
  explicit InstanceNormNd(const InstanceNormOptions& options);
  Tensor forward(const Tensor& x);
  std::string extra_repr() const override;

  InstanceNormOptions options;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;
};
using InstanceNorm1dImpl = InstanceNormNd<1>;
DITTO_MODULE(InstanceNorm1d);
using InstanceNorm2dImpl = InstanceNormNd<2>;
DITTO_MODULE(InstanceNorm2d);
using InstanceNorm3dImpl = InstanceNormNd<3>;
DITTO_MODULE(InstanceNorm3d);
extern template class InstanceNormNd<1>;
extern template class InstanceNormNd<2>;
extern template class InstanceNormNd<3>;

struct DITTO_API LayerNormOptions {
  LayerNormOptions(Shape normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  DITTO_NN_ARG(Shape, normalized_shape);
  DITTO_NN_ARG(double, eps) = 1e-5;
  DITTO_NN_ARG(bool, elementwise_affine) = true;
};

class DITTO_API LayerNormImpl : public Module {
 public:
  LayerNormImpl(int64_t size) : LayerNormImpl(LayerNormOptions({size})) {}
  explicit LayerNormImpl(const LayerNormOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  LayerNormOptions options;
  Tensor weight, bias;
};
DITTO_MODULE(LayerNorm);

struct DITTO_API GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  DITTO_NN_ARG(int64_t, num_groups);
  DITTO_NN_ARG(int64_t, num_channels);
  DITTO_NN_ARG(double, eps) = 1e-5;
  DITTO_NN_ARG(bool, affine) = true;
};

class DITTO_API GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  GroupNormOptions options;
  Tensor weight, bias;
};
DITTO_MODULE(GroupNorm);

} // namespace ditto::nn
