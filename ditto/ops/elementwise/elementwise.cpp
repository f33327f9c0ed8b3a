#include "ditto/ops/elementwise.h"

#include <cmath>
#include <optional>

#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/detail/elementwise_engine.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/sparse.h"

namespace ditto {
namespace {

using detail::add_scaled;
using detail::binary;
using detail::binary_st;
using detail::binary_ts;
using detail::binary_tt;
using detail::can_cast;
using detail::clamp_into;
using detail::fused;
using detail::ResultTypeState;
using detail::unary;
using detail::wrap;
using kernels::BinaryOp;
using kernels::FusedOp;
using kernels::UnaryOp;

} // namespace

Dtype result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

Dtype result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

#define DITTO_BINARY_DEFS(fn, OP)               \
  Tensor fn(const Tensor& a, const Tensor& b) { \
    return binary_tt(BinaryOp::OP, a, b);       \
  }                                             \
  Tensor fn(const Tensor& a, const Scalar& b) { \
    return binary_ts(BinaryOp::OP, a, b);       \
  }
DITTO_BINARY_DEFS(mul, Mul)
DITTO_BINARY_DEFS(div, Div)
#undef DITTO_BINARY_DEFS

namespace {

// alpha as given by default (the integer 1): the plain sum, no multiply.
bool is_plain(const Scalar& alpha) {
  return alpha.is_integral() && alpha.to<int64_t>() == 1;
}

// alpha * other for a number other, computed first as torch's Python
// binding does: integers multiply wrapping (a product past 2^63 was
// undefined behaviour).
Scalar scaled(const Scalar& other, const Scalar& alpha) {
  if (is_plain(alpha)) {
    return other;
  }
  if (alpha.is_floating() || other.is_floating()) {
    return Scalar(other.to<double>() * alpha.to<double>());
  }
  return Scalar(
      int64_t(uint64_t(other.to<int64_t>()) * uint64_t(alpha.to<int64_t>())));
}

} // namespace

Tensor pow(const Tensor& a, const Tensor& b) {
  return binary_tt(BinaryOp::Pow, a, b);
}

namespace {

// Note [pow with a scalar exponent]
// PyTorch 1.13's formulas for these exponents (pow_out, Pow.cpp, and
// pow_tensor_scalar_kernel, PowKernel.cpp): 2 x*x, 3 (x*x)*x, -2
// 1/(x*x), 0.5 sqrt(x), -0.5 1/sqrt(x), -1 1/x, 1 a copy, so their bits are
// PyTorch's. x*x, sqrt(x) and 1/x are correctly rounded, as the general
// pow is wherever it rounds correctly; the others round twice, as in
// PyTorch. Where IEEE's pow and these differ, they follow PyTorch:
// sqrt(-0) = -0 and sqrt(-inf) = NaN (pow: +0 and +inf). Null for other
// exponents.
Tensor pow_special(const Tensor& x, double e) {
  if (e == 2.0) {
    return mul(x, x);
  }
  if (e == 3.0) {
    // One pass on the CPU (the device has no cube kernel: two products).
    return x.is_cpu() ? detail::unary(kernels::UnaryOp::Cube, x)
                      : mul(mul(x, x), x);
  }
  if (e == -2.0) {
    return binary_st(BinaryOp::Div, 1.0, mul(x, x));
  }
  if (e == 0.5) {
    return sqrt(x);
  }
  if (e == -0.5) {
    return binary_st(BinaryOp::Div, 1.0, sqrt(x));
  }
  if (e == -1.0) {
    return binary_st(BinaryOp::Div, 1.0, x);
  }
  if (e == 1.0) {
    return x.clone();
  }
  return Tensor();
}

} // namespace

Tensor pow(const Tensor& a, const Scalar& b) {
  const Dtype compute = a.defined() ? result_type(a, b) : kFloat32;
  if (!a.defined() || !is_floating(compute) || a.impl()->is_sparse()) {
    return binary_ts(BinaryOp::Pow, a, b);
  }
  const double e = b.to<double>();
  detail::OpScope scope("pow", {a});
  const Tensor x = a.dtype() == compute ? a : a.to(compute);
  Tensor out = pow_special(x, e);
  if (!out.defined()) {
    out = binary_ts(BinaryOp::Pow, x, b);
  }
  // PyTorch's pow_backward for a scalar exponent: grad * (e * x^(e-1)),
  // zeros for e = 0; x^(e-1) takes the fast paths above too.
  return scope.done(out, [e, sx = scope.save(x)](const autograd::GradList& g) {
    Tensor x = sx.unpack();
    if (e == 0.0) {
      return autograd::GradList{zeros_like(x)};
    }
    return autograd::GradList{mul(g[0], mul(pow(x, e - 1.0), e))};
  });
}

namespace {
// Sums with a sparse operand take their own path
// (ditto/ops/sparse/sparse_arith.cpp).
bool any_sparse(const Tensor& a, const Tensor& b) {
  return (a.defined() && a.impl()->is_sparse()) ||
      (b.defined() && b.impl()->is_sparse());
}
} // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (any_sparse(a, b)) {
    return detail::sparse_add(a, b, alpha);
  }
  if (is_plain(alpha)) {
    return binary_tt(BinaryOp::Add, a, b);
  }
  return add_scaled("add", a, b, alpha, nullptr);
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return binary_ts(BinaryOp::Add, a, scaled(b, alpha));
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (is_plain(alpha)) {
    return binary_tt(BinaryOp::Sub, a, b);
  }
  return add_scaled("sub", a, b, alpha, nullptr, /*subtract=*/true);
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return binary_ts(BinaryOp::Sub, a, scaled(b, alpha));
}

