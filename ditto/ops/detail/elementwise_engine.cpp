#include "ditto/ops/detail/elementwise_engine.h"

#include <array>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>

#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto::detail {

using kernels::BinaryOp;
using kernels::FusedOp;
using kernels::UnaryOp;

// c10's combine_categories: a lower-priority operand only changes the
// result when it is of a higher category.
std::optional<Dtype> combine_categories(
    std::optional<Dtype> higher,
    std::optional<Dtype> lower) {
  if (!higher) {
    return lower;
  }
  if (!lower) {
    return higher;
  }
  if (is_floating(*higher)) {
    return higher;
  }
  if (*higher == kBool || is_floating(*lower)) {
    return promote_types(*higher, *lower);
  }
  return higher;
}

// A scalar operand as a 0-d tensor of the compute dtype. Not an op of its
// own: the trace shows only the op the scalar was given to.
Tensor wrap(const Scalar& s, Dtype d) {
  FpEnvGuard fp; // the conversion of s must not see the caller's mode
  // A storage dtype rounds the scalar to itself, as PyTorch converts a
  // wrapped number to the common dtype.
  const Dtype c = compute_dtype(d);
  Tensor t = detail::new_tensor({}, c);
  dispatch_dtype(
      c, "wrap", [&]<typename T>() { *t.data_ptr<T>() = s.to<T>(); });
  return c == d ? t : t.to(d);
}

bool can_cast(Dtype from, Dtype to) {
  if (is_floating(from) && !is_floating(to)) {
    return false;
  }
  if (from != kBool && to == kBool) {
    return false;
  }
  return true;
}

namespace {

// What the declarations say of each binary kernel (binary_ops.inc).
enum ResultRule { kResultSame, kResultBool, kResultFloating, kResultIntegral };
struct BinaryInfo {
  const char* name;
  // the result's dtype: promoted, bool, floating, promoted from integer and
  // bool operands only
  ResultRule result;
  int vulkan_code; // the binary shaders' code, or -1
  bool vulkan_float64; // the shader needs float64 (div's)
  bool integer_divisor; // an integer divisor of zero is refused
};
constexpr BinaryInfo kBinaryInfo[] = {
#define DITTO_BINARY_KERNEL(Name, name, result, code, f64, divisor) \
  {name, result, code, f64, divisor},
#include "ditto/kernels/cpu/binary_ops.inc" // generated
#undef DITTO_BINARY_KERNEL
};
static_assert(std::size(kBinaryInfo) == size_t(BinaryOp::Count));

// The op's name, or its in-place form's ("add_").
const char* binary_name(BinaryOp op, bool inplace) {
  static const auto inplace_names = [] {
    std::array<std::string, size_t(BinaryOp::Count)> n;
    for (size_t i = 0; i < n.size(); ++i) {
      n[i] = std::string(kBinaryInfo[i].name) + "_";
    }
    return n;
  }();
  return inplace ? inplace_names[size_t(op)].c_str()
                 : kBinaryInfo[int(op)].name;
}

bool is_comparison(BinaryOp op) {
  return kBinaryInfo[int(op)].result == kResultBool;
}

void check_binary_args(
    BinaryOp op,
    const char* name,
    Dtype compute,
    const Tensor& a,
    const Tensor& b) {
  DITTO_CHECK(a.defined() && b.defined(), ValueError, name, "undefined tensor");
  if (op == BinaryOp::Sub) {
    DITTO_CHECK(
        compute != kBool,
        TypeError,
        name,
        "subtraction, the `-` operator, with two bool tensors is not "
        "supported; use the `^` or logical_xor() operator instead");
  }
}

// Gradients of a binary op at the broadcast shape (the engine sums them
// back to each input's shape and casts them to its dtype). PyTorch's
// formulas (derivatives.yaml, 1.13), so results agree to rounding.
autograd::GradList binary_backward(
    BinaryOp op,
    const Tensor& g,
    const autograd::SavedTensor& saved_a,
    const autograd::SavedTensor& saved_b) {
  switch (op) {
    case BinaryOp::Add:
      return {g, g};
    case BinaryOp::Sub:
      return {g, neg(g)};
    default:
      break;
  }
  Tensor a = saved_a.unpack();
  Tensor b = saved_b.unpack();
  switch (op) {
#include "ditto/ops/detail/binary_backward.inc" // generated
    case BinaryOp::Mul:
      return {mul(g, b), mul(g, a)};
    case BinaryOp::Div:
      return {div(g, b), mul(neg(g), div(div(a, b), b))};
    case BinaryOp::Pow: {
      // d/da: b * a^(b-1), 0 where b == 0; d/db: a^b * log(a), 0 where
      // a == 0 and b >= 0.
      Tensor ga = where(eq(b, 0.0), 0.0, mul(g, mul(b, pow(a, sub(b, 1.0)))));
      Tensor y = pow(a, b);
      Tensor zero_base = bitwise_and(eq(a, 0.0), ge(b, 0.0));
      Tensor gb = mul(g, where(zero_base, 0.0, mul(y, log(a))));
      return {ga, gb};
    }
    default:
      return {Tensor(), Tensor()}; // comparisons: no gradient
  }
}

Tensor unary_backward(
    UnaryOp op,
    const Tensor& g,
    const autograd::SavedTensor& saved_x,
    const autograd::SavedTensor& saved_y) {
  switch (op) {
#include "ditto/ops/detail/unary_backward.inc" // generated
    default:
      return {};
  }
}

} // namespace

