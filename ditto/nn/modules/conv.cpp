#include "ditto/nn/modules/conv.h"

#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional/conv.h"
#include "ditto/ops/conv.h"

namespace ditto::nn {
namespace {

// "Conv2d", "ConvTranspose1d": the layer's name in messages and reprs.
template <size_t D, bool Transposed>
const char* layer_name() {
  static const std::string name =
      std::string(Transposed ? "ConvTranspose" : "Conv") + std::to_string(D) +
      "d";
  return name.c_str();
}

// PyTorch's _ConvNd.extra_repr for D spatial dims (output_padding only for
// a transposed convolution).
template <size_t D, bool Transposed>
std::string conv_repr(
    const typename ConvNdImpl<D, Transposed>::Options& o,
    bool bias) {
  const char* layer = layer_name<D, Transposed>();
  const IntList zeros(D, 0), ones(D, 1);
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) +
      ", kernel_size=" + py_tuple(o.kernel_size(), D) +
      ", stride=" + py_tuple(o.stride(), D);
  if (per_dim(o.padding(), D, layer, "padding") != zeros) {
    s += ", padding=" + py_tuple(o.padding(), D);
  }
  if (per_dim(o.dilation(), D, layer, "dilation") != ones) {
    s += ", dilation=" + py_tuple(o.dilation(), D);
  }
  if constexpr (Transposed) {
    if (per_dim(o.output_padding(), D, layer, "output_padding") != zeros) {
      s += ", output_padding=" + py_tuple(o.output_padding(), D);
    }
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias) {
    s += ", bias=False";
  }
  return s;
}

} // namespace

template <size_t D, bool Transposed>
ConvNdImpl<D, Transposed>::ConvNdImpl(const Options& o)
    : Module(layer_name<D, Transposed>()), options(o) {
  const char* name = layer_name<D, Transposed>();
  check_positive(o.in_channels(), name, "in_channels");
  check_positive(o.out_channels(), name, "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), name);
  const IntList k = per_dim(o.kernel_size(), D, name, "kernel_size");
  for (int64_t v : k) {
    check_positive(v, name, "kernel_size");
  }
  per_dim(o.stride(), D, name, "stride");
  per_dim(o.padding(), D, name, "padding");
  per_dim(o.dilation(), D, name, "dilation");
  if constexpr (Transposed) {
    per_dim(o.output_padding(), D, name, "output_padding");
  }
  // (out, in / groups, k...), transposed (in, out / groups, k...).
  Shape w = Transposed ? Shape{o.in_channels(), o.out_channels() / o.groups()}
                       : Shape{o.out_channels(), o.in_channels() / o.groups()};
  w.insert(w.end(), k.begin(), k.end());
  weight = register_parameter("weight", uninitialized(w));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

template <size_t D, bool Transposed>
void ConvNdImpl<D, Transposed>::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

template <size_t D, bool Transposed>
Tensor ConvNdImpl<D, Transposed>::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  const char* name = layer_name<D, Transposed>();
  check_conv_input(x, int64_t(D), options.in_channels(), name);
  const bool batched = x.dim() == int64_t(D) + 2;
  const Tensor in = batched ? x : x.unsqueeze(0);
  const Options& o = options;
  Tensor y;
  if constexpr (Transposed) {
    const auto f = D == 1 ? &functional::conv_transpose1d
        : D == 2          ? &functional::conv_transpose2d
                          : &functional::conv_transpose3d;
    y =
        f(in,
          weight,
          bias,
          o.stride(),
          o.padding(),
          o.output_padding(),
          o.groups(),
          o.dilation());
  } else {
    // conv2d's defaults and checks want both dims (a 1-element list is
    // not broadcast there).
    const auto sizes = [&](const IntArg& v, const char* what) -> IntArg {
      return D == 2 ? IntArg(two(v, name, what)) : v;
    };
    const auto f = D == 1 ? &conv1d : D == 2 ? &conv2d : &conv3d;
    y =
        f(in,
          weight,
          bias,
          sizes(o.stride(), "stride"),
          sizes(o.padding(), "padding"),
          sizes(o.dilation(), "dilation"),
          o.groups());
  }
  return batched ? y : y.squeeze(0);
}

template <size_t D, bool Transposed>
std::string ConvNdImpl<D, Transposed>::extra_repr() const {
  return conv_repr<D, Transposed>(options, bias.defined());
}

template class ConvNdImpl<1, false>;
template class ConvNdImpl<2, false>;
template class ConvNdImpl<3, false>;
template class ConvNdImpl<1, true>;
template class ConvNdImpl<2, true>;
template class ConvNdImpl<3, true>;

} // namespace ditto::nn
