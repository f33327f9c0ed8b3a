#pragma once

// The convolution layers: Conv1d, Conv2d, Conv3d, ConvTranspose2d and
// ConvTranspose3d.

#include <string>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

struct DITTO_API Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, IntArg kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  // One value for both dims, or (h, w); the same for the others.
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride) = {1};
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(IntArg, dilation) = {1};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
};

// weight (out, in / groups, kh, kw): kaiming_uniform_(a = sqrt(5)), then
// bias uniform(+-1/sqrt(fan_in)).
class DITTO_API Conv2dImpl : public Module {
 public:
  // PyTorch's positional form: Conv2d(1, 32, 3, 1, 1).
  Conv2dImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t dilation = 1,
      int64_t groups = 1,
      bool bias = true)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, {kernel_size})
                       .stride({stride})
                       .padding({padding})
                       .dilation({dilation})
                       .groups(groups)
                       .bias(bias)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv2dOptions options;
  Tensor weight;
  Tensor bias;
};
DITTO_MODULE(Conv2d);

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

class DITTO_API Conv1dImpl : public Module {
 public:
  Conv1dImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t dilation = 1,
      int64_t groups = 1,
      bool bias = true)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)
                       .stride(stride)
                       .padding(padding)
                       .dilation(dilation)
                       .groups(groups)
                       .bias(bias)) {}
  explicit Conv1dImpl(const Conv1dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv1dOptions options;
  Tensor weight;
  Tensor bias;
};
DITTO_MODULE(Conv1d);

struct DITTO_API ConvTranspose2dOptions {
  ConvTranspose2dOptions(
      int64_t in_channels,
      int64_t out_channels,
      IntArg kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride) = {1};
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(IntArg, output_padding) = {0};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
  DITTO_NN_ARG(IntArg, dilation) = {1};
};

// weight (in, out / groups, kh, kw): PyTorch's init, whose fan_in is
// therefore (out / groups) * kh * kw.
class DITTO_API ConvTranspose2dImpl : public Module {
 public:
  ConvTranspose2dImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t output_padding = 0,
      int64_t groups = 1,
      bool bias = true,
      int64_t dilation = 1)
      : ConvTranspose2dImpl(
            ConvTranspose2dOptions(in_channels, out_channels, {kernel_size})
                .stride({stride})
                .padding({padding})
                .output_padding({output_padding})
                .groups(groups)
                .bias(bias)
                .dilation({dilation})) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  ConvTranspose2dOptions options;
  Tensor weight;
  Tensor bias;
};
DITTO_MODULE(ConvTranspose2d);

struct DITTO_API Conv3dOptions {
  Conv3dOptions(int64_t in_channels, int64_t out_channels, IntArg kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  // One value for the three dims, or (d, h, w); the same for the others.
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride) = {1};
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(IntArg, dilation) = {1};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
};

// weight (out, in / groups, kd, kh, kw): PyTorch's init, as Conv2d's.
class DITTO_API Conv3dImpl : public Module {
 public:
  Conv3dImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t dilation = 1,
      int64_t groups = 1,
      bool bias = true)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, {kernel_size})
                       .stride({stride})
                       .padding({padding})
                       .dilation({dilation})
                       .groups(groups)
                       .bias(bias)) {}
  explicit Conv3dImpl(const Conv3dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv3dOptions options;
  Tensor weight;
  Tensor bias;
};
DITTO_MODULE(Conv3d);

struct DITTO_API ConvTranspose3dOptions {
  ConvTranspose3dOptions(
      int64_t in_channels,
      int64_t out_channels,
      IntArg kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride) = {1};
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(IntArg, output_padding) = {0};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
  DITTO_NN_ARG(IntArg, dilation) = {1};
};

// weight (in, out / groups, kd, kh, kw), PyTorch's init.
class DITTO_API ConvTranspose3dImpl : public Module {
 public:
  ConvTranspose3dImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t output_padding = 0,
      int64_t groups = 1,
      bool bias = true,
      int64_t dilation = 1)
      : ConvTranspose3dImpl(
            ConvTranspose3dOptions(in_channels, out_channels, {kernel_size})
                .stride({stride})
                .padding({padding})
                .output_padding({output_padding})
                .groups(groups)
                .bias(bias)
                .dilation({dilation})) {}
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  ConvTranspose3dOptions options;
  Tensor weight;
  Tensor bias;
};
DITTO_MODULE(ConvTranspose3d);

} // namespace ditto::nn