// The core of every binary op: validate, promote, broadcast, run the loop.
// With out given (in-place), the result is written there.
Tensor binary(
    BinaryOp op,
    const Tensor& a,
    const Tensor& b_in,
    Dtype compute,
    const Tensor* out) {
  const bool inplace = out != nullptr;
  const char* name = binary_name(op, inplace);
  detail::OpScope scope(
      name,
      {a, b_in},
      inplace ? detail::OpScope::kInplace : detail::OpScope::kPlain);
  const BinaryInfo& info = kBinaryInfo[int(op)];
  if (info.result == kResultFloating && !is_floating(compute)) {
    compute = kFloat32;
  }
  check_binary_args(op, name, compute, a, b_in);
  if (info.integer_divisor && !is_floating(compute)) {
    DITTO_CHECK(
        !any(eq(b_in, 0)).item<bool>(),
        ValueError,
        name,
        "ZeroDivisionError: an integer divisor is zero");
  }
  Shape shape = broadcast_shapes(a.sizes(), b_in.sizes(), name);
  Dtype result_dtype = is_comparison(op) ? kBool : compute;
  // Note [Storage dtypes]: the kernel runs in the compute dtype, and the
  // result is rounded to result_dtype once, at the end.
  compute = compute_dtype(compute);
  const Dtype kernel_result = is_comparison(op) ? kBool : compute;
  const Device device = detail::op_device({a, b_in});
  Tensor dst;
  if (inplace) {
    DITTO_CHECK(
        shape == out->sizes(),
        ValueError,
        name,
        "output with shape ",
        shape_str(out->sizes()),
        " doesn't match the broadcast shape ",
        shape_str(shape));
    DITTO_CHECK(
        can_cast(result_dtype, out->dtype()),
        TypeError,
        name,
        "result type ",
        result_dtype,
        " can't be cast to the desired output type ",
        out->dtype());
    detail::check_no_internal_overlap(*out, name);
    dst = out->dtype() == kernel_result
        ? *out
        : detail::new_tensor(shape, kernel_result, device);
  } else {
    dst = detail::new_tensor(shape, kernel_result, device);
  }
  auto prepare = [&](const Tensor& t) {
    Tensor c = t.to(compute);
    if (inplace && detail::shares_storage(c, dst) &&
        !(detail::same_view(c, dst))) {
      c = c.clone(); // partial overlap: read from a copy
    }
    // Same shape: no view to make (a new tensor per operand, ~15% of a
    // one-element add from Python).
    return detail::slot_operand(c, shape);
  };
  // What the backward needs, before an in-place op overwrites a.
  autograd::SavedTensor saved_a, saved_b;
  if (scope.needs_grad() && op != BinaryOp::Add && op != BinaryOp::Sub) {
    saved_a = scope.save(inplace ? a.clone() : a);
    saved_b = scope.save(b_in);
  }
  Tensor x = prepare(a);
  Tensor y = prepare(b_in);
  DITTO_CHECK(
      scope.kernels().binary[int(op)][dtype_index(compute)] != nullptr,
      TypeError,
      name,
      "not implemented for ",
      compute,
      info.result == kResultIntegral ? " (integer and bool tensors only)" : "");
  detail::device_slots(dst, name).binary(
      int(op),
      info.vulkan_code,
      info.result == kResultBool,
      info.vulkan_float64,
      dst,
      x,
      y,
      name);
  if (inplace && !dst.is_same(*out)) {
    detail::copy_into(*out, dst, name);
    dst = *out;
  } else if (dst.dtype() != result_dtype) {
    dst = dst.to(result_dtype);
  }
  auto backward = [op, saved_a, saved_b](const autograd::GradList& g) {
    return binary_backward(op, g[0], saved_a, saved_b);
  };
  if (inplace) {
    return scope.done_inplace(dst, backward);
  }
  return scope.done(dst, backward);
}

