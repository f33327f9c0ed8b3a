#include "ditto/nn/modules/linear.h"

#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

LinearImpl::LinearImpl(const LinearOptions& o) : Module("Linear"), options(o) {
  DITTO_CHECK(
      o.in_features() >= 0 && o.out_features() >= 0,
      ValueError,
      "Linear",
      "in_features and out_features must be non-negative, got ",
      o.in_features(),
      " and ",
      o.out_features());
  weight = register_parameter(
      "weight", uninitialized({o.out_features(), o.in_features()}));
  if (o.bias()) {
    bias = register_parameter("bias", uninitialized({o.out_features()}));
  }
  defer_reset([w = weight, b = bias] { reset_weight_and_bias(w, b); });
}

void LinearImpl::reset_parameters() {
  detail::run_deferred();
  reset_weight_and_bias(weight, bias);
}

Tensor LinearImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(x.defined(), ValueError, "Linear", "undefined input");
  DITTO_CHECK(
      x.dim() >= 1 && x.size(-1) == options.in_features(),
      ValueError,
      "Linear",
      "mat1 and mat2 shapes cannot be multiplied: input of size ",
      shape_str(x.sizes()),
      " for in_features=",
      options.in_features());
  return functional::linear(x, weight, bias);
}

std::string LinearImpl::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) +
      ", out_features=" + std::to_string(options.out_features()) +
      ", bias=" + py_bool(bias.defined());
}

Tensor FlattenImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return x.flatten(start_dim, end_dim);
}

std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) +
      ", end_dim=" + std::to_string(end_dim);
}

Tensor UnflattenImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(x.defined(), ValueError, "Unflatten", "undefined input");
  const int64_t d = wrap_dim(dim, x.dim(), "Unflatten");
  Shape s(x.sizes().begin(), x.sizes().begin() + d);
  s.insert(s.end(), sizes.begin(), sizes.end());
  s.insert(s.end(), x.sizes().begin() + d + 1, x.sizes().end());
  return x.reshape(s);
}

std::string UnflattenImpl::extra_repr() const {
  return "dim=" + std::to_string(dim) +
      ", unflattened_size=" + py_tuple(sizes, sizes.size());
}

} // namespace ditto::nn
