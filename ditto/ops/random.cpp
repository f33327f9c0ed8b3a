#include "ditto/ops/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ditto/device/vulkan/kernels.h"
#include "ditto/kernels/cpu/math.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/random_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/generator_impl.h"

namespace ditto {
namespace {

using detail::resolve;
using detail::uniform01;

// Calls fn(pointer, other_offset) for every element of t in the order of
// its storage (increasing address), as PyTorch's serial distribution kernels
// fill: a transposed tensor is filled in memory order, not in its logical
// order. other_strides (same dims as t, may be empty) gives the offset of
// the matching element of a second tensor.
template <typename T, typename F>
void for_each_in_memory_order(
    const Tensor& t,
    const Shape& other_strides,
    F fn) {
  const bool other = !other_strides.empty();
  if (t.is_contiguous() &&
      (!other || other_strides == contiguous_strides(t.sizes()))) {
    T* p = static_cast<T*>(t.raw_data());
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i) {
      fn(p + i, other ? i : 0);
    }
    return;
  }
  const int64_t nd = t.dim();
  std::vector<int64_t> order(static_cast<size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return t.strides()[a] > t.strides()[b];
  });
  Shape sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd)),
      ostrides(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < nd; ++i) {
    sizes[i] = t.sizes()[order[i]];
    strides[i] = t.strides()[order[i]];
    if (other) {
      ostrides[i] = other_strides[order[i]];
    }
  }
  const int64_t n = t.numel();
  T* base = static_cast<T*>(t.raw_data());
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0, ooff = 0;
  for (int64_t k = 0; k < n; ++k) {
    fn(base + off, ooff);
    for (int64_t d = nd - 1; d >= 0; --d) {
      off += strides[d];
      ooff += ostrides[d];
      if (++idx[d] < sizes[d]) {
        break;
      }
      off -= strides[d] * sizes[d];
      ooff -= ostrides[d] * sizes[d];
      idx[d] = 0;
    }
  }
}

template <typename T, typename F>
void for_each_in_memory_order(const Tensor& t, F fn) {
  for_each_in_memory_order<T>(t, Shape{}, [&](T* p, int64_t) { fn(p); });
}

// Note [Whose libm]
// The mt19937 paths reproduce PyTorch, which calls glibc's log, sin and cos
// for float64 normals and for exponential_: x86-64 glibc picks an FMA or a
// non-FMA variant of them by CPU, so those bits vary by CPU exactly as
// PyTorch's do (docs/numerics.md lists them). Philox generators are
// ditto's own and promise the same bits on every CPU and architecture, so
// every draw through one uses ditto's branch-free functions (math.h)
// instead. Math<true> is ditto's, Math<false> glibc's.
template <bool kOwn>
struct Math {
  static double log(double x) {
    if constexpr (kOwn) {
      return kernels::scalar::math::log(x);
    } else {
      return std::log(x);
    }
  }
  // sin and cos of 2 pi u.
  static void sincos_2pi(double u, double& s, double& c) {
    if constexpr (kOwn) {
      kernels::scalar::math::sincos_2pi(u, s, c);
    } else {
      const double theta = 2.0 * 3.14159265358979323846 * u;
      s = std::sin(theta);
      c = std::cos(theta);
    }
  }
};

// PyTorch's scalar Box-Muller (normal_distribution<double>) with the cached
// second sample. Returns the sample scaled by std and shifted by mean with
// the fused multiply-add of PyTorch's AVX2 build.
template <bool kOwn>
double normal_scalar(GeneratorImpl& g, double mean, double std) {
  if (g.next_double_normal) {
    double c = *g.next_double_normal;
    g.next_double_normal.reset();
    return std::fma(c, std, mean);
  }
  double u1 = uniform01<double>(g);
  double u2 = uniform01<double>(g);
  double r = std::sqrt(-2.0 * Math<kOwn>::log(1.0 - u2));
  double sn = 0, cs = 0;
  Math<kOwn>::sincos_2pi(u1, sn, cs);
  g.next_double_normal = r * sn;
  return std::fma(r * cs, std, mean);
}

