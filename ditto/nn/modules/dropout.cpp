#include "ditto/nn/modules/dropout.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& o)
    : Module("Dropout"), options(o) {
  DITTO_CHECK(
      o.p() >= 0 && o.p() <= 1,
      ValueError,
      "Dropout",
      "dropout probability has to be between 0 and 1, but got ",
      o.p());
}

Tensor DropoutImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::dropout(
      x, options.p(), is_training(), options.generator());
}

std::string DropoutImpl::extra_repr() const {
  return "p=" + py_float(options.p()) + ", inplace=False";
}

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& o)
    : Module("Dropout2d"), options(o) {
  DITTO_CHECK(
      o.p() >= 0 && o.p() <= 1,
      ValueError,
      "Dropout2d",
      "dropout probability has to be between 0 and 1, but got ",
      o.p());
}

Tensor Dropout2dImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::dropout2d(
      x, options.p(), is_training(), options.generator());
}

std::string Dropout2dImpl::extra_repr() const {
  return "p=" + py_float(options.p()) + ", inplace=False";
}

} // namespace ditto::nn
