#pragma once

// PyTorch's layers as ditto modules: the same parameter names, shapes,
// default initialization (the same draws, so the same bits after the same
// seed) and printed form. Each has a plain forward method.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ditto/core/generator.h"
#include "ditto/nn/functional.h"
#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

// ---- Linear

struct DITTO_API LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  DITTO_NN_ARG(int64_t, in_features);
  DITTO_NN_ARG(int64_t, out_features);
  DITTO_NN_ARG(bool, bias) = true;
};

// y = x W^T + b; W (out, in) kaiming_uniform_(a = sqrt(5)), then b
// uniform(+-1/sqrt(in)).
class DITTO_API Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true)
      : Linear(LinearOptions(in_features, out_features).bias(bias)) {}
  explicit Linear(const LinearOptions& options);
  Tensor forward(const Tensor& x) const;
  // Draws the initial values again (PyTorch's reset_parameters). The
  // constructor queues the same draws (ditto/core/deferred.h).
  void reset_parameters();
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias; // undefined without bias
};

// ---- convolutions

struct DITTO_API Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, IntList kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  // One value for both dims, or (h, w); the same for the others.
  DITTO_NN_ARG(IntList, kernel_size);
  DITTO_NN_ARG(IntList, stride) = {1};
  DITTO_NN_ARG(IntList, padding) = {0};
  DITTO_NN_ARG(IntList, dilation) = {1};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
};

// weight (out, in / groups, kh, kw): kaiming_uniform_(a = sqrt(5)), then
// bias uniform(+-1/sqrt(fan_in)).
class DITTO_API Conv2d : public Module {
 public:
  // PyTorch's positional form: Conv2d(1, 32, 3, 1, 1).
  Conv2d(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t dilation = 1,
      int64_t groups = 1,
      bool bias = true)
      : Conv2d(Conv2dOptions(in_channels, out_channels, {kernel_size})
                   .stride({stride})
                   .padding({padding})
                   .dilation({dilation})
                   .groups(groups)
                   .bias(bias)) {}
  explicit Conv2d(const Conv2dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv2dOptions options;
  Tensor weight;
  Tensor bias;
};

struct DITTO_API Conv1dOptions {
  Conv1dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(kernel_size) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  DITTO_NN_ARG(int64_t, kernel_size);
  DITTO_NN_ARG(int64_t, stride) = 1;
  DITTO_NN_ARG(int64_t, padding) = 0;
  DITTO_NN_ARG(int64_t, dilation) = 1;
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
};

class DITTO_API Conv1d : public Module {
 public:
  Conv1d(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t dilation = 1,
      int64_t groups = 1,
      bool bias = true)
      : Conv1d(Conv1dOptions(in_channels, out_channels, kernel_size)
                   .stride(stride)
                   .padding(padding)
                   .dilation(dilation)
                   .groups(groups)
                   .bias(bias)) {}
  explicit Conv1d(const Conv1dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv1dOptions options;
  Tensor weight;
  Tensor bias;
};

struct DITTO_API ConvTranspose2dOptions {
  ConvTranspose2dOptions(
      int64_t in_channels,
      int64_t out_channels,
      IntList kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  DITTO_NN_ARG(IntList, kernel_size);
  DITTO_NN_ARG(IntList, stride) = {1};
  DITTO_NN_ARG(IntList, padding) = {0};
  DITTO_NN_ARG(IntList, output_padding) = {0};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
  DITTO_NN_ARG(IntList, dilation) = {1};
};

// weight (in, out / groups, kh, kw): PyTorch's init, whose fan_in is
// therefore (out / groups) * kh * kw.
class DITTO_API ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t output_padding = 0,
      int64_t groups = 1,
      bool bias = true,
      int64_t dilation = 1)
      : ConvTranspose2d(
            ConvTranspose2dOptions(in_channels, out_channels, {kernel_size})
                .stride({stride})
                .padding({padding})
                .output_padding({output_padding})
                .groups(groups)
                .bias(bias)
                .dilation({dilation})) {}
  explicit ConvTranspose2d(const ConvTranspose2dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  ConvTranspose2dOptions options;
  Tensor weight;
  Tensor bias;
};

// ---- pooling

struct DITTO_API MaxPool2dOptions {
  MaxPool2dOptions(IntList kernel_size)
      : kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(IntList, kernel_size);
  DITTO_NN_ARG(IntList, stride); // empty: the kernel size
  DITTO_NN_ARG(IntList, padding) = {0};
  DITTO_NN_ARG(IntList, dilation) = {1};
  DITTO_NN_ARG(bool, ceil_mode) = false;
};

class DITTO_API MaxPool2d : public Module {
 public:
  MaxPool2d(int64_t kernel_size) : MaxPool2d(MaxPool2dOptions({kernel_size})) {}
  explicit MaxPool2d(const MaxPool2dOptions& options);
  Tensor forward(const Tensor& x) const;
  // The output and the flat h * W + w index of each maximum.
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& x) const;
  std::string extra_repr() const override;

