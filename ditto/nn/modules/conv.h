#pragma once

// The convolution layers, LibTorch's ConvNdImpl for 1, 2 and 3 spatial
// dims, plain and transposed: Conv1d, Conv2d, Conv3d, ConvTranspose1d,
// ConvTranspose2d and ConvTranspose3d are ConvNdImpl<D, false> and
// ConvNdImpl<D, true> (one definition, in conv.cpp).

#include <cstddef>
#include <string>
#include <type_traits>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

// LibTorch's ConvOptions<D>: each size one value for every spatial dim or
// D values (kernel_size(3) or kernel_size({3, 5})).
template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, IntArg kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(std::move(kernel_size)) {}
  DITTO_NN_ARG(int64_t, in_channels);
  DITTO_NN_ARG(int64_t, out_channels);
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride) = {1};
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(IntArg, dilation) = {1};
  DITTO_NN_ARG(int64_t, groups) = 1;
  DITTO_NN_ARG(bool, bias) = true;
};

// LibTorch's ConvTransposeOptions<D>: the same and output_padding (torch.nn's
// argument order: dilation last).
template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(
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

using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// A convolution layer over D spatial dims. weight (out, in / groups, k...)
// or, transposed, (in, out / groups, k...); PyTorch's init:
// kaiming_uniform_(a = sqrt(5)) of the weight, then the bias
// uniform(+-1/sqrt(fan_in)) (a transposed weight's fan_in is therefore
// (out / groups) * k...). Initial draws are deferred to first use, in
// construction order (Note [Deferred initialization]). An input without
// its batch dim (C, spatial...) is taken as a batch of one.
template <size_t D, bool Transposed>
class DITTO_API ConvNdImpl : public Module {
 public:
  using Options =
      std::conditional_t<Transposed, ConvTransposeOptions<D>, ConvOptions<D>>;

  // PyTorch's positional forms: Conv2d(1, 32, 3, 1, 1);
  // ConvTranspose2d(in, out, kernel, stride, padding, output_padding,
  // groups, bias, dilation). Member templates, so that the explicit
  // instantiations in conv.cpp do not instantiate the other form (clang 14
  // does not skip a constructor whose requires-clause fails there).
  template <bool T = Transposed>
  requires(!T) ConvNdImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t dilation = 1,
      int64_t groups = 1,
      bool bias = true)
      : ConvNdImpl(Options(in_channels, out_channels, {kernel_size})
                       .stride({stride})
                       .padding({padding})
                       .dilation({dilation})
                       .groups(groups)
                       .bias(bias)) {}
  template <bool T = Transposed>
  requires(T) ConvNdImpl(
      int64_t in_channels,
      int64_t out_channels,
      int64_t kernel_size,
      int64_t stride = 1,
      int64_t padding = 0,
      int64_t output_padding = 0,
      int64_t groups = 1,
      bool bias = true,
      int64_t dilation = 1)
      : ConvNdImpl(Options(in_channels, out_channels, {kernel_size})
                       .stride({stride})
                       .padding({padding})
                       .output_padding({output_padding})
                       .groups(groups)
                       .bias(bias)
                       .dilation({dilation})) {}
  explicit ConvNdImpl(const Options& options);

  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;

  Options options;
  Tensor weight;
  Tensor bias;
};

extern template class ConvNdImpl<1, false>;
extern template class ConvNdImpl<2, false>;
extern template class ConvNdImpl<3, false>;
extern template class ConvNdImpl<1, true>;
extern template class ConvNdImpl<2, true>;
extern template class ConvNdImpl<3, true>;

using Conv1dImpl = ConvNdImpl<1, false>;
using Conv2dImpl = ConvNdImpl<2, false>;
using Conv3dImpl = ConvNdImpl<3, false>;
using ConvTranspose1dImpl = ConvNdImpl<1, true>;
using ConvTranspose2dImpl = ConvNdImpl<2, true>;
using ConvTranspose3dImpl = ConvNdImpl<3, true>;
DITTO_MODULE(Conv1d);
DITTO_MODULE(Conv2d);
DITTO_MODULE(Conv3d);
DITTO_MODULE(ConvTranspose1d);
DITTO_MODULE(ConvTranspose2d);
DITTO_MODULE(ConvTranspose3d);

} // namespace ditto::nn