// One 16-block of PyTorch's float64 normal fill: the first 8 uniforms give
// the radius, the next 8 the angle.
template <bool kOwn>
void normal_block_double(double* d, double mean, double std) {
  for (int j = 0; j < 8; ++j) {
    double radius = std::sqrt(-2.0 * Math<kOwn>::log(1.0 - d[j]));
    double sn = 0, cs = 0;
    Math<kOwn>::sincos_2pi(d[j + 8], sn, cs);
    d[j] = std::fma(radius * cs, std, mean);
    d[j + 8] = std::fma(radius * sn, std, mean);
  }
}

// nblocks consecutive 16-blocks of PyTorch's normal fill. The float32
// transform (PyTorch's AVX2 fill emulated exactly, no libm) is a kernel
// compiled per CPU capability, so std::fma is an instruction where the CPU
// has one, with the same bits everywhere.
template <bool kOwn, typename T>
void normal_blocks(T* d, int64_t nblocks, double mean, double std) {
  if constexpr (std::is_same_v<T, float>) {
    kernels::kernel_table().normal_blocks_f32(
        d, nblocks, float(mean), float(std));
  } else {
    for (int64_t k = 0; k < nblocks; ++k) {
      normal_block_double<kOwn>(d + 16 * k, mean, std);
    }
  }
}
// Counter-based fills for Philox generators. Element i of a contiguous
// tensor takes words first + kWords * i (two words: the first is the high
// half), so chunks run on the thread pool and the bits do not depend on the
// thread count. fn(words) maps the element's words to its value.
constexpr int64_t kPhiloxGrain = 1 << 14; // a multiple of 4 and of 16

template <typename T, int kWords, typename F>
void philox_fill(
    T* out,
    int64_t n,
    random::PhiloxKey key,
    uint64_t first,
    F fn) {
  auto blocks = kernels::kernel_table().philox_blocks;
  parallel_for(0, n, kPhiloxGrain, [&](int64_t b, int64_t e) {
    // Words of this chunk: first + kWords * b is a multiple of 4, so the
    // chunk covers whole blocks.
    const uint64_t w0 = first + uint64_t(b) * kWords;
    const int64_t words = (e - b) * kWords;
    std::vector<uint32_t> buf(static_cast<size_t>((words + 3) & ~int64_t(3)));
    blocks(key[0], key[1], w0 >> 2, int64_t(buf.size() / 4), buf.data());
    for (int64_t i = b; i < e; ++i) {
      const uint32_t* w = buf.data() + (i - b) * kWords;
      if constexpr (kWords == 1) {
        out[i] = fn(uint64_t(w[0]));
      } else {
        out[i] = fn((uint64_t(w[0]) << 32) | w[1]);
      }
    }
  });
}

template <typename T>
T uniform01_from(uint64_t v) {
  constexpr int kDigits = std::numeric_limits<T>::digits;
  constexpr uint64_t kMask = (uint64_t(1) << kDigits) - 1;
  return T(v & kMask) * (T(1) / T(uint64_t(1) << kDigits));
}

// A tensor overwritten by random draws passes no gradient to its old
// values.
autograd::GradList draws_have_no_gradient(const autograd::GradList&) {
  return {Tensor()};
}

// Note [Random numbers on a device]
// A random op on a device tensor draws from the generator it is given, else
// from default_generator(device): a GeneratorGuard's, else the device's own
// Philox generator (seeded by manual_seed, as PyTorch seeds every device).
// bernoulli_(p) from a Philox generator (dropout's draw) runs on the
// device, element i from its own words as on the CPU, so the bits equal the
// CPU's fill of the same state. A CPU mt19937 generator (PyTorch would
// refuse it for a CUDA tensor) is a sequential stream: its values are drawn
// on the host in the CPU's order and copied over, which is how `ditto
// train --device vulkan` gives the CPU's dropout and so the CPU's
// fingerprint. The other fills (uniform_, normal_, random_, exponential_)
// are drawn on the host from the same generator, either kind, and copied:
// the CPU's bits, without a device kernel yet.

// Random fills on a device take contiguous tensors (the host's draw is in
// memory order).
void check_fillable(const Tensor& t, const char* op) {
  DITTO_CHECK(
      t.is_contiguous(),
      NotImplementedError,
      op,
      "random fills on ",
      t.device(),
      " take contiguous tensors only");
}