  MaxPool2dOptions options;
};

// ---- normalization

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
class DITTO_API BatchNorm : public Module {
 public:
  Tensor forward(const Tensor& x);
  std::string extra_repr() const override;

  BatchNormOptions options;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;

 protected:
  BatchNorm(const char* name, const BatchNormOptions& options, IntList ranks);

 private:
  IntList ranks_; // accepted input ranks
};

// Over (N, C) or (N, C, L).
class DITTO_API BatchNorm1d : public BatchNorm {
 public:
  BatchNorm1d(int64_t num_features)
      : BatchNorm1d(BatchNormOptions(num_features)) {}
  explicit BatchNorm1d(const BatchNormOptions& options)
      : BatchNorm("BatchNorm1d", options, {2, 3}) {}
};

// Over (N, C, H, W).
class DITTO_API BatchNorm2d : public BatchNorm {
 public:
  BatchNorm2d(int64_t num_features)
      : BatchNorm2d(BatchNormOptions(num_features)) {}
  explicit BatchNorm2d(const BatchNormOptions& options)
      : BatchNorm("BatchNorm2d", options, {4}) {}
};

struct DITTO_API LayerNormOptions {
  LayerNormOptions(Shape normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  DITTO_NN_ARG(Shape, normalized_shape);
  DITTO_NN_ARG(double, eps) = 1e-5;
  DITTO_NN_ARG(bool, elementwise_affine) = true;
};

class DITTO_API LayerNorm : public Module {
 public:
  LayerNorm(int64_t size) : LayerNorm(LayerNormOptions({size})) {}
  explicit LayerNorm(const LayerNormOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  LayerNormOptions options;
  Tensor weight, bias;
};

struct DITTO_API GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  DITTO_NN_ARG(int64_t, num_groups);
  DITTO_NN_ARG(int64_t, num_channels);
  DITTO_NN_ARG(double, eps) = 1e-5;
  DITTO_NN_ARG(bool, affine) = true;
};

class DITTO_API GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels)
      : GroupNorm(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNorm(const GroupNormOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  GroupNormOptions options;
  Tensor weight, bias;
};

// ---- activations and shape layers (no parameters)

class DITTO_API ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01)
      : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  double negative_slope;
};

class DITTO_API GELU : public Module {
 public:
  // approximate: "none" (erf) or "tanh".
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  std::string approximate;
};

class DITTO_API SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
};

class DITTO_API LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
};

class DITTO_API Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& x) const {
    return x;
  }
};

class DITTO_API Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t start_dim, end_dim;
};

class DITTO_API Unflatten : public Module {
 public:
  Unflatten(int64_t dim, Shape sizes)
      : Module("Unflatten"), dim(dim), sizes(std::move(sizes)) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
  Shape sizes;
};

// ---- dropout

struct DITTO_API DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  DITTO_NN_ARG(double, p);
  // Draw the mask from this generator (e.g. ditto::stream("dropout"))
  // instead of the default one.
  DITTO_NN_ARG(std::optional<Generator>, generator);
};

