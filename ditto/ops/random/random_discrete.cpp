// random_, randint, randperm, bernoulli and exponential_: PyTorch's CPU
// draws (ops/detail/random_fill.h; uniform_ and normal_ are in random.cpp).

#include "ditto/ops/detail/random_fill.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {

using namespace random_fill;

namespace {

// What random_ draws: v % range + from per element (PyTorch's plain modulo),
// v a 64-bit draw for int64, float and double with a range of 2^32 or more,
// a 32-bit one otherwise; full: every int64 (v itself, cast).
struct IntRange {
  int64_t from = 0;
  uint64_t range = 0;
  bool full = false;
};

// The values random_ may draw for a dtype: [lo, hi] (floating: the
// integers of magnitude up to 2^digits, each exact).
struct DrawLimits {
  bool floating;
  int64_t lo, hi;
};

DrawLimits draw_limits(Dtype dt) {
  switch (dt) {
    case kFloat16:
      return {true, -(int64_t(1) << 11), int64_t(1) << 11};
    case kBFloat16:
      return {true, -(int64_t(1) << 8), int64_t(1) << 8};
    case kFloat32:
      return {true, -(int64_t(1) << 24), int64_t(1) << 24};
    case kFloat64:
      return {true, -(int64_t(1) << 53), int64_t(1) << 53};
    case kBool:
      return {false, 0, 1};
    case kUInt8:
      return {false, 0, 255};
    case kInt8:
      return {false, -128, 127};
    case kInt16:
      return {false, -32768, 32767};
    case kInt32:
      return {false, INT32_MIN, INT32_MAX};
    case kInt64:
      break;
  }
  return {false, INT64_MIN, INT64_MAX};
}

// random_'s bounds as PyTorch's random_from_to_impl reads them: [from, to),
// or without to [from, the dtype's largest] (2^digits for floating dtypes,
// 1 for bool), or every int64 when from is INT64_MIN without to. random_()
// is random_(0, None).
IntRange random_bounds(Dtype dt, int64_t from, std::optional<int64_t> to) {
  if (!to && from == std::numeric_limits<int64_t>::min()) {
    DITTO_CHECK(
        dt == kInt64 || dt == kFloat32 || dt == kFloat64,
        TypeError,
        "random_",
        "the full int64 range (from=",
        from,
        ", to=None) is drawn for int64, float32 and float64 only, got ",
        dt);
    return {from, 0, true};
  }
  DITTO_CHECK(
      !to || from < *to,
      ValueError,
      "random_",
      "expects 'from' to be less than 'to', but got from=",
      from,
      " >= to=",
      *to);
  const DrawLimits lim = draw_limits(dt);
  // the largest value drawn (from < to, so to - 1 does not overflow)
  const int64_t hi = to ? *to - 1 : lim.hi;
  DITTO_CHECK(
      from >= lim.lo && hi <= lim.hi - (to && lim.floating ? 1 : 0),
      ValueError,
      "random_",
      "bounds [",
      from,
      ", ",
      to ? std::to_string(*to) : std::string("None"),
      lim.floating ? ") are not exactly representable in "
                   : ") are out of the range of ",
      dt);
  DITTO_CHECK(
      from <= hi,
      ValueError,
      "random_",
      "expects 'from' to be at most the largest value of ",
      dt,
      " (",
      hi,
      "), but got from=",
      from);
  return {from, uint64_t(hi) - uint64_t(from) + 1, false};
}

} // namespace

