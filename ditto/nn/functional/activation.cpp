// The activations of nn::functional, forward and backward.

#include "ditto/nn/functional/activation.h"

#include <cmath>

#include "ditto/core/error.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/elementwise_engine.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/reduce.h"

// Declared in ditto/ops/composite/activation.ops.toml (namespace ditto, as
// ATen's; nn::functional names them too).
namespace ditto {
namespace {

using detail::check_floating;

} // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  detail::OpScope op("leaky_relu", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, "leaky_relu", "undefined input");
  return op.done(where(gt(x, 0.0), x, mul(x, negative_slope)));
}

Tensor silu(const Tensor& x) {
  if (detail::is_storage(x)) {
    return silu(detail::upcast(x)).to(x.dtype());
  }
  detail::OpScope op("silu", {x}, detail::OpScope::kComposite);
  return op.done(mul(x, sigmoid(x)));
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  const bool tanh_form = approximate == "tanh";
  DITTO_CHECK(
      tanh_form || approximate == "none",
      ValueError,
      "gelu",
      "approximate argument must be either none or tanh, got ",
      approximate);
  detail::OpScope op("gelu", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, "gelu", "undefined input");
  if (tanh_form) {
    // PyTorch's grouping: 0.5 x (1 + tanh(kBeta (x + kKappa x^3))).
    const double beta = 0.7978845608028654; // sqrt(2) * 2/sqrt(pi) / 2
    Tensor inner = mul(add(x, mul(mul(mul(x, x), x), 0.044715)), beta);
    return op.done(mul(mul(x, 0.5), add(tanh(inner), 1.0)));
  }
  // x Phi(x) in one pass, with PyTorch's backward (Note [Float GELU],
  // kernels::UnaryOp::Gelu).
  return op.done(detail::unary(kernels::UnaryOp::Gelu, x));
}

namespace {

Tensor log_softmax_of(const Tensor& x, int64_t dim) {
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    return log_softmax_of(detail::upcast(x), dim).to(x.dtype());
  }
  detail::OpScope scope("log_softmax", {x});
  check_floating(x, "log_softmax");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "log_softmax");
  Tensor out;
  if (x.numel() == 0) {
    out = detail::new_tensor(x.sizes(), x.dtype(), x.device());
  } else {
    Tensor v = x.dim() == 0 ? x.reshape({1}) : x;
    Tensor shifted = sub(v, max(v, d, true).first);
    out = sub(shifted, log(sum(exp(shifted), {d}, true))).reshape(x.sizes());
  }
  return scope.done(
      out, [d, sy = scope.save(out)](const autograd::GradList& g) {
        Tensor y = sy.unpack();
        Tensor gv = y.dim() == 0 ? g[0].reshape({1}) : g[0];
        Tensor yv = y.dim() == 0 ? y.reshape({1}) : y;
        Tensor gx = sub(gv, mul(exp(yv), sum(gv, {d}, true)));
        return autograd::GradList{gx.reshape(y.sizes())};
      });
}

Tensor softmax_of(const Tensor& x, int64_t dim) {
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    return softmax_of(detail::upcast(x), dim).to(x.dtype());
  }
  detail::OpScope scope("softmax", {x});
  check_floating(x, "softmax");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "softmax");
  Tensor out;
  if (x.numel() == 0) {
    out = detail::new_tensor(x.sizes(), x.dtype(), x.device());
  } else {
    Tensor v = x.dim() == 0 ? x.reshape({1}) : x;
    Tensor e = exp(sub(v, max(v, d, true).first));
    out = div(e, sum(e, {d}, true)).reshape(x.sizes());
  }
  return scope.done(
      out, [d, sy = scope.save(out)](const autograd::GradList& g) {
        Tensor y = sy.unpack();
        Tensor gv = y.dim() == 0 ? g[0].reshape({1}) : g[0];
        Tensor yv = y.dim() == 0 ? y.reshape({1}) : y;
        Tensor gx = mul(yv, sub(gv, sum(mul(gv, yv), {d}, true)));
        return autograd::GradList{gx.reshape(y.sizes())};
      });
}

} // namespace

// torch.log_softmax(x, dim, dtype): x converted to dtype first.
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<Dtype> dtype) {
  return log_softmax_of(dtype ? x.to(*dtype) : x, dim);
}

Tensor softmax(const Tensor& x, int64_t dim, std::optional<Dtype> dtype) {
  return softmax_of(dtype ? x.to(*dtype) : x, dim);
}

} // namespace ditto
