#include "ditto/nn/modules/conv.h"

#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional/conv.h"
#include "ditto/ops/conv.h"

namespace ditto::nn {

// ---- Conv2d

Conv2d::Conv2d(const Conv2dOptions& o) : Module("Conv2d"), options(o) {
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

void Conv2d::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv2d::forward(const Tensor& x) const {
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

std::string Conv2d::extra_repr() const {
  const auto& o = options;
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) +
      ", kernel_size=" + py_tuple(o.kernel_size(), 2) +
      ", stride=" + py_tuple(o.stride(), 2);
  if (two(o.padding(), "Conv2d", "padding") != IntList{0, 0}) {
    s += ", padding=" + py_tuple(o.padding(), 2);
  }
  if (two(o.dilation(), "Conv2d", "dilation") != IntList{1, 1}) {
    s += ", dilation=" + py_tuple(o.dilation(), 2);
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias.defined()) {
    s += ", bias=False";
  }
  return s;
}

// ---- Conv1d

Conv1d::Conv1d(const Conv1dOptions& o) : Module("Conv1d"), options(o) {
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

void Conv1d::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor Conv1d::forward(const Tensor& x) const {
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

std::string Conv1d::extra_repr() const {
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

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions& o)
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

void ConvTranspose2d::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor ConvTranspose2d::forward(const Tensor& x) const {
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

std::string ConvTranspose2d::extra_repr() const {
  const auto& o = options;
  const char* name = "ConvTranspose2d";
  std::string s = std::to_string(o.in_channels()) + ", " +
      std::to_string(o.out_channels()) +
      ", kernel_size=" + py_tuple(o.kernel_size(), 2) +
      ", stride=" + py_tuple(o.stride(), 2);
  if (two(o.padding(), name, "padding") != IntList{0, 0}) {
    s += ", padding=" + py_tuple(o.padding(), 2);
  }
  if (two(o.dilation(), name, "dilation") != IntList{1, 1}) {
    s += ", dilation=" + py_tuple(o.dilation(), 2);
  }
  if (two(o.output_padding(), name, "output_padding") != IntList{0, 0}) {
    s += ", output_padding=" + py_tuple(o.output_padding(), 2);
  }
  if (o.groups() != 1) {
    s += ", groups=" + std::to_string(o.groups());
  }
  if (!bias.defined()) {
    s += ", bias=False";
  }
  return s;
}

} // namespace ditto::nn
