#include "ditto/nn/modules/pooling.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

MaxPool2d::MaxPool2d(const MaxPool2dOptions& o)
    : Module("MaxPool2d"), options(o) {
  two(o.kernel_size(), "MaxPool2d", "kernel_size");
}

std::pair<Tensor, Tensor> MaxPool2d::forward_with_indices(
    const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::max_pool2d_with_indices(
      x,
      options.kernel_size(),
      options.stride(),
      options.padding(),
      options.dilation(),
      options.ceil_mode());
}

Tensor MaxPool2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::max_pool2d(
      x,
      options.kernel_size(),
      options.stride(),
      options.padding(),
      options.dilation(),
      options.ceil_mode());
}

std::string MaxPool2d::extra_repr() const {
  const auto& o = options;
  return "kernel_size=" + py_int_or_tuple(o.kernel_size()) + ", stride=" +
      py_int_or_tuple(o.stride().empty() ? o.kernel_size() : o.stride()) +
      ", padding=" + py_int_or_tuple(o.padding()) +
      ", dilation=" + py_int_or_tuple(o.dilation()) +
      ", ceil_mode=" + py_bool(o.ceil_mode());
}

Tensor AvgPool2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  const auto& o = options;
  return functional::avg_pool2d(
      x,
      o.kernel_size(),
      o.stride(),
      o.padding(),
      o.ceil_mode(),
      o.count_include_pad(),
      o.divisor_override());
}

std::string AvgPool2d::extra_repr() const {
  const auto& o = options;
  return "kernel_size=" + py_int_or_tuple(o.kernel_size()) + ", stride=" +
      py_int_or_tuple(o.stride().empty() ? o.kernel_size() : o.stride()) +
      ", padding=" + py_int_or_tuple(o.padding());
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::adaptive_avg_pool2d(x, output_size);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + py_int_or_tuple(output_size);
}

} // namespace ditto::nn
