#include "ditto/nn/modules/activation.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

Tensor ReLUImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::relu(x);
}

Tensor LeakyReLUImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::leaky_relu(x, negative_slope);
}

std::string LeakyReLUImpl::extra_repr() const {
  return "negative_slope=" + py_float(negative_slope);
}

GELUImpl::GELUImpl(std::string a) : Module("GELU"), approximate(std::move(a)) {
  DITTO_CHECK(
      approximate == "none" || approximate == "tanh",
      ValueError,
      "GELU",
      "approximate argument must be either none or tanh, got ",
      approximate);
}

Tensor GELUImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::gelu(x, approximate);
}

std::string GELUImpl::extra_repr() const {
  return "approximate='" + approximate + "'";
}

Tensor SiLUImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::silu(x);
}

Tensor TanhImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::tanh(x);
}

Tensor SigmoidImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::sigmoid(x);
}

Tensor SoftmaxImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::softmax(x, dim);
}

std::string SoftmaxImpl::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

Tensor LogSoftmaxImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::log_softmax(x, dim);
}

std::string LogSoftmaxImpl::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

} // namespace ditto::nn