Tensor binary_tt(BinaryOp op, const Tensor& a, const Tensor& b) {
  // Before promotion reads their dtypes: the error names the op.
  DITTO_CHECK(
      a.defined() && b.defined(),
      ValueError,
      binary_name(op, false),
      "undefined tensor");
  return binary(op, a, b, result_type(a, b), nullptr);
}

Tensor binary_ts(BinaryOp op, const Tensor& a, const Scalar& b) {
  DITTO_CHECK(
      a.defined(), ValueError, binary_name(op, false), "undefined tensor");
  Dtype compute = result_type(a, b);
  // As PyTorch: a negative integer scalar exponent is an error for integer
  // tensors (a tensor of exponents gives 1/x^n truncated instead).
  DITTO_CHECK(
      !(op == BinaryOp::Pow && !is_floating(compute) && b.is_integral() &&
        b.to<int64_t>() < 0),
      ValueError,
      "pow",
      "integers to negative integer powers are not allowed");
  return binary(op, a, wrap(b, compute), compute, nullptr);
}

Tensor& binary_inplace(BinaryOp op, Tensor& self, const Tensor& other) {
  const char* name = binary_name(op, true);
  DITTO_CHECK(
      self.defined() && other.defined(), ValueError, name, "undefined tensor");
  binary(op, self, other, result_type(self, other), &self);
  return self;
}

Tensor& binary_inplace(BinaryOp op, Tensor& self, const Scalar& other) {
  const char* name = binary_name(op, true);
  DITTO_CHECK(self.defined(), ValueError, name, "undefined tensor");
  const Dtype compute = result_type(self, other);
  binary(op, self, wrap(other, compute), compute, &self);
  return self;
}

Tensor binary_st(BinaryOp op, const Scalar& a, const Tensor& b) {
  DITTO_CHECK(
      b.defined(), ValueError, binary_name(op, false), "undefined tensor");
  Dtype compute = result_type(b, a);
  return binary(op, wrap(a, compute), b, compute, nullptr);
}

// add(a, b, alpha), addcmul, addcdiv: one loop with PyTorch's roundings
// (kernel_table.h, FusedOp). Floating types only; c is null for AddScaled.
// With out given (in-place), the result is written there.
Tensor fused(
    FusedOp op,
    const char* name,
    const Tensor& a,
    const Tensor& b,
    const Tensor* c,
    double s,
    const Tensor* out) {
  const bool inplace = out != nullptr;
  detail::OpScope scope(
      name,
      c ? detail::OpScope::Inputs{a, b, *c} : detail::OpScope::Inputs{a, b},
      inplace ? detail::OpScope::kInplace : detail::OpScope::kPlain);
  DITTO_CHECK(
      a.defined() && b.defined() && (!c || c->defined()),
      ValueError,
      name,
      "undefined tensor");
  DITTO_CHECK(
      std::isfinite(s) || op == FusedOp::AddScaled,
      ValueError,
      name,
      "value must be finite, got ",
      s);
  ResultTypeState rt;
  rt.add(a);
  rt.add(b);
  if (c) {
    rt.add(*c);
  }
  Dtype compute = rt.result();
  DITTO_CHECK(
      is_floating(compute),
      TypeError,
      name,
      "needs floating tensors, got ",
      compute);
  const Device device =
      c ? detail::op_device({a, b, *c}) : detail::op_device({a, b});
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  if (c) {
    shape = broadcast_shapes(shape, c->sizes(), name);
  }
  Tensor dst;
  if (inplace) {
    DITTO_CHECK(
        shape == out->sizes(),
        ValueError,
        name,
        "output with shape ",
        shape_str(out->sizes()),
        " doesn't match the broadcast shape ",
        shape_str(shape));
    DITTO_CHECK(
        can_cast(compute, out->dtype()),
        TypeError,
        name,
        "result type ",
        compute,
        " can't be cast to the desired output type ",
        out->dtype());
    detail::check_no_internal_overlap(*out, name);
  }
  // Note [Storage dtypes]: float16 and bfloat16 compute in float32.
  const Dtype result_dtype = compute;
  compute = compute_dtype(compute);
  if (inplace) {
    dst = out->dtype() == compute ? *out
                                  : detail::new_tensor(shape, compute, device);
  } else {
    dst = detail::new_tensor(shape, compute, device);
  }
  auto prepare = [&](const Tensor& t) {
    Tensor p = t.to(compute);
    if (inplace && detail::shares_storage(p, dst) &&
        !detail::same_view(p, dst)) {
      p = p.clone();
    }
    return detail::slot_operand(p, shape);
  };
  autograd::SavedTensor saved_b, saved_c;
  if (scope.needs_grad() && op != FusedOp::AddScaled) {
    saved_b = scope.save(b);
    saved_c = scope.save(*c);
  }
  Tensor x = prepare(a);
  Tensor y = prepare(b);
  Tensor z = c ? prepare(*c) : Tensor();
  DITTO_ASSERT(scope.kernels().fused[int(op)][dtype_index(compute)] != nullptr);
  detail::device_slots(dst, name).fused(
      int(op), s, dst, x, y, c ? &z : nullptr, name);
  if (inplace && !dst.is_same(*out)) {
    detail::copy_into(*out, dst, name);
    dst = *out;
  } else if (dst.dtype() != result_dtype) {
    dst = dst.to(result_dtype);
  }
  auto backward = [op, s, saved_b, saved_c](const autograd::GradList& g) {
    const Tensor& go = g[0];
    if (op == FusedOp::AddScaled) {
      return autograd::GradList{go, mul(go, s)};
    }
    Tensor bv = saved_b.unpack();
    Tensor cv = saved_c.unpack();
    Tensor gs = mul(go, s);
    if (op == FusedOp::Addcmul) {
      return autograd::GradList{go, mul(gs, cv), mul(gs, bv)};
    }
    return autograd::GradList{
        go, div(gs, cv), neg(div(mul(gs, bv), mul(cv, cv)))};
  };
  if (inplace) {
    return scope.done_inplace(const_cast<Tensor&>(*out), backward);
  }
  return scope.done(dst, backward);
}

