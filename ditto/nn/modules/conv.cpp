#include "ditto/nn/modules/conv.h"

#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional/conv.h"
#include "ditto/ops/conv.h"

namespace ditto::nn {
namespace {

// PyTorch's _ConvNd.extra_repr for n spatial dims (output_padding empty
// for a plain convolution).
std::string conv_repr(
    int64_t in,
    int64_t out,
    size_t n,
    const IntList& kernel,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    const IntArg& output_padding,
    int64_t groups,
    bool bias,
    const char* layer) {
  const IntList zeros(n, 0), ones(n, 1);
  std::string s = std::to_string(in) + ", " + std::to_string(out) +
      ", kernel_size=" + py_tuple(kernel, n) +
      ", stride=" + py_tuple(stride, n);
  if (per_dim(padding, n, layer, "padding") != zeros) {
    s += ", padding=" + py_tuple(padding, n);
  }
  if (per_dim(dilation, n, layer, "dilation") != ones) {
    s += ", dilation=" + py_tuple(dilation, n);
  }
  if (!output_padding.empty() &&
      per_dim(output_padding, n, layer, "output_padding") != zeros) {
    s += ", output_padding=" + py_tuple(output_padding, n);
  }
  if (groups != 1) {
    s += ", groups=" + std::to_string(groups);
  }
  if (!bias) {
    s += ", bias=False";
  }
  return s;
}

} // namespace

// ---- Conv2d

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o) : Module("Conv2d"), options(o) {
  check_positive(o.in_channels(), "Conv2d", "in_channels");
  check_positive(o.out_channels(), "Conv2d", "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), "Conv2d");
  const IntList k = two(o.kernel_size(), "Conv2d", "kernel_size");
  two(o.stride(), "Conv2d", "stride");
  two(o.padding(), "Conv2d", "padding");
  two(o.dilation(), "Conv2d", "dilation");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.out_channels(), o.in_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void Conv2dImpl::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv2dImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 2, options.in_channels(), "Conv2d");
  const bool batched = x.dim() == 4;
  Tensor y = conv2d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      two(options.stride(), "Conv2d", "stride"),
      two(options.padding(), "Conv2d", "padding"),
      two(options.dilation(), "Conv2d", "dilation"),
      options.groups());
  return batched ? y : y.squeeze(0);
}

std::string Conv2dImpl::extra_repr() const {
  const auto& o = options;
  return conv_repr(
      o.in_channels(),
      o.out_channels(),
      2,
      o.kernel_size(),
      o.stride(),
      o.padding(),
      o.dilation(),
      {},
      o.groups(),
      bias.defined(),
      "Conv2d");
}

// ---- Conv1d

Conv1dImpl::Conv1dImpl(const Conv1dOptions& o) : Module("Conv1d"), options(o) {
  check_positive(o.in_channels(), "Conv1d", "in_channels");
  check_positive(o.out_channels(), "Conv1d", "out_channels");
  check_positive(o.kernel_size(), "Conv1d", "kernel_size");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), "Conv1d");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void Conv1dImpl::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv1dImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 1, options.in_channels(), "Conv1d");
  const bool batched = x.dim() == 3;
  Tensor y = conv1d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      {options.stride()},
      {options.padding()},
      {options.dilation()},
      options.groups());
  return batched ? y : y.squeeze(0);
}

std::string Conv1dImpl::extra_repr() const {
  const auto& o = options;
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) + ", kernel_size=(" +
      std::to_string(o.kernel_size()) + ",), stride=(" +
      std::to_string(o.stride()) + ",)";
  if (o.padding() != 0) {
    s += ", padding=(" + std::to_string(o.padding()) + ",)";
  }
  if (o.dilation() != 1) {
    s += ", dilation=(" + std::to_string(o.dilation()) + ",)";
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias.defined()) {
    s += ", bias=False";
  }
  return s;
}