// A fill on a device drawn on the host from g (above).
template <typename F>
void device_fill(const Tensor& t, const Generator& g, const char* op, F fill) {
  check_fillable(t, op);
  Tensor host = detail::new_tensor(t.sizes(), t.dtype());
  fill(host, g);
  detail::copy_into(t, host, op);
}

template <typename F>
void device_fill(
    const Tensor& t,
    const std::optional<Generator>& gen,
    const char* op,
    F fill) {
  device_fill(t, gen ? *gen : default_generator(t.device()), op, fill);
}

void device_bernoulli(
    const Tensor& t,
    double p,
    const std::optional<Generator>& gen) {
  Generator g = gen ? *gen : default_generator(t.device());
  if (!g.is_philox()) {
    device_fill(t, g, "bernoulli_", [&](Tensor& host, const Generator& hg) {
      host.bernoulli_(p, hg);
    });
    return;
  }
  // Checked before the generator moves: nothing changes on an error.
  check_fillable(t, "bernoulli_");
  DITTO_CHECK(
      t.dtype() == kFloat32,
      NotImplementedError,
      "bernoulli_",
      "no kernel for ",
      t.dtype(),
      " on ",
      t.device(),
      " yet");
  uint64_t first = 0;
  random::PhiloxKey key{};
  {
    std::lock_guard<std::mutex> lock(g.impl()->mutex);
    first = g.impl()->reserve(uint64_t(t.numel()) * 2);
    key = *g.impl()->philox_key();
  }
  vulkan::philox_bernoulli(t, key[0], key[1], first, p, "bernoulli_");
}

template <typename T>
constexpr int kUniformWords = std::is_same_v<T, double> ? 2 : 1;

// The argument checks uniform_ and normal_ make before any draw, for every
// floating dtype.
void check_uniform_args(const Tensor& t, double from, double to) {
  DITTO_CHECK(t.defined(), ValueError, "uniform_", "the tensor is undefined");
  DITTO_CHECK(
      is_floating(t.dtype()),
      TypeError,
      "uniform_",
      "not implemented for ",
      t.dtype());
  DITTO_CHECK(
      !(from > to), // a NaN bound fails the bounds checks instead
      ValueError,
      "uniform_",
      "expects to return a [from, to) range, but found from=",
      from,
      " > to=",
      to);
}

void check_normal_args(const Tensor& t, double std) {
  DITTO_CHECK(t.defined(), ValueError, "normal_", "the tensor is undefined");
  DITTO_CHECK(
      is_floating(t.dtype()),
      TypeError,
      "normal_",
      "not implemented for ",
      t.dtype());
  DITTO_CHECK(
      std >= 0.0,
      ValueError,
      "normal_",
      "expects std >= 0.0, but found std ",
      std);
}

// Note [Storage dtypes] for draws: PyTorch 1.13 draws float16 and bfloat16
// with uniform_real_distribution<scalar_t>, which keeps the type's digits
// (11 and 8) of each 32-bit draw: (r & (2^digits - 1)) * 2^-digits, then
// x * (to - from) + from in float32 with to and from (and their difference)
// rounded to the type. Written here with the int draws of random_ (r mod
// 2^digits, the same bits) and float32 ops.
int storage_digits(Dtype d) {
  return d == kFloat16 ? 11 : 8;
}

// v rounded to d and back to float32.
float rounded_to(Dtype d, double v) {
  return full({}, v, kFloat32).to(d).to(kFloat32).item<float>();
}

// digits-bit uniform draws in [0, 1), one 32-bit draw each, as float32.
Tensor storage_uniforms(
    Dtype d,
    const Shape& shape,
    const std::optional<Generator>& gen) {
  const int digits = storage_digits(d);
  Tensor r = detail::new_tensor(shape, kFloat32);
  r.random_(0, int64_t(1) << digits, gen);
  return mul(r, std::ldexp(1.0, -digits));
}