// Zeroes elements with probability p while training (PyTorch's mask, drawn
// from the default generator unless one is given); identity in eval mode.
class DITTO_API Dropout : public Module {
 public:
  Dropout(double p = 0.5) : Dropout(DropoutOptions(p)) {}
  explicit Dropout(const DropoutOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  DropoutOptions options;
};

// ---- more pooling, padding, embeddings

struct DITTO_API AvgPool2dOptions {
  AvgPool2dOptions(IntList kernel_size)
      : kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(IntList, kernel_size);
  DITTO_NN_ARG(IntList, stride); // empty: the kernel size
  DITTO_NN_ARG(IntList, padding) = {0};
  DITTO_NN_ARG(bool, ceil_mode) = false;
  DITTO_NN_ARG(bool, count_include_pad) = true;
  DITTO_NN_ARG(std::optional<int64_t>, divisor_override);
};

class DITTO_API AvgPool2d : public Module {
 public:
  AvgPool2d(int64_t kernel_size) : AvgPool2d(AvgPool2dOptions({kernel_size})) {}
  explicit AvgPool2d(const AvgPool2dOptions& options)
      : Module("AvgPool2d"), options(options) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};

class DITTO_API AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(IntList output_size)
      : Module("AdaptiveAvgPool2d"), output_size(std::move(output_size)) {}
  AdaptiveAvgPool2d(int64_t size) : AdaptiveAvgPool2d(IntList{size}) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  IntList output_size;
};

// Pads the last two dims: padding (left, right, top, bottom), or one value
// for all four.
class DITTO_API ZeroPad2d : public Module {
 public:
  ZeroPad2d(IntList padding)
      : ZeroPad2d("ZeroPad2d", "constant", std::move(padding)) {}
  ZeroPad2d(int64_t padding) : ZeroPad2d(IntList{padding}) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  IntList padding; // always four values

 protected:
  ZeroPad2d(const char* name, const char* mode, IntList padding);
  const char* mode_;
};

class DITTO_API ReflectionPad2d : public ZeroPad2d {
 public:
  ReflectionPad2d(IntList padding)
      : ZeroPad2d("ReflectionPad2d", "reflect", std::move(padding)) {}
  ReflectionPad2d(int64_t padding) : ReflectionPad2d(IntList{padding}) {}
};

class DITTO_API ReplicationPad2d : public ZeroPad2d {
 public:
  ReplicationPad2d(IntList padding)
      : ZeroPad2d("ReplicationPad2d", "replicate", std::move(padding)) {}
  ReplicationPad2d(int64_t padding) : ReplicationPad2d(IntList{padding}) {}
};

class DITTO_API Dropout2d : public Module {
 public:
  Dropout2d(double p = 0.5) : Dropout2d(DropoutOptions(p)) {}
  explicit Dropout2d(const DropoutOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  DropoutOptions options;
};

struct DITTO_API EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  DITTO_NN_ARG(int64_t, num_embeddings);
  DITTO_NN_ARG(int64_t, embedding_dim);
  // Negative counts from the end; the row starts at zero and gets no
  // gradient.
  DITTO_NN_ARG(std::optional<int64_t>, padding_idx);
};

// weight (num, dim) normal_(0, 1), then the padding row zeroed. The
// backward adds into the weight gradient with index_add_ (deterministic or
// fast variant, as the determinism policy says).
class DITTO_API Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim)
      : Embedding(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit Embedding(const EmbeddingOptions& options);
  Tensor forward(const Tensor& indices) const;
  std::string extra_repr() const override;
  EmbeddingOptions options;
  Tensor weight;

 protected:
  Embedding(const char* name, const EmbeddingOptions& options);
};

// Sums, means or maxima of bags of rows (embedding_bag); mode "mean" by
// default. forward(input, offsets) for 1-D input, forward(input) for a bag
// per row of a 2-D input.
class DITTO_API EmbeddingBag : public Embedding {
 public:
  EmbeddingBag(
      int64_t num_embeddings,
      int64_t embedding_dim,
      std::string mode = "mean")
      : EmbeddingBag(
            EmbeddingOptions(num_embeddings, embedding_dim),
            std::move(mode)) {}
  EmbeddingBag(const EmbeddingOptions& options, std::string mode = "mean");
  Tensor forward(
      const Tensor& input,
      const Tensor& offsets = {},
      const Tensor& per_sample_weights = {}) const;
  std::string extra_repr() const override;
  std::string mode;
};