// ---- ConvTranspose2d

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& o)
    : Module("ConvTranspose2d"), options(o) {
  const char* name = "ConvTranspose2d";
  check_positive(o.in_channels(), name, "in_channels");
  check_positive(o.out_channels(), name, "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), name);
  const IntList k = two(o.kernel_size(), name, "kernel_size");
  two(o.stride(), name, "stride");
  two(o.padding(), name, "padding");
  two(o.output_padding(), name, "output_padding");
  two(o.dilation(), name, "dilation");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.in_channels(), o.out_channels() / o.groups(), k[0], k[1]}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void ConvTranspose2dImpl::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor ConvTranspose2dImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 2, options.in_channels(), "ConvTranspose2d");
  const bool batched = x.dim() == 4;
  Tensor y = conv_transpose2d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      options.stride(),
      options.padding(),
      options.output_padding(),
      options.groups(),
      options.dilation());
  return batched ? y : y.squeeze(0);
}

std::string ConvTranspose2dImpl::extra_repr() const {
  const auto& o = options;
  return conv_repr(
      o.in_channels(),
      o.out_channels(),
      2,
      o.kernel_size(),
      o.stride(),
      o.padding(),
      o.dilation(),
      o.output_padding(),
      o.groups(),
      bias.defined(),
      "ConvTranspose2d");
}

// ---- Conv3d

Conv3dImpl::Conv3dImpl(const Conv3dOptions& o) : Module("Conv3d"), options(o) {
  const char* name = "Conv3d";
  check_positive(o.in_channels(), name, "in_channels");
  check_positive(o.out_channels(), name, "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), name);
  const IntList k = per_dim(o.kernel_size(), 3, name, "kernel_size");
  for (int64_t v : k) {
    check_positive(v, name, "kernel_size");
  }
  per_dim(o.stride(), 3, name, "stride");
  per_dim(o.padding(), 3, name, "padding");
  per_dim(o.dilation(), 3, name, "dilation");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.out_channels(), o.in_channels() / o.groups(), k[0], k[1], k[2]}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void Conv3dImpl::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv3dImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 3, options.in_channels(), "Conv3d");
  const bool batched = x.dim() == 5;
  Tensor y = conv3d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      options.stride(),
      options.padding(),
      options.dilation(),
      options.groups());
  return batched ? y : y.squeeze(0);
}

std::string Conv3dImpl::extra_repr() const {
  const auto& o = options;
  return conv_repr(
      o.in_channels(),
      o.out_channels(),
      3,
      o.kernel_size(),
      o.stride(),
      o.padding(),
      o.dilation(),
      {},
      o.groups(),
      bias.defined(),
      "Conv3d");
}

// ---- ConvTranspose3d

ConvTranspose3dImpl::ConvTranspose3dImpl(const ConvTranspose3dOptions& o)
    : Module("ConvTranspose3d"), options(o) {
  const char* name = "ConvTranspose3d";
  check_positive(o.in_channels(), name, "in_channels");
  check_positive(o.out_channels(), name, "out_channels");
  check_groups(o.in_channels(), o.out_channels(), o.groups(), name);
  const IntList k = per_dim(o.kernel_size(), 3, name, "kernel_size");
  for (int64_t v : k) {
    check_positive(v, name, "kernel_size");
  }
  per_dim(o.stride(), 3, name, "stride");
  per_dim(o.padding(), 3, name, "padding");
  per_dim(o.output_padding(), 3, name, "output_padding");
  per_dim(o.dilation(), 3, name, "dilation");
  weight = register_parameter(
      "weight",
      uninitialized(
          {o.in_channels(), o.out_channels() / o.groups(), k[0], k[1], k[2]}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_channels()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void ConvTranspose3dImpl::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor ConvTranspose3dImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  check_conv_input(x, 3, options.in_channels(), "ConvTranspose3d");
  const bool batched = x.dim() == 5;
  Tensor y = conv_transpose3d(
      batched ? x : x.unsqueeze(0),
      weight,
      bias,
      options.stride(),
      options.padding(),
      options.output_padding(),
      options.groups(),
      options.dilation());
  return batched ? y : y.squeeze(0);
}

std::string ConvTranspose3dImpl::extra_repr() const {
  const auto& o = options;
  return conv_repr(
      o.in_channels(),
      o.out_channels(),
      3,
      o.kernel_size(),
      o.stride(),
      o.padding(),
      o.dilation(),
      o.output_padding(),
      o.groups(),
      bias.defined(),
      "ConvTranspose3d");
}

} // namespace ditto::nn