Tensor& uniform_storage(
    Tensor& self,
    double from,
    double to,
    const std::optional<Generator>& gen) {
  check_uniform_args(self, from, to);
  const Dtype d = self.dtype();
  // As PyTorch: each bound in the dtype's range, and a finite width.
  const double hi = d == kFloat16 ? 65504.0 : 3.3895313892515355e38;
  DITTO_CHECK(
      from >= -hi && from <= hi,
      ValueError,
      "uniform_",
      "from is out of "
      "bounds for ",
      d);
  DITTO_CHECK(
      to >= -hi && to <= hi,
      ValueError,
      "uniform_",
      "to is out of bounds "
      "for ",
      d);
  DITTO_CHECK(
      to - from <= hi,
      ValueError,
      "uniform_",
      "expects to-from <= the largest ",
      d,
      ", but found to=",
      to,
      " and from=",
      from);
  const float f = rounded_to(d, from);
  const float range = rounded_to(d, double(rounded_to(d, to) - f));
  Tensor x = storage_uniforms(d, self.sizes(), gen);
  return self.copy_(add(mul(x, double(range)), double(f)));
}

// normal_fill<scalar_t> of PyTorch 1.13 for 16 or more contiguous
// elements: every element a uniform draw, each block of 16 turned into
// normals by Box-Muller in the type's own roundings (u1 = 1 - u, radius,
// theta and each result rounded to the type; mean and std too); a tail of
// n % 16 redraws the last 16 and transforms them again. Fewer elements, or
// a strided tensor, take float64 draws converted, as PyTorch's serial path.
Tensor& normal_storage(
    Tensor& self,
    double mean,
    double std,
    const std::optional<Generator>& gen) {
  check_normal_args(self, std);
  const Dtype d = self.dtype();
  const int64_t n = self.numel();
  if (n < 16 || !self.is_contiguous()) {
    Tensor w = detail::new_tensor(self.sizes(), kFloat64);
    w.normal_(mean, std, gen);
    return self.copy_(w);
  }
  const double mean_d = rounded_to(d, mean);
  const double std_d = rounded_to(d, std);
  auto round = [d](const Tensor& t) { return t.to(d).to(kFloat32); };
  // c10::BFloat16 has std::log, sqrt, cos, sin and its products of its
  // own, each rounded to bfloat16; c10::Half goes through float until the
  // result is stored.
  const bool each = d == kBFloat16;
  auto step = [&](const Tensor& t) { return each ? round(t) : t; };
  // Blocks [b, 16] of uniforms to normals.
  auto transform = [&](const Tensor& blocks) {
    Tensor u1 = round(add(neg(blocks.narrow(1, 0, 8)), 1.0));
    Tensor u2 = blocks.narrow(1, 8, 8);
    Tensor radius = round(sqrt(mul(step(log(u1)), -2.0)));
    Tensor theta =
        round(mul(u2.to(kFloat64), 2.0 * 3.14159265358979323846).to(kFloat32));
    auto normal = [&](const Tensor& trig) {
      return round(
          add(step(mul(step(mul(radius, step(trig))), std_d)), mean_d));
    };
    return cat({normal(cos(theta)), normal(sin(theta))}, 1);
  };
  Tensor data = storage_uniforms(d, {n}, gen);
  const int64_t full_blocks = n / 16;
  Tensor head = transform(data.narrow(0, 0, full_blocks * 16).view({-1, 16}));
  Tensor out = n % 16 == 0
      ? head.reshape({n})
      : cat({head.reshape({-1}), data.narrow(0, full_blocks * 16, n % 16)});
  if (n % 16 != 0) {
    Tensor tail = transform(storage_uniforms(d, {1, 16}, gen));
    out = cat({out.narrow(0, 0, n - 16), tail.reshape({16})});
  }
  return self.copy_(out.view(self.sizes()));
}

} // namespace