// Resizes (N, C, H, W) inputs: functional::interpolate with fixed options.
class DITTO_API Upsample : public Module {
 public:
  explicit Upsample(const functional::InterpolateOptions& options)
      : Module("Upsample"), options(options) {}
  Tensor forward(const Tensor& x) const {
    ForwardScope scope(*this);
    return functional::interpolate(x, options);
  }
  std::string extra_repr() const override;
  functional::InterpolateOptions options;
};

// ---- containers

// Children named "0", "1", ... applied in order. Every child needs a
// `Tensor forward(const Tensor&)`.
class DITTO_API Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  template <typename... Ms>
  explicit Sequential(Ms&&... modules) : Module("Sequential") {
    // The arguments' initial draws, taken in source order (C++ builds the
    // arguments in an unspecified order): see ditto/core/deferred.h.
    std::vector<std::function<void()>> draws;
    (draws.push_back(take_reset(push_back(std::forward<Ms>(modules)))), ...);
    defer_resets(std::move(draws));
  }
  template <typename M>
  std::decay_t<M>& push_back(M&& module) {
    auto& m =
        register_module(std::to_string(steps_.size()), std::forward<M>(module));
    steps_.push_back([p = &m](const Tensor& x) { return p->forward(x); });
    return m;
  }
  Tensor forward(const Tensor& x) const;
  size_t size() const {
    return steps_.size();
  }
  Module& operator[](size_t i) const;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};

// Modules held in a list (named "0", "1", ...), without a forward.
class DITTO_API ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  template <typename... Ms>
  explicit ModuleList(Ms&&... modules) : Module("ModuleList") {
    // The arguments' initial draws, taken in source order (C++ builds the
    // arguments in an unspecified order): see ditto/core/deferred.h.
    std::vector<std::function<void()>> draws;
    (draws.push_back(take_reset(push_back(std::forward<Ms>(modules)))), ...);
    defer_resets(std::move(draws));
  }
  template <typename M>
  std::decay_t<M>& push_back(M&& module) {
    auto& m =
        register_module(std::to_string(items_.size()), std::forward<M>(module));
    items_.push_back(&m);
    return m;
  }
  size_t size() const {
    return items_.size();
  }
  Module& operator[](size_t i) const;
  std::vector<Module*>::const_iterator begin() const {
    return items_.begin();
  }
  std::vector<Module*>::const_iterator end() const {
    return items_.end();
  }

 private:
  std::vector<Module*> items_;
};

// Modules by name, in insertion order, without a forward.
class DITTO_API ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  template <typename M>
  std::decay_t<M>& insert(const std::string& name, M&& module) {
    auto& m = register_module(name, std::forward<M>(module));
    items_.emplace_back(name, &m);
    return m;
  }
  // KeyError if absent.
  Module& operator[](const std::string& name) const;
  bool contains(const std::string& name) const;
  std::vector<std::string> keys() const;
  size_t size() const {
    return items_.size();
  }

 private:
  std::vector<std::pair<std::string, Module*>> items_;
};

// ---- losses

struct DITTO_API CTCLossOptions {
  DITTO_NN_ARG(int64_t, blank) = 0;
  DITTO_NN_ARG(Reduction, reduction) = Reduction::Mean;
  DITTO_NN_ARG(bool, zero_infinity) = false;
};

// functional::ctc_loss with the options' blank, reduction and
// zero_infinity.
class DITTO_API CTCLoss : public Module {
 public:
  explicit CTCLoss(const CTCLossOptions& options = {});
  Tensor forward(
      const Tensor& log_probs,
      const Tensor& targets,
      const Tensor& input_lengths,
      const Tensor& target_lengths) const;
  Tensor forward(
      const Tensor& log_probs,
      const Tensor& targets,
      const std::vector<int64_t>& input_lengths,
      const std::vector<int64_t>& target_lengths) const;
  std::string extra_repr() const override {
    return {};
  }
  CTCLossOptions options;
};

} // namespace ditto::nn