Tensor& Tensor::random_(
    int64_t from,
    std::optional<int64_t> to,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(*this)) {
    // Note [Storage dtypes]: PyTorch's draws for int64 over the same
    // bounds (32-bit draws: these ranges are under 2^32), converted.
    check_defined("random_");
    const IntRange r = random_bounds(dtype(), from, to);
    Tensor w = detail::new_tensor(sizes(), kInt64, device());
    w.random_(r.from, int64_t(uint64_t(r.from) + r.range), gen);
    return copy_(w);
  }
  detail::OpScope op("random_", {*this}, detail::OpScope::kInplace);
  if (!is_cpu()) {
    device_fill(*this, gen, "random_", [&](Tensor& host, const Generator& g) {
      host.random_(from, to, g);
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  check_defined("random_");
  const IntRange r = random_bounds(dtype(), from, to);
  detail::check_no_internal_overlap(*this, "random_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  dispatch_dtype(dtype(), "random_", [&]<typename T>() {
    constexpr bool kWide =
        std::is_same_v<T, int64_t> || std::is_floating_point_v<T>;
    if (r.full) {
      for_each_in_memory_order<T>(
          *this, [&](T* p) { *p = static_cast<T>(int64_t(g.random64())); });
      return;
    }
    const bool wide = kWide && r.range >= (uint64_t(1) << 32);
    for_each_in_memory_order<T>(*this, [&](T* p) {
      uint64_t v = wide ? g.random64() : g.random();
      *p = static_cast<T>(int64_t(v % r.range + uint64_t(r.from)));
    });
  });
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

// PyTorch's random_.to: random_(0, to).
Tensor& Tensor::random_(int64_t to, const std::optional<Generator>& gen) {
  return random_(0, to, gen);
}

// PyTorch's random_() draws what random_(0, None) does (uniform_int:
// v % (the dtype's largest + 1), 64-bit draws for int64 and float64).
Tensor& Tensor::random_(const std::optional<Generator>& gen) {
  return random_(0, std::nullopt, gen);
}

Tensor randint(
    int64_t low,
    int64_t high,
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  detail::OpScope op("randint");
  checked_numel(shape, "randint"); // its errors name randint, not empty
  Tensor t = detail::new_tensor(shape, dtype);
  if (detail::is_storage(t)) {
    // Note [Storage dtypes]: PyTorch's draws for int64, converted.
    t.copy_(randint(low, high, shape, kInt64, gen));
    return op.done(t);
  }
  t.random_(low, high, gen);
  return op.done(t);
}

Tensor randint_like(
    const Tensor& t,
    int64_t low,
    int64_t high,
    const std::optional<Generator>& gen) {
  return randint(low, high, t.sizes(), t.dtype(), gen);
}

// The forms with torch's options (random.ops.toml): drawn on the CPU, int64
// unless the options give a dtype, then on the options' device.
Tensor randint(
    int64_t high,
    const IntArg& size,
    const std::optional<Generator>& generator,
    const TensorOptions& options) {
  return randint(0, high, size, generator, options);
}

Tensor randint(
    int64_t low,
    int64_t high,
    const IntArg& size,
    const std::optional<Generator>& generator,
    const TensorOptions& options) {
  return detail::on_device(
      randint(low, high, size, options.dtype_opt().value_or(kInt64), generator),
      options);
}

// self's sizes, dtype and device unless the options give them.
Tensor randint_like(
    const Tensor& self,
    int64_t high,
    const TensorOptions& options) {
  return randint_like(self, 0, high, options);
}

Tensor randint_like(
    const Tensor& self,
    int64_t low,
    int64_t high,
    const TensorOptions& options) {
  return randint(
      low,
      high,
      self.sizes(),
      std::nullopt,
      detail::like_options(self, options));
}

Tensor randperm(
    int64_t n,
    const std::optional<Generator>& generator,
    const TensorOptions& options) {
  return detail::on_device(
      randperm(n, options.dtype_opt().value_or(kInt64), generator), options);
}

Tensor randperm(int64_t n, Dtype dtype, const std::optional<Generator>& gen) {
  detail::OpScope op("randperm");
  DITTO_CHECK(
      n >= 0, ValueError, "randperm", "n must be non-negative, got ", n);
  DITTO_CHECK(
      dtype != kBool, TypeError, "randperm", "not implemented for bool");
  const double limit = dtype == kFloat32 ? 0x1p24
      : dtype == kFloat64                ? 0x1p53
      : dtype == kInt32                  ? double(INT32_MAX)
      : dtype == kUInt8                  ? 256.0
                                         : 0x1p63;
  DITTO_CHECK(
      double(n) <= limit,
      ValueError,
      "randperm",
      "n ",
      n,
      " is too large for ",
      dtype);
  Tensor r = detail::new_tensor({n}, kInt64);
  int64_t* p = r.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    p[i] = i;
  }
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    for (int64_t i = 0; i + 1 < n; ++i) {
      int64_t z = int64_t(g.random() % uint64_t(n - i));
      std::swap(p[i], p[i + z]);
    }
  }
  return op.done(r.to(dtype));
}