Tensor& Tensor::uniform_(
    double from,
    double to,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(*this) && is_floating(dtype())) {
    return uniform_storage(*this, from, to, gen);
  }
  detail::OpScope op("uniform_", {*this}, detail::OpScope::kInplace);
  if (!is_cpu()) {
    device_fill(*this, gen, "uniform_", [&](Tensor& host, const Generator& g) {
      host.uniform_(from, to, g);
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  check_uniform_args(*this, from, to);
  detail::check_no_internal_overlap(*this, "uniform_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  dispatch_dtype(dtype(), "uniform_", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      // As PyTorch: each bound must lie in T's range (not infinite, not
      // NaN), then the width must be finite in T.
      const double lo = double(std::numeric_limits<T>::lowest());
      const double hi = double(std::numeric_limits<T>::max());
      const char* type = std::is_same_v<T, float> ? "float" : "double";
      DITTO_CHECK(
          from >= lo && from <= hi,
          ValueError,
          "uniform_",
          "from is out of bounds for ",
          type);
      DITTO_CHECK(
          to >= lo && to <= hi,
          ValueError,
          "uniform_",
          "to is out of bounds for ",
          type);
      const T f = T(from);
      const T t = T(to);
      DITTO_CHECK(
          double(t) - double(f) <= hi,
          ValueError,
          "uniform_",
          "expects to-from <= std::numeric_limits<",
          dtype(),
          ">::max(), but found to=",
          to,
          " and from=",
          from);
      const T width = t - f;
      const bool unit = f == T(0) && width == T(1); // x * 1 + 0 is exact
      std::lock_guard<std::mutex> lock(g.mutex);
      if (g.philox_key() && is_contiguous()) {
        uint64_t first = g.reserve(uint64_t(numel()) * kUniformWords<T>);
        philox_fill<T, kUniformWords<T>>(
            data_ptr<T>(), numel(), *g.philox_key(), first, [&](uint64_t v) {
              T x = uniform01_from<T>(v);
              return unit ? x : std::fma(x, width, f);
            });
        return;
      }
      for_each_in_memory_order<T>(*this, [&](T* p) {
        T x = uniform01<T>(g);
        // PyTorch's AVX2/AVX-512 kernels (its default on x86-64) contract
        // x * width + from into one fused multiply-add.
        *p = unit ? x : std::fma(x, width, f);
      });
    }
  });
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

namespace {
// A new floating tensor filled by fill(t), reported as the op `name`.
template <typename Fill>
Tensor new_filled(
    const char* name,
    const Shape& shape,
    Dtype dtype,
    Fill fill) {
  detail::OpScope op(name);
  DITTO_CHECK(
      is_floating(dtype), TypeError, name, "not implemented for ", dtype);
  Tensor t = detail::new_tensor(shape, dtype);
  fill(t);
  return op.done(t);
}
} // namespace

Tensor rand(
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  return new_filled(
      "rand", shape, dtype, [&](Tensor& t) { t.uniform_(0.0, 1.0, gen); });
}

Tensor rand_like(const Tensor& t, const std::optional<Generator>& gen) {
  return rand(t.sizes(), t.dtype(), gen);
}

} // namespace ditto