// add/sub with alpha: floating operands take the fused loop; integer ones
// compute a + alpha*b exactly as PyTorch does for them.
Tensor add_scaled(
    const char* name,
    const Tensor& a,
    const Tensor& b,
    const Scalar& alpha_in,
    const Tensor* out,
    bool subtract) {
  DITTO_CHECK(a.defined() && b.defined(), ValueError, name, "undefined tensor");
  const Dtype rt = result_type(a, b);
  Scalar alpha = alpha_in;
  if (subtract) {
    // Negated without overflow: integers wrap (as their products do), a
    // floating alpha or result negates exactly in double.
    alpha = alpha_in.is_integral() && !is_floating(rt)
        ? Scalar(int64_t(uint64_t(0) - uint64_t(alpha_in.to<int64_t>())))
        : Scalar(-alpha_in.to<double>());
  }
  double s = alpha.to<double>();
  if (!has_kernels(rt) && is_floating(rt)) {
    // Note [Storage dtypes]: PyTorch converts alpha to the dtype first.
    s = wrap(alpha, rt).to(kFloat64).item<double>();
  }
  if (is_floating(rt) && rt != kFloat16) {
    return fused(FusedOp::AddScaled, name, a, b, nullptr, s, out);
  }
  // Integers, and float16 (whose c10::Half product alpha * b is rounded
  // before the sum): one op frame around the parts, so the trace shows the
  // op the user called.
  detail::OpScope scope(
      name, {a, b}, out ? detail::OpScope::kInplace : detail::OpScope::kPlain);
  DITTO_CHECK(
      is_floating(rt) || alpha.is_integral(),
      TypeError,
      name,
      "for integral input tensors, argument alpha must not be a floating "
      "point number.");
  Tensor r = is_floating(rt) ? add(a, mul(b, s)) : add(a, mul(b, alpha));
  if (out) {
    Tensor& self = const_cast<Tensor&>(*out);
    self.copy_(r);
    return scope.done_inplace(self);
  }
  return scope.done(r);
}

namespace {

// What the declarations say of each unary kernel (unary_ops.inc).
enum UnaryRule { kUnaryNumeric, kUnaryFloating, kUnaryIntegral };
struct UnaryInfo {
  const char* name;
  // numeric: each dtype its own, bool refused; floating: integer and bool
  // inputs compute in float32; integral: integers and bool only
  UnaryRule rule;
  int vulkan_code; // the unary_f32 shader's code, or -1
  bool vulkan_float64; // the shader needs float64
  const char* bool_error; // why bool is refused, when it is not the usual
};
constexpr UnaryInfo kUnaryInfo[] = {
#define DITTO_UNARY_KERNEL(Name, name, rule, code, f64, bool_error) \
  {name, rule, code, f64, bool_error},
#include "ditto/kernels/cpu/unary_ops.inc" // generated
#undef DITTO_UNARY_KERNEL
};
static_assert(std::size(kUnaryInfo) == size_t(UnaryOp::Count));

} // namespace