Tensor& Tensor::bernoulli_(double p, const std::optional<Generator>& gen) {
  detail::OpScope op("bernoulli_", {*this}, detail::OpScope::kInplace);
  check_defined("bernoulli_");
  DITTO_CHECK(
      p >= 0.0 && p <= 1.0,
      ValueError,
      "bernoulli_",
      "expects p to be in [0, 1], but got p=",
      p);
  detail::check_no_internal_overlap(*this, "bernoulli_");
  if (!is_cpu()) {
    device_bernoulli(*this, p, gen);
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  dispatch_dtype(dtype(), "bernoulli_", [&]<typename T>() {
    if (g.philox_key() && is_contiguous()) {
      uint64_t first = g.reserve(uint64_t(numel()) * 2);
      philox_fill<T, 2>(
          data_ptr<T>(), numel(), *g.philox_key(), first, [&](uint64_t v) {
            return uniform01_from<double>(v) < p ? T(1) : T(0);
          });
      return;
    }
    for_each_in_memory_order<T>(
        *this, [&](T* q) { *q = uniform01<double>(g) < p ? T(1) : T(0); });
  });
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

Tensor& Tensor::bernoulli_(
    const Tensor& p_in,
    const std::optional<Generator>& gen) {
  detail::OpScope op("bernoulli_", {*this, p_in}, detail::OpScope::kInplace);
  check_defined("bernoulli_");
  DITTO_CHECK(p_in.defined(), ValueError, "bernoulli_", "undefined p");
  DITTO_CHECK(
      is_floating(p_in.dtype()),
      TypeError,
      "bernoulli_",
      "expects a floating probability tensor, got ",
      p_in.dtype());
  detail::check_no_internal_overlap(*this, "bernoulli_");
  Tensor p = p_in.expand(sizes());
  // Validate every probability before drawing or writing anything.
  DITTO_CHECK(
      p.numel() == 0 ||
          (::ditto::min(p).item<double>() >= 0.0 &&
           ::ditto::max(p).item<double>() <= 1.0),
      ValueError,
      "bernoulli_",
      "expects all probabilities in [0, 1]");
  Tensor pc = detail::shares_storage(p, *this) ? p.clone() : p;
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  dispatch_dtype(pc.dtype(), "bernoulli_", [&]<typename P>() {
    if constexpr (std::is_floating_point_v<P>) {
      const P* pp = static_cast<const P*>(pc.raw_data());
      dispatch_dtype(dtype(), "bernoulli_", [&]<typename T>() {
        // A float64 p compares with a 53-bit uniform, float32 with 24 bits.
        for_each_in_memory_order<T>(*this, pc.strides(), [&](T* q, int64_t o) {
          *q = uniform01<P>(g) < pp[o] ? T(1) : T(0);
        });
      });
    }
  });
  op.done_inplace(*this, [](const autograd::GradList&) {
    return autograd::GradList{Tensor(), Tensor()}; // draws: no gradient
  });
  return *this;
}

Tensor bernoulli(const Tensor& p, const std::optional<Generator>& gen) {
  detail::OpScope op("bernoulli", {p});
  DITTO_CHECK(p.defined(), ValueError, "bernoulli", "undefined p");
  Tensor t = detail::new_tensor(p.sizes(), p.dtype());
  t.bernoulli_(p, gen);
  // As PyTorch: draws pass no gradient to the probabilities.
  return op.done(t, [](const autograd::GradList&) {
    return autograd::GradList{Tensor()};
  });
}

Tensor bernoulli(
    const Tensor& self,
    double p,
    const std::optional<Generator>& gen) {
  detail::OpScope op("bernoulli", {self});
  DITTO_CHECK(self.defined(), ValueError, "bernoulli", "undefined tensor");
  Tensor t = detail::new_tensor(self.sizes(), self.dtype(), self.device());
  t.bernoulli_(p, gen);
  return op.done(t, [](const autograd::GradList&) {
    return autograd::GradList{Tensor()};
  });
}

Tensor& Tensor::exponential_(
    double lambd,
    const std::optional<Generator>& gen) {
  detail::OpScope op("exponential_", {*this}, detail::OpScope::kInplace);
  if (!is_cpu()) {
    device_fill(
        *this, gen, "exponential_", [&](Tensor& host, const Generator& g) {
          host.exponential_(lambd, g);
        });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  check_defined("exponential_");
  DITTO_CHECK(
      is_floating(dtype()),
      TypeError,
      "exponential_",
      "not implemented for ",
      dtype());
  DITTO_CHECK(
      lambd > 0.0,
      ValueError,
      "exponential_",
      "expects lambda > 0.0, but found lambda=",
      lambd);
  detail::check_no_internal_overlap(*this, "exponential_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  dispatch_dtype(dtype(), "exponential_", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      // PyTorch 1.13: (-1/lambda) * log(1 - u) with glibc's log; ditto's
      // log for a Philox generator (Note [Whose libm]).
      const bool own = g.philox_key() != nullptr;
      for_each_in_memory_order<T>(*this, [&](T* p) {
        double u = uniform01<double>(g);
        double l = own ? Math<true>::log(1.0 - u) : Math<false>::log(1.0 - u);
        *p = T((-1.0 / lambd) * l);
      });
    }
  });
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

} // namespace ditto