Tensor clamp(
    const Tensor& a,
    const std::optional<Scalar>& min,
    const std::optional<Scalar>& max) {
  DITTO_CHECK(a.defined(), ValueError, "clamp", "undefined tensor");
  ResultTypeState s;
  s.add(a);
  if (min) {
    s.add(*min);
  }
  if (max) {
    s.add(*max);
  }
  Tensor out = detail::new_tensor(a.sizes(), s.result(), a.device());
  clamp_into("clamp", out, a, min, max);
  return out;
}

namespace {

// torch.lerp on start, end and weight (all three given, or weight a
// number): the one loop over the broadcast shape, and the backward.
Tensor lerp_impl(
    const Tensor& start,
    const Tensor& end,
    const Tensor* weight,
    double scalar_weight) {
  const char* op = "lerp";
  if (detail::is_storage(start) && is_floating(start.dtype())) {
    // Note [Storage dtypes]: in float32, rounded once.
    Tensor w = weight ? detail::upcast(*weight) : Tensor();
    return lerp_impl(
               detail::upcast(start),
               detail::upcast(end),
               weight ? &w : nullptr,
               scalar_weight)
        .to(start.dtype());
  }
  // The scope keeps pointers to its inputs: the list outlives it.
  const std::vector<Tensor> inputs = weight
      ? std::vector<Tensor>{start, end, *weight}
      : std::vector<Tensor>{start, end};
  detail::OpScope scope(op, inputs);
  DITTO_CHECK(
      start.defined() && end.defined() && (!weight || weight->defined()),
      ValueError,
      op,
      "undefined tensor");
  const Dtype dt = start.dtype();
  DITTO_CHECK(
      is_floating(dt) && end.dtype() == dt &&
          (!weight || weight->dtype() == dt),
      TypeError,
      op,
      "expected start, end and weight of one floating dtype, got ",
      dtype_name(start.dtype()),
      ", ",
      dtype_name(end.dtype()),
      weight ? ", " : "",
      weight ? dtype_name(weight->dtype()) : "");
  Shape shape = broadcast_shapes(start.sizes(), end.sizes(), op);
  if (weight) {
    shape = broadcast_shapes(shape, weight->sizes(), op);
  }
  checked_numel(shape, op);
  const Tensor s = start.expand(shape).contiguous();
  const Tensor e = end.expand(shape).contiguous();
  const Tensor w = weight ? weight->expand(shape).contiguous() : Tensor();
  Tensor out = detail::new_tensor(shape, dt);
  const int64_t n = out.numel();
  dispatch_dtype(dt, op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* sp = s.data_ptr<T>();
      const T* ep = e.data_ptr<T>();
      const T* wp = weight ? w.data_ptr<T>() : nullptr;
      const T ws = T(scalar_weight);
      T* op_ = out.data_ptr<T>();
      parallel_for(
          0, n, detail::elementwise_grain(n), [&](int64_t b, int64_t f) {
            for (int64_t i = b; i < f; ++i) {
              const T wt = wp ? wp[i] : ws;
              const bool small = std::fabs(wt) < T(0.5);
              op_[i] = std::fma(
                  small ? wt : wt - T(1), ep[i] - sp[i], small ? sp[i] : ep[i]);
            }
          });
    }
  });
  return scope.done(
      out,
      [ss = scope.save(start),
       se = scope.save(end),
       sw = weight ? scope.save(*weight) : autograd::SavedTensor(),
       has_w = weight != nullptr,
       scalar_weight](const autograd::GradList& g) {
        // PyTorch's: start grad * (1 - weight), end grad * weight, weight
        // grad * (end - start).
        if (!has_w) {
          return autograd::GradList{
              mul(g[0], 1.0 - scalar_weight), mul(g[0], scalar_weight)};
        }
        const Tensor wt = sw.unpack();
        return autograd::GradList{
            mul(g[0], sub(full({}, 1.0, wt.dtype()), wt)),
            mul(g[0], wt),
            mul(g[0], sub(se.unpack(), ss.unpack()))};
      });
}

} // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return lerp_impl(start, end, &weight, 0.0);
}

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  return lerp_impl(start, end, nullptr, weight.to<double>());
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::OpScope scope("where", {cond, a, b});
  DITTO_CHECK(
      cond.defined() && a.defined() && b.defined(),
      ValueError,
      "where",
      "undefined tensor");
  DITTO_CHECK(
      cond.dtype() == kBool,
      TypeError,
      "where",
      "expected condition to be a bool tensor, but got ",
      cond.dtype());
  Shape shape = broadcast_shapes(
      broadcast_shapes(cond.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Dtype d = result_type(a, b);
  const Device device = detail::op_device({cond, a, b});
  Tensor out = detail::new_tensor(shape, d, device);
  detail::device_slots(out, "where")
      .where(
          out,
          cond.expand(shape),
          detail::slot_operand(a.to(d), shape),
          detail::slot_operand(b.to(d), shape),
          "where");
  return scope.done(out, [sc = scope.save(cond)](const autograd::GradList& g) {
    Tensor c = sc.unpack();
    return autograd::GradList{
        Tensor(), where(c, g[0], 0.0), where(c, 0.0, g[0])};
  });
}

Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where(cond, a, wrap(b, result_type(a, b)));
}

Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where(cond, wrap(a, result_type(b, a)), b);
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator+(const Tensor& a, const Scalar& b) {
  return add(a, b);
}
Tensor operator+(const Scalar& a, const Tensor& b) {
  return binary_st(BinaryOp::Add, a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator-(const Tensor& a, const Scalar& b) {
  return sub(a, b);
}
Tensor operator-(const Scalar& a, const Tensor& b) {
  return binary_st(BinaryOp::Sub, a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator*(const Tensor& a, const Scalar& b) {
  return mul(a, b);
}
Tensor operator*(const Scalar& a, const Tensor& b) {
  return binary_st(BinaryOp::Mul, a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator/(const Tensor& a, const Scalar& b) {
  return div(a, b);
}
Tensor operator/(const Scalar& a, const Tensor& b) {
  return binary_st(BinaryOp::Div, a, b);
}
Tensor operator-(const Tensor& a) {
  return neg(a);
}
#define DITTO_CMP_OPERATORS(sym, fn)                      \
  Tensor operator sym(const Tensor& a, const Tensor& b) { \
    return fn(a, b);                                      \
  }                                                       \
  Tensor operator sym(const Tensor& a, const Scalar& b) { \
    return fn(a, b);                                      \
  }
DITTO_CMP_OPERATORS(==, eq)
DITTO_CMP_OPERATORS(!=, ne)
DITTO_CMP_OPERATORS(<, lt)
DITTO_CMP_OPERATORS(<=, le)
DITTO_CMP_OPERATORS(>, gt)
DITTO_CMP_OPERATORS(>=, ge)
#undef DITTO_CMP_OPERATORS

// ---- in-place methods

#define DITTO_INPLACE_DEFS(method, OP)                                   \
  Tensor& Tensor::method(const Tensor& other) {                          \
    check_defined(#method);                                              \
    binary(BinaryOp::OP, *this, other, result_type(*this, other), this); \
    return *this;                                                        \
  }                                                                      \
  Tensor& Tensor::method(const Scalar& other) {                          \
    check_defined(#method);                                              \
    Dtype compute = result_type(*this, other);                           \
    binary(BinaryOp::OP, *this, wrap(other, compute), compute, this);    \
    return *this;                                                        \
  }
DITTO_INPLACE_DEFS(mul_, Mul)
DITTO_INPLACE_DEFS(div_, Div)
#undef DITTO_INPLACE_DEFS

namespace {

// self += alpha * other, or -= (subtract): the plain kernel for alpha 1,
// else one fused multiply-add, as the out-of-place forms.
Tensor& add_or_sub_(
    Tensor& self,
    const Tensor& other,
    const Scalar& alpha,
    bool subtract) {
  if (is_plain(alpha)) {
    binary(
        subtract ? BinaryOp::Sub : BinaryOp::Add,
        self,
        other,
        result_type(self, other),
        &self);
  } else {
    add_scaled(subtract ? "sub_" : "add_", self, other, alpha, &self, subtract);
  }
  return self;
}
Tensor& add_or_sub_(
    Tensor& self,
    const Scalar& other,
    const Scalar& alpha,
    bool subtract) {
  const Scalar v = scaled(other, alpha);
  Dtype compute = result_type(self, v);
  binary(
      subtract ? BinaryOp::Sub : BinaryOp::Add,
      self,
      wrap(v, compute),
      compute,
      &self);
  return self;
}

} // namespace

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  check_defined("add_");
  if (any_sparse(*this, other)) {
    return detail::sparse_add_(*this, other, alpha);
  }
  return add_or_sub_(*this, other, alpha, false);
}
Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) {
  check_defined("add_");
  return add_or_sub_(*this, other, alpha, false);
}
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  check_defined("sub_");
  return add_or_sub_(*this, other, alpha, true);
}
Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) {
  check_defined("sub_");
  return add_or_sub_(*this, other, alpha, true);
}
Tensor& Tensor::pow_(const Tensor& exponent) {
  return detail::inplace_from(*this, "pow_", [&](const Tensor& x) {
    return ::ditto::pow(x, exponent);
  });
}
Tensor& Tensor::pow_(const Scalar& exponent) {
  return detail::inplace_from(*this, "pow_", [&](const Tensor& x) {
    return ::ditto::pow(x, exponent);
  });
}
Tensor addcmul(
    const Tensor& self,
    const Tensor& t1,
    const Tensor& t2,
    const Scalar& value) {
  return fused(
      FusedOp::Addcmul, "addcmul", self, t1, &t2, value.to<double>(), nullptr);
}
Tensor addcdiv(
    const Tensor& self,
    const Tensor& t1,
    const Tensor& t2,
    const Scalar& value) {
  return fused(
      FusedOp::Addcdiv, "addcdiv", self, t1, &t2, value.to<double>(), nullptr);
}

Tensor& Tensor::addcmul_(
    const Tensor& t1,
    const Tensor& t2,
    const Scalar& value) {
  check_defined("addcmul_");
  fused(FusedOp::Addcmul, "addcmul_", *this, t1, &t2, value.to<double>(), this);
  return *this;
}
Tensor& Tensor::addcdiv_(
    const Tensor& t1,
    const Tensor& t2,
    const Scalar& value) {
  check_defined("addcdiv_");
  fused(FusedOp::Addcdiv, "addcdiv_", *this, t1, &t2, value.to<double>(), this);
  return *this;
}

Tensor& Tensor::clamp_(
    const std::optional<Scalar>& min,
    const std::optional<Scalar>& max) {
  check_defined("clamp_");
  detail::check_no_internal_overlap(*this, "clamp_");
  ResultTypeState s;
  s.add(*this);
  if (min) {
    s.add(*min);
  }
  if (max) {
    s.add(*max);
  }
  DITTO_CHECK(
      can_cast(s.result(), dtype()),
      TypeError,
      "clamp_",
      "result type ",
      s.result(),
      " can't be cast to the desired output type ",
      dtype());
  clamp_into("clamp_", *this, *this, min, max);
  return *this;
}

} // namespace ditto
