#include "ditto/nn/modules/activation.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

Tensor ReLU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::relu(x);
}

Tensor LeakyReLU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::leaky_relu(x, negative_slope);
}

std::string LeakyReLU::extra_repr() const {
  return "negative_slope=" + py_float(negative_slope);
}

GELU::GELU(std::string a) : Module("GELU"), approximate(std::move(a)) {
  DITTO_CHECK(
      approximate == "none" || approximate == "tanh",
      ValueError,
      "GELU",
      "approximate argument must be either none or tanh, got ",
      approximate);
}

Tensor GELU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::gelu(x, approximate);
}

std::string GELU::extra_repr() const {
  return "approximate='" + approximate + "'";
}

Tensor SiLU::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::silu(x);
}

Tensor Tanh::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::tanh(x);
}

Tensor Sigmoid::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::sigmoid(x);
}

Tensor Softmax::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::softmax(x, dim);
}

std::string Softmax::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

Tensor LogSoftmax::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::log_softmax(x, dim);
}

std::string LogSoftmax::extra_repr() const {
  return "dim=" + std::to_string(dim);
}

} // namespace ditto::nn
