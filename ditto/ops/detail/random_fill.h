#pragma once

// What random.cpp (uniform_, normal_, rand, randn) and random_discrete.cpp
// (random_, randint, randperm, bernoulli, exponential_) share: the fills
// in memory order, the Philox and mt19937 draws, the device fills and the
// argument checks. Internal.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ditto/kernels/cpu/math.h"
#include "ditto/kernels/device_kernels.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/random_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/generator_impl.h"

namespace ditto::random_fill {

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
inline autograd::GradList draws_have_no_gradient(const autograd::GradList&) {
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
inline void check_fillable(const Tensor& t, const char* op) {
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

inline void device_bernoulli(
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
  kernels::device_kernels(t, "bernoulli_")
      .philox_bernoulli(t, key[0], key[1], first, p, "bernoulli_");
}

template <typename T>
constexpr int kUniformWords = std::is_same_v<T, double> ? 2 : 1;

// The argument checks uniform_ and normal_ make before any draw, for every
// floating dtype.
inline void check_uniform_args(const Tensor& t, double from, double to) {
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

inline void check_normal_args(const Tensor& t, double std) {
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
inline int storage_digits(Dtype d) {
  return d == kFloat16 ? 11 : 8;
}

// v rounded to d and back to float32.
inline float rounded_to(Dtype d, double v) {
  return full({}, v, kFloat32).to(d).to(kFloat32).item<float>();
}

// digits-bit uniform draws in [0, 1), one 32-bit draw each, as float32.
inline Tensor storage_uniforms(
    Dtype d,
    const Shape& shape,
    const std::optional<Generator>& gen) {
  const int digits = storage_digits(d);
  Tensor r = detail::new_tensor(shape, kFloat32);
  r.random_(0, int64_t(1) << digits, gen);
  return mul(r, std::ldexp(1.0, -digits));
}

inline Tensor& uniform_storage(
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
inline Tensor& normal_storage(
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

// A new floating tensor on device filled by fill(t) (there: a device's
// draws are its own), reported as the op `name`.
template <typename Fill>
Tensor new_filled(
    const char* name,
    const Shape& shape,
    Dtype dtype,
    Device device,
    Fill fill) {
  detail::OpScope op(name);
  DITTO_CHECK(
      is_floating(dtype), TypeError, name, "not implemented for ", dtype);
  checked_numel(shape, name); // its errors name the op, not empty
  Tensor t = detail::new_tensor(shape, dtype, device);
  fill(t);
  return op.done(t);
}

} // namespace ditto::random_fill