namespace ditto {

Tensor& Tensor::normal_(
    double mean,
    double std,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(*this) && is_floating(dtype())) {
    return normal_storage(*this, mean, std, gen);
  }
  detail::OpScope op("normal_", {*this}, detail::OpScope::kInplace);
  if (!is_cpu()) {
    device_fill(*this, gen, "normal_", [&](Tensor& host, const Generator& g) {
      host.normal_(mean, std, g);
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  check_normal_args(*this, std);
  detail::check_no_internal_overlap(*this, "normal_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  const int64_t n = numel();
  if (g.philox_key() && n >= 16 && is_contiguous()) {
    // The same 16-block structure with counter-based uniforms: elements
    // and blocks are independent, so both steps run in parallel.
    dispatch_dtype(dtype(), "normal_", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        T* d = data_ptr<T>();
        constexpr int kW = kUniformWords<T>;
        const int64_t tail = n % 16 ? 16 : 0;
        uint64_t first = g.reserve(uint64_t(n + tail) * kW);
        auto u = [](uint64_t v) { return uniform01_from<T>(v); };
        philox_fill<T, kW>(d, n, *g.philox_key(), first, u);
        parallel_for(0, n / 16, kPhiloxGrain / 16, [&](int64_t b, int64_t e) {
          normal_blocks<true>(d + 16 * b, e - b, mean, std);
        });
        if (tail) {
          T fresh[16];
          philox_fill<T, kW>(
              fresh, 16, *g.philox_key(), first + uint64_t(n) * kW, u);
          std::copy(fresh, fresh + 16, d + n - 16);
          normal_blocks<true>(d + n - 16, 1, mean, std);
        }
      }
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  if (n >= 16 && is_contiguous()) {
    // PyTorch's vectorized fill: n uniforms, 16-blocks transformed in
    // place, then, if n % 16 != 0, 16 fresh uniforms for the last 16
    // elements and one more block. The scalar cache is not touched.
    dispatch_dtype(dtype(), "normal_", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        T* d = data_ptr<T>();
        for (int64_t i = 0; i < n; ++i) {
          d[i] = uniform01<T>(g);
        }
        normal_blocks<false>(d, n / 16, mean, std);
        if (n % 16 != 0) {
          T* tail = d + n - 16;
          for (int i = 0; i < 16; ++i) {
            tail[i] = uniform01<T>(g);
          }
          normal_blocks<false>(tail, 1, mean, std);
        }
      }
    });
  } else {
    dispatch_dtype(dtype(), "normal_", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const bool own = g.philox_key() != nullptr;
        for_each_in_memory_order<T>(*this, [&](T* p) {
          *p =
              T(own ? normal_scalar<true>(g, mean, std)
                    : normal_scalar<false>(g, mean, std));
        });
      }
    });
  }
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

Tensor randn(
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  return new_filled(
      "randn", shape, dtype, [&](Tensor& t) { t.normal_(0.0, 1.0, gen); });
}

Tensor randn_like(const Tensor& t, const std::optional<Generator>& gen) {
  return randn(t.sizes(), t.dtype(), gen);
}

Tensor& Tensor::random_(
    int64_t from,
    int64_t to,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(*this)) {
    // Note [Storage dtypes]: PyTorch's draws for int64, converted.
    Tensor w = detail::new_tensor(sizes(), kInt64, device());
    w.random_(from, to, gen);
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
  DITTO_CHECK(
      from < to,
      ValueError,
      "random_",
      "expects 'from' to be less than 'to', but got from=",
      from,
      " >= to=",
      to);
  detail::check_no_internal_overlap(*this, "random_");
  dispatch_dtype(dtype(), "random_", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      // Exactly representable bounds only (PyTorch nudges others).
      const double lim = double(uint64_t(1) << std::numeric_limits<T>::digits);
      DITTO_CHECK(
          double(from) >= -lim && double(to) <= lim,
          ValueError,
          "random_",
          "bounds [",
          from,
          ", ",
          to,
          ") are not exactly representable in ",
          dtype());
    } else {
      DITTO_CHECK(
          (!std::is_same_v<T, bool> || (from >= 0 && to <= 2)),
          ValueError,
          "random_",
          "bool needs bounds within [0, 2), got [",
          from,
          ", ",
          to,
          ")");
      DITTO_CHECK(
          (std::is_same_v<T, bool> ||
           (from >= int64_t(std::numeric_limits<T>::lowest()) &&
            to - 1 <= int64_t(std::numeric_limits<T>::max()))),
          ValueError,
          "random_",
          "bounds [",
          from,
          ", ",
          to,
          ") are out of the range of ",
          dtype());
    }
  });
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  const uint64_t range = uint64_t(to) - uint64_t(from);
  std::lock_guard<std::mutex> lock(g.mutex);
  dispatch_dtype(dtype(), "random_", [&]<typename T>() {
    // As PyTorch: 64-bit draws only for int64/float/double with a range of
    // 2^32 or more; plain modulo.
    constexpr bool kWide =
        std::is_same_v<T, int64_t> || std::is_floating_point_v<T>;
    const bool wide = kWide && range >= (uint64_t(1) << 32);
    for_each_in_memory_order<T>(*this, [&](T* p) {
      uint64_t v = wide ? g.random64() : g.random();
      *p = static_cast<T>(int64_t(v % range + uint64_t(from)));
    });
  });
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

Tensor randint(
    int64_t low,
    int64_t high,
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  detail::OpScope op("randint");
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

// The fills without a generator: core only names Generator, so these are
// overloads rather than defaults (see ditto/core/tensor.h).
Tensor& Tensor::uniform_(double from, double to) {
  return uniform_(from, to, std::nullopt);
}

Tensor& Tensor::normal_(double mean, double std) {
  return normal_(mean, std, std::nullopt);
}

Tensor& Tensor::random_(int64_t from, int64_t to) {
  return random_(from, to, std::nullopt);
}

Tensor& Tensor::bernoulli_(double p) {
  return bernoulli_(p, std::nullopt);
}

Tensor& Tensor::bernoulli_(const Tensor& p) {
  return bernoulli_(p, std::nullopt);
}

Tensor& Tensor::exponential_(double lambd) {
  return exponential_(lambd, std::nullopt);
}

} // namespace ditto