Tensor unary(UnaryOp op, const Tensor& a) {
  const UnaryInfo& info = kUnaryInfo[int(op)];
  const char* name = info.name;
  detail::OpScope scope(name, {a});
  DITTO_CHECK(a.defined(), ValueError, name, "undefined tensor");
  Dtype compute = a.dtype();
  if (info.rule == kUnaryFloating && !is_floating(compute)) {
    compute = kFloat32;
  }
  DITTO_CHECK(
      info.rule != kUnaryIntegral || !is_floating(compute),
      TypeError,
      name,
      "not implemented for ",
      a.dtype(),
      " (integer and bool tensors only)");
  DITTO_CHECK(
      compute != kBool || info.rule == kUnaryIntegral,
      TypeError,
      name,
      info.bool_error != nullptr ? info.bool_error
                                 : "not implemented for bool");
  // Note [Storage dtypes]: float16 and bfloat16 compute in float32, int8
  // and int16 in int64; the result is rounded back once.
  const Dtype result_dtype = compute;
  compute = compute_dtype(compute);
  Tensor x = a.to(compute);
  Tensor out = detail::new_tensor(a.sizes(), compute, a.device());
  DITTO_ASSERT(scope.kernels().unary[int(op)][dtype_index(compute)] != nullptr);
  detail::device_slots(out, name).unary(
      int(op), info.vulkan_code, info.vulkan_float64, out, x, name);
  if (out.dtype() != result_dtype) {
    out = out.to(result_dtype);
  }
  return scope.done(
      out,
      [op, sa = scope.save(a), sy = scope.save(out)](
          const autograd::GradList& g) {
        return autograd::GradList{unary_backward(op, g[0], sa, sy)};
      });
}

// clamp into dst (a fresh tensor, or a in place).
void clamp_into(
    const char* name,
    const Tensor& dst,
    const Tensor& src,
    const std::optional<Scalar>& lo,
    const std::optional<Scalar>& hi) {
  const bool inplace = dst.is_same(src);
  detail::OpScope scope(
      name,
      {src},
      inplace ? detail::OpScope::kInplace : detail::OpScope::kPlain);
  // The gradient passes where lo <= x <= hi (x before the op).
  autograd::SavedTensor saved_x =
      scope.save(inplace && scope.needs_grad() ? src.clone() : src);
  DITTO_CHECK(
      lo || hi,
      ValueError,
      name,
      "at least one of 'min' or 'max' must not be None");
  Dtype d = compute_dtype(dst.dtype()); // Note [Storage dtypes]
  DITTO_CHECK(d != kBool, TypeError, name, "not implemented for bool");
  // A storage dtype clamps a converted copy and rounds it back.
  Tensor into =
      d == dst.dtype() ? dst : detail::new_tensor(dst.sizes(), d, dst.device());
  dispatch_dtype(d, name, [&]<typename T>() {
    // The bounds as 0-dim CPU tensors of d, exact.
    auto bound = [&](const std::optional<Scalar>& b) {
      if (!b) {
        return Tensor();
      }
      Tensor t = detail::new_tensor({}, d);
      *t.data_ptr<T>() = b->to_checked<T>(name);
      return t;
    };
    const Tensor lo_t = bound(lo), hi_t = bound(hi);
    Tensor x = src.to(d);
    if (const auto kernel = detail::device_slots(into, name).clamp) {
      kernel(into, x, lo ? &lo_t : nullptr, hi ? &hi_t : nullptr, name);
      return;
    }
    // A device without the slot: the CPU loop's two selects, maximum(lo,
    // x) and then minimum(hi, .), in that argument order (a NaN, a NaN
    // bound, -0 and lo > hi come out alike).
    autograd::NoGradGuard forward_only;
    Tensor v = x;
    if (lo) {
      v = maximum(lo_t, v);
    }
    if (hi) {
      v = minimum(hi_t, v);
    }
    detail::copy_into(into, v, name);
  });
  if (!into.is_same(dst)) {
    detail::copy_into(dst, into, name);
  }
  auto backward = [saved_x, lo, hi](const autograd::GradList& g) {
    Tensor x = saved_x.unpack();
    Tensor grad = g[0];
    if (lo) {
      grad = where(ge(x, *lo), grad, 0.0);
    }
    if (hi) {
      grad = where(le(x, *hi), grad, 0.0);
    }
    return autograd::GradList{grad};
  };
  Tensor result = dst;
  if (inplace) {
    scope.done_inplace(result, backward);
  } else {
    scope.done(result, backward);
  }
}

} // namespace ditto::detail
