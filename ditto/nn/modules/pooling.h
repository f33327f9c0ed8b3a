#pragma once

// The pooling layers: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d.

#include <optional>
#include <string>
#include <utility>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

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

} // namespace ditto::nn
