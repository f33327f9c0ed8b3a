// Accuracy and special-value tests for ditto/kernels/cpu/math.h.
//
// Float functions are checked on a strided sweep over all 2^32 bit patterns
// plus dense sweeps around thresholds; the reference is libm's double result
// rounded to float. Double functions are checked on a few million samples
// (log-uniform over the whole range plus targeted ranges); the reference is
// libm's long double (64-bit mantissa) result rounded to double. Errors are
// integer ulp distances between our result and the rounded reference.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ditto/kernels/cpu/math.h"

namespace {

namespace dm = ::ditto::kernels::DITTO_KERNEL_NS::math;

// Out-of-line entry points. The math functions are always_inline; inlining
// them into every EXPECT would make this file very slow to compile.
namespace call {
#define DITTO_MATH_TEST_WRAP(name)        \
  template <class T>                      \
  __attribute__((noinline)) T name(T x) { \
    return dm::name(x);                   \
  }
DITTO_MATH_TEST_WRAP(exp)
DITTO_MATH_TEST_WRAP(log)
DITTO_MATH_TEST_WRAP(log1p)
DITTO_MATH_TEST_WRAP(expm1)
DITTO_MATH_TEST_WRAP(tanh)
DITTO_MATH_TEST_WRAP(sigmoid)
#undef DITTO_MATH_TEST_WRAP
template <class T>
__attribute__((noinline)) T pow(T x, T y) {
  return dm::pow(x, y);
}
} // namespace call

using FLim = std::numeric_limits<float>;
using DLim = std::numeric_limits<double>;

constexpr float kInfF = FLim::infinity();
constexpr double kInfD = DLim::infinity();
constexpr float kNanF = FLim::quiet_NaN();
constexpr double kNanD = DLim::quiet_NaN();

// Maps a float onto a signed integer line where adjacent floats differ by 1
// and -0 == +0.
int64_t ordered(float v) {
  int64_t b = std::bit_cast<uint32_t>(v);
  return (b & 0x80000000) ? -(b & 0x7fffffff) : b;
}
int64_t ordered(double v) {
  uint64_t b = std::bit_cast<uint64_t>(v);
  int64_t mag = static_cast<int64_t>(b & 0x7fffffffffffffffull);
  return (b >> 63) ? -mag : mag;
}

// Ulp distance; two NaNs are equal, NaN vs non-NaN is "infinitely" far.
template <class T>
uint64_t ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0 : ~uint64_t{0};
  }
  int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

template <class T>
struct MaxError {
  uint64_t ulp = 0;
  T x = 0, y = 0, got = 0, want = 0;
  uint64_t count = 0;

  void add(T got_v, T want_v, T x_v, T y_v = 0) {
    ++count;
    uint64_t d = ulp_distance(got_v, want_v);
    if (d > ulp) {
      ulp = d;
      x = x_v;
      y = y_v;
      got = got_v;
      want = want_v;
    }
  }
  std::string describe(const char* name) const {
    char buf[256];
    std::snprintf(
        buf, sizeof(buf), "%s: max %llu ulp over %llu values at x=%a y=%a: "
        "got %a want %a", name, static_cast<unsigned long long>(ulp),
        static_cast<unsigned long long>(count), static_cast<double>(x),
        static_cast<double>(y), static_cast<double>(got),
        static_cast<double>(want));
    return buf;
  }
};

float from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}

// Deterministic sample generators (the std distributions are not specified
// bit-exactly).
class Sampler {
 public:
  explicit Sampler(uint64_t seed) : gen_(seed) {}
  uint64_t next() {
    return gen_();
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1p-53);
  }
  // Log-uniform in [lo, hi] for 0 <= lo < hi: uniform over the bit patterns.
  double log_uniform(double lo, double hi) {
    uint64_t a = std::bit_cast<uint64_t>(lo);
    uint64_t b = std::bit_cast<uint64_t>(hi);
    return std::bit_cast<double>(a + next() % (b - a + 1));
  }
  double sign() {
    return (next() & 1) ? 1.0 : -1.0;
  }

 private:
  std::mt19937_64 gen_;
};

// ---------------------------------------------------------------------------
// Float: reference = libm double rounded to float.

using FloatFn = float (*)(float);
using FloatRef = double (*)(double);

// Checks f on every stride-th bit pattern of [begin, end] (both signs are
// just bit patterns here) and returns the max error.
void sweep_bits(
    MaxError<float>& err,
    FloatFn f,
    FloatRef ref,
    uint64_t begin,
    uint64_t end,
    uint64_t stride) {
  for (uint64_t b = begin; b <= end; b += stride) {
    float x = from_bits(static_cast<uint32_t>(b));
    err.add(f(x), static_cast<float>(ref(x)), x);
  }
}

// Dense sweep of `half` consecutive floats on either side of `center`.
void sweep_around(
    MaxError<float>& err,
    FloatFn f,
    FloatRef ref,
    float center,
    uint32_t half) {
  int64_t c = ordered(center);
  for (int64_t k = c - half; k <= c + half; ++k) {
    uint32_t b = k < 0 ? (0x80000000u | static_cast<uint32_t>(-k))
                       : static_cast<uint32_t>(k);
    float x = from_bits(b);
    err.add(f(x), static_cast<float>(ref(x)), x);
  }
}

// About 4.2M values per function over the full bit-pattern space.
constexpr uint64_t kFloatStride = 1021;
constexpr uint64_t kAllBits = 0xffffffffull;

double sigmoid_ref(double x) {
  long double lx = x;
  long double r = lx >= 0 ? 1.0L / (1.0L + std::exp(-lx))
                          : std::exp(lx) / (1.0L + std::exp(lx));
  return static_cast<double>(r);
}
double exp_ref(double x) {
  return std::exp(x);
}
double log_ref(double x) {
  return std::log(x);
}
double log1p_ref(double x) {
  return std::log1p(x);
}
double expm1_ref(double x) {
  return std::expm1(x);
}
double tanh_ref(double x) {
  return std::tanh(x);
}

TEST(MathFloatTest, ExpAccuracy) {
  MaxError<float> err;
  sweep_bits(err, call::exp<float>, exp_ref, 0, kAllBits, kFloatStride);
  sweep_around(err, call::exp<float>, exp_ref, 0.0f, 50000);
  sweep_around(err, call::exp<float>, exp_ref, 0x1.62e42ep+6f, 50000); // overflow
  sweep_around(err, call::exp<float>, exp_ref, -0x1.5d589ep+6f, 50000); // subnormal
  sweep_around(err, call::exp<float>, exp_ref, -0x1.9fe368p+6f, 50000); // -> 0
  sweep_around(err, call::exp<float>, exp_ref, 0x1.62e43p-2f, 20000); // k = 0 / 1
  EXPECT_LE(err.ulp, 1u) << err.describe("exp(float)");
}

TEST(MathFloatTest, LogAccuracy) {
  MaxError<float> err;
  sweep_bits(err, call::log<float>, log_ref, 0, kAllBits, kFloatStride);
  sweep_bits(err, call::log<float>, log_ref, 1, 0x7fffff, 97); // subnormals
  sweep_around(err, call::log<float>, log_ref, 1.0f, 200000);
  sweep_around(err, call::log<float>, log_ref, 0x1.6a09e6p+0f, 20000); // sqrt(2)
  sweep_around(err, call::log<float>, log_ref, FLim::max(), 1000);
  EXPECT_LE(err.ulp, 1u) << err.describe("log(float)");
}

TEST(MathFloatTest, Log1pAccuracy) {
  MaxError<float> err;
  sweep_bits(err, call::log1p<float>, log1p_ref, 0, kAllBits, kFloatStride);
  sweep_around(err, call::log1p<float>, log1p_ref, 0.0f, 100000);
  sweep_bits(err, call::log1p<float>, log1p_ref, 0xbf7e0000, 0xbf800000, 1); // ~ -1
  sweep_around(err, call::log1p<float>, log1p_ref, 0x1.a82798p-2f, 20000);
  sweep_around(err, call::log1p<float>, log1p_ref, -0x1.2bec32p-2f, 20000);
  sweep_around(err, call::log1p<float>, log1p_ref, 1.0f, 20000);
  EXPECT_LE(err.ulp, 1u) << err.describe("log1p(float)");
}

TEST(MathFloatTest, Expm1Accuracy) {
  MaxError<float> err;
  sweep_bits(err, call::expm1<float>, expm1_ref, 0, kAllBits, kFloatStride);
  sweep_around(err, call::expm1<float>, expm1_ref, 0.0f, 100000);
  for (float c : {0x1.62e43p-2f, 0x1.0a2b24p+0f, 0x1.62e43p+0f}) {
    sweep_around(err, call::expm1<float>, expm1_ref, c, 20000); // k changes
    sweep_around(err, call::expm1<float>, expm1_ref, -c, 20000);
  }
  sweep_around(err, call::expm1<float>, expm1_ref, 0x1.62e42ep+6f, 50000); // overflow
  sweep_around(err, call::expm1<float>, expm1_ref, -0x1.154246p+4f, 20000); // -> -1
  sweep_around(err, call::expm1<float>, expm1_ref, 0x1.1p+4f, 20000); // k ~ 23
  EXPECT_LE(err.ulp, 1u) << err.describe("expm1(float)");
}

TEST(MathFloatTest, TanhAccuracy) {
  MaxError<float> err;
  sweep_bits(err, call::tanh<float>, tanh_ref, 0, kAllBits, kFloatStride);
  for (float c : {0.0f, 0.625f, 1.0f, 9.0f, 10.0f}) {
    sweep_around(err, call::tanh<float>, tanh_ref, c, 50000);
    sweep_around(err, call::tanh<float>, tanh_ref, -c, 50000);
  }
  sweep_bits(err, call::tanh<float>, tanh_ref, 0x3e800000, 0x3f800000, 13); // [.25, 1]
  EXPECT_LE(err.ulp, 2u) << err.describe("tanh(float)");
}

TEST(MathFloatTest, SigmoidAccuracy) {
  MaxError<float> err;
  sweep_bits(err, call::sigmoid<float>, sigmoid_ref, 0, kAllBits, kFloatStride);
  sweep_around(err, call::sigmoid<float>, sigmoid_ref, 0.0f, 100000);
  sweep_around(err, call::sigmoid<float>, sigmoid_ref, -0x1.5d589ep+6f, 50000);
  sweep_around(err, call::sigmoid<float>, sigmoid_ref, -0x1.9fe368p+6f, 50000);
  sweep_around(err, call::sigmoid<float>, sigmoid_ref, 0x1.154246p+4f, 50000); // -> 1
  sweep_bits(err, call::sigmoid<float>, sigmoid_ref, 0xc0000000, 0xc1a00000, 13);
  EXPECT_LE(err.ulp, 2u) << err.describe("sigmoid(float)");
}

float pow_ref_f(float x, float y) {
  return static_cast<float>(
      std::pow(static_cast<double>(x), static_cast<double>(y)));
}

TEST(MathFloatTest, PowAccuracy) {
  MaxError<float> err;
  Sampler s(1);
  auto check = [&](float x, float y) {
    err.add(call::pow(x, y), pow_ref_f(x, y), x, y);
  };
  // Any positive x, y picked so the result is in range (incl. subnormal).
  for (int i = 0; i < 1500000; ++i) {
    float x = from_bits(static_cast<uint32_t>(s.next() % 0x7f800000u) + 1);
    double l = std::log(static_cast<double>(x));
    if (l == 0) {
      continue;
    }
    check(x, static_cast<float>(s.uniform(-104.0, 89.0) / l));
  }
  // Random bit patterns for both (mostly specials, 0, inf and NaN results).
  for (int i = 0; i < 300000; ++i) {
    uint64_t b = s.next();
    check(from_bits(static_cast<uint32_t>(b)),
          from_bits(static_cast<uint32_t>(b >> 32)));
  }
  // Negative base, integer exponent.
  for (int i = 0; i < 300000; ++i) {
    float x = -static_cast<float>(s.log_uniform(0x1p-8, 0x1p8));
    check(x, static_cast<float>(std::floor(s.uniform(-40.0, 40.0))));
  }
  // Base near 1 with a large exponent.
  for (int i = 0; i < 300000; ++i) {
    float x = 1.0f + static_cast<float>(s.sign() * s.log_uniform(0x1p-24, 0x1p-6));
    double l = std::log(static_cast<double>(x));
    check(x, static_cast<float>(s.uniform(-104.0, 89.0) / l));
  }
  EXPECT_LE(err.ulp, 1u) << err.describe("pow(float)");

  // Exactly representable integer powers come out exact.
  for (int base = 2; base <= 20; ++base) {
    double p = 1.0;
    for (int n = 0; p * base < 0x1p24; ++n) {
      EXPECT_EQ(call::pow(static_cast<float>(base), static_cast<float>(n)), p)
          << base << "^" << n;
      EXPECT_EQ(
          call::pow(-static_cast<float>(base), static_cast<float>(n)),
          (n & 1) ? -p : p)
          << -base << "^" << n;
      p *= base;
    }
  }
}

// ---------------------------------------------------------------------------
// Double: reference = libm long double rounded to double.

using DoubleFn = double (*)(double);
using LongRef = long double (*)(long double);

void check_samples(
    MaxError<double>& err,
    DoubleFn f,
    LongRef ref,
    const std::vector<double>& xs) {
  for (double x : xs) {
    err.add(f(x), static_cast<double>(ref(x)), x);
  }
}

long double exp_lref(long double x) {
  return std::exp(x);
}
long double log_lref(long double x) {
  return std::log(x);
}
long double log1p_lref(long double x) {
  return std::log1p(x);
}
long double expm1_lref(long double x) {
  return std::expm1(x);
}
long double tanh_lref(long double x) {
  return std::tanh(x);
}
long double sigmoid_lref(long double x) {
  return x >= 0 ? 1.0L / (1.0L + std::exp(-x))
                : std::exp(x) / (1.0L + std::exp(x));
}

// Consecutive doubles around c (n on each side).
void add_around(std::vector<double>& xs, double c, int n) {
  double lo = c, hi = c;
  xs.push_back(c);
  for (int i = 0; i < n; ++i) {
    lo = std::nextafter(lo, -kInfD);
    hi = std::nextafter(hi, kInfD);
    xs.push_back(lo);
    xs.push_back(hi);
  }
}

constexpr int kDoubleSamples = 400000;

TEST(MathDoubleTest, ExpAccuracy) {
  Sampler s(11);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.uniform(-746.0, 710.0));
    xs.push_back(s.sign() * s.log_uniform(0x1p-70, 746.0));
    xs.push_back(s.uniform(-745.2, -708.0)); // subnormal results
    xs.push_back(s.uniform(-1.1, 1.1));
  }
  add_around(xs, 0x1.62e42fefa39efp+9, 20000); // overflow
  add_around(xs, -0x1.6232bdd7abcd2p+9, 20000); // -> subnormal
  add_around(xs, -0x1.74910d52d3051p+9, 20000); // -> 0
  add_around(xs, 0.0, 20000);
  MaxError<double> err;
  check_samples(err, call::exp<double>, exp_lref, xs);
  EXPECT_LE(err.ulp, 1u) << err.describe("exp(double)");
}

TEST(MathDoubleTest, LogAccuracy) {
  Sampler s(12);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.log_uniform(DLim::denorm_min(), DLim::max()));
    xs.push_back(1.0 + s.sign() * s.log_uniform(0x1p-60, 0.5));
    xs.push_back(s.uniform(0.5, 2.0));
    xs.push_back(s.log_uniform(DLim::denorm_min(), DLim::min()));
  }
  add_around(xs, 1.0, 20000);
  add_around(xs, DLim::max(), 1000);
  MaxError<double> err;
  check_samples(err, call::log<double>, log_lref, xs);
  EXPECT_LE(err.ulp, 1u) << err.describe("log(double)");
}

TEST(MathDoubleTest, Log1pAccuracy) {
  Sampler s(13);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.sign() * s.log_uniform(DLim::denorm_min(), 1.0));
    xs.push_back(s.log_uniform(DLim::denorm_min(), DLim::max()));
    xs.push_back(-1.0 + s.log_uniform(0x1p-53, 0.75));
    xs.push_back(s.uniform(-0.5, 1.0));
  }
  add_around(xs, 0x1.a827999fcef32p-2, 5000);
  add_around(xs, -0x1.2bec333018866p-2, 5000);
  add_around(xs, 1.0, 5000);
  MaxError<double> err;
  check_samples(err, call::log1p<double>, log1p_lref, xs);
  EXPECT_LE(err.ulp, 1u) << err.describe("log1p(double)");
}

TEST(MathDoubleTest, Expm1Accuracy) {
  Sampler s(14);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.sign() * s.log_uniform(DLim::denorm_min(), 45.0));
    xs.push_back(s.uniform(-45.0, 710.0));
    xs.push_back(s.uniform(-2.5, 2.5));
  }
  add_around(xs, 0x1.62e42fefa39efp+9, 20000); // overflow
  for (double c : {0x1.62e42fefa39efp-2, 0x1.0a2b23f3bab73p+0}) {
    add_around(xs, c, 5000);
    add_around(xs, -c, 5000);
  }
  MaxError<double> err;
  check_samples(err, call::expm1<double>, expm1_lref, xs);
  EXPECT_LE(err.ulp, 1u) << err.describe("expm1(double)");
}

TEST(MathDoubleTest, TanhAccuracy) {
  Sampler s(15);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.sign() * s.log_uniform(DLim::denorm_min(), 25.0));
    xs.push_back(s.uniform(-3.0, 3.0));
  }
  for (double c : {0.625, 1.0, 19.0, 22.0}) {
    add_around(xs, c, 5000);
    add_around(xs, -c, 5000);
  }
  MaxError<double> err;
  check_samples(err, call::tanh<double>, tanh_lref, xs);
  EXPECT_LE(err.ulp, 2u) << err.describe("tanh(double)");
}

TEST(MathDoubleTest, SigmoidAccuracy) {
  Sampler s(16);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.uniform(-746.0, 40.0));
    xs.push_back(s.sign() * s.log_uniform(0x1p-70, 40.0));
  }
  add_around(xs, -0x1.74910d52d3051p+9, 5000);
  add_around(xs, 0.0, 5000);
  MaxError<double> err;
  check_samples(err, call::sigmoid<double>, sigmoid_lref, xs);
  EXPECT_LE(err.ulp, 2u) << err.describe("sigmoid(double)");
}

TEST(MathDoubleTest, PowAccuracy) {
  Sampler s(17);
  MaxError<double> err;
  auto check = [&](double x, double y) {
    long double want = std::pow(static_cast<long double>(x),
                                static_cast<long double>(y));
    err.add(call::pow(x, y), static_cast<double>(want), x, y);
  };
  for (int i = 0; i < kDoubleSamples; ++i) {
    // Any positive x, y picked so the result is in range.
    double x = s.log_uniform(DLim::denorm_min(), DLim::max());
    double l = std::log(x);
    if (l != 0) {
      check(x, s.uniform(-745.0, 709.7) / l);
    }
    // Base near 1 with a huge exponent (|y| up to ~2^62).
    x = 1.0 + s.sign() * s.log_uniform(0x1p-53, 0x1p-10);
    check(x, s.uniform(-745.0, 709.7) / std::log(x));
    // Moderate ranges, including negative bases with integer exponents.
    check(s.log_uniform(0x1p-10, 0x1p10), s.uniform(-30.0, 30.0));
    check(-s.log_uniform(0x1p-20, 0x1p20), std::floor(s.uniform(-60.0, 60.0)));
  }
  EXPECT_LE(err.ulp, 1u) << err.describe("pow(double)");

  for (int base = 2; base <= 30; ++base) {
    double p = 1.0;
    for (int n = 0; p * base < 0x1p53; ++n) {
      EXPECT_EQ(call::pow(static_cast<double>(base), static_cast<double>(n)), p)
          << base << "^" << n;
      EXPECT_EQ(call::pow(-static_cast<double>(base), static_cast<double>(n)),
                (n & 1) ? -p : p)
          << -base << "^" << n;
      p *= base;
    }
  }
}

// ---------------------------------------------------------------------------
// Special values, checked exactly (including the sign of zero).

template <class T>
bool same(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b);
  }
  return a == b && std::signbit(a) == std::signbit(b);
}

#define EXPECT_SAME(got, want)                                              \
  do {                                                                      \
    auto got_ = (got);                                                      \
    auto want_ = (want);                                                    \
    EXPECT_TRUE(same(got_, want_))                                          \
        << #got << " = " << std::hexfloat << got_ << ", want " << want_;   \
  } while (0)

template <class T>
void check_unary_specials() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity();
  const T nan = L::quiet_NaN();
  const T snan = L::signaling_NaN();
  const T tiny = L::denorm_min();
  const T big = L::max();

  for (T n : {nan, -nan, snan}) {
    EXPECT_TRUE(std::isnan(call::exp(n)));
    EXPECT_TRUE(std::isnan(call::log(n)));
    EXPECT_TRUE(std::isnan(call::log1p(n)));
    EXPECT_TRUE(std::isnan(call::expm1(n)));
    EXPECT_TRUE(std::isnan(call::tanh(n)));
    EXPECT_TRUE(std::isnan(call::sigmoid(n)));
  }

  EXPECT_SAME(call::exp(inf), inf);
  EXPECT_SAME(call::exp(-inf), T(0));
  EXPECT_SAME(call::exp(T(0)), T(1));
  EXPECT_SAME(call::exp(T(-0.0)), T(1));
  EXPECT_SAME(call::exp(big), inf);
  EXPECT_SAME(call::exp(-big), T(0));
  EXPECT_SAME(call::exp(tiny), T(1));
  EXPECT_SAME(call::exp(-tiny), T(1));

  EXPECT_SAME(call::log(T(0)), -inf);
  EXPECT_SAME(call::log(T(-0.0)), -inf);
  EXPECT_SAME(call::log(T(1)), T(0));
  EXPECT_SAME(call::log(inf), inf);
  EXPECT_TRUE(std::isnan(call::log(T(-1))));
  EXPECT_TRUE(std::isnan(call::log(-tiny)));
  EXPECT_TRUE(std::isnan(call::log(-inf)));

  EXPECT_SAME(call::log1p(T(0)), T(0));
  EXPECT_SAME(call::log1p(T(-0.0)), T(-0.0));
  EXPECT_SAME(call::log1p(T(-1)), -inf);
  EXPECT_SAME(call::log1p(inf), inf);
  EXPECT_SAME(call::log1p(tiny), tiny);
  EXPECT_SAME(call::log1p(-tiny), -tiny);
  EXPECT_TRUE(std::isnan(call::log1p(T(-1.5))));
  EXPECT_TRUE(std::isnan(call::log1p(-inf)));

  EXPECT_SAME(call::expm1(T(0)), T(0));
  EXPECT_SAME(call::expm1(T(-0.0)), T(-0.0));
  EXPECT_SAME(call::expm1(inf), inf);
  EXPECT_SAME(call::expm1(-inf), T(-1));
  EXPECT_SAME(call::expm1(big), inf);
  EXPECT_SAME(call::expm1(-big), T(-1));
  EXPECT_SAME(call::expm1(T(-100)), T(-1));
  EXPECT_SAME(call::expm1(tiny), tiny);
  EXPECT_SAME(call::expm1(-tiny), -tiny);

  EXPECT_SAME(call::tanh(T(0)), T(0));
  EXPECT_SAME(call::tanh(T(-0.0)), T(-0.0));
  EXPECT_SAME(call::tanh(inf), T(1));
  EXPECT_SAME(call::tanh(-inf), T(-1));
  EXPECT_SAME(call::tanh(big), T(1));
  EXPECT_SAME(call::tanh(-big), T(-1));
  EXPECT_SAME(call::tanh(T(30)), T(1));
  EXPECT_SAME(call::tanh(tiny), tiny);
  EXPECT_SAME(call::tanh(-tiny), -tiny);

  EXPECT_SAME(call::sigmoid(T(0)), T(0.5));
  EXPECT_SAME(call::sigmoid(T(-0.0)), T(0.5));
  EXPECT_SAME(call::sigmoid(inf), T(1));
  EXPECT_SAME(call::sigmoid(-inf), T(0));
  EXPECT_SAME(call::sigmoid(big), T(1));
  EXPECT_SAME(call::sigmoid(-big), T(0));
  EXPECT_SAME(call::sigmoid(T(40)), T(1));
}

TEST(MathFloatTest, UnarySpecialValues) {
  check_unary_specials<float>();
  // Smallest and largest results around the subnormal range.
  EXPECT_SAME(call::exp(-0x1.9fe368p+6f), 0x1p-149f); // ~ -103.972
  EXPECT_SAME(call::exp(-104.0f), 0.0f);
  EXPECT_SAME(call::exp(0x1.62e42ep+6f), 0x1.ffff08p+127f);
  EXPECT_SAME(call::exp(0x1.62e43p+6f), kInfF);
  EXPECT_SAME(call::sigmoid(-0x1.9fe368p+6f), 0x1p-149f);
  EXPECT_SAME(call::log(0x1p-149f), -0x1.9d1da0p+6f);
}

TEST(MathDoubleTest, UnarySpecialValues) {
  check_unary_specials<double>();
  EXPECT_SAME(call::exp(-0x1.74385446d71c3p+9), 0x1p-1074); // ~ -745.13
  EXPECT_SAME(call::exp(-746.0), 0.0);
  EXPECT_SAME(call::exp(0x1.62e42fefa39efp+9), 0x1.fffffffffff2ap+1023);
  EXPECT_SAME(call::exp(0x1.62e42fefa39f0p+9), kInfD);
  EXPECT_SAME(call::sigmoid(-0x1.74385446d71c3p+9), 0x1p-1074);
  EXPECT_SAME(call::log(0x1p-1074), -0x1.74385446d71c3p+9);
}

template <class T>
void check_pow_specials() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity();
  const T nan = L::quiet_NaN();
  const T zero = 0;
  const T nzero = T(-0.0);

  // pow(x, +-0) = 1 for any x, even NaN; pow(1, y) = 1 for any y.
  for (T x : {T(0), nzero, T(1), T(-1), T(2.5), T(-3), inf, -inf, nan}) {
    EXPECT_SAME(call::pow(x, zero), T(1));
    EXPECT_SAME(call::pow(x, nzero), T(1));
  }
  for (T y : {T(0), T(1), T(-7), T(0.5), inf, -inf, nan, L::max()}) {
    EXPECT_SAME(call::pow(T(1), y), T(1));
  }
  // Otherwise NaN in, NaN out.
  EXPECT_TRUE(std::isnan(call::pow(nan, T(1))));
  EXPECT_TRUE(std::isnan(call::pow(T(2), nan)));
  EXPECT_TRUE(std::isnan(call::pow(nan, nan)));
  EXPECT_TRUE(std::isnan(call::pow(T(-1), nan)));

  // Zero base.
  EXPECT_SAME(call::pow(zero, T(-3)), inf);
  EXPECT_SAME(call::pow(nzero, T(-3)), -inf);
  EXPECT_SAME(call::pow(zero, T(-2)), inf);
  EXPECT_SAME(call::pow(nzero, T(-2)), inf);
  EXPECT_SAME(call::pow(nzero, T(-0.5)), inf);
  EXPECT_SAME(call::pow(nzero, -inf), inf);
  EXPECT_SAME(call::pow(zero, T(3)), zero);
  EXPECT_SAME(call::pow(nzero, T(3)), nzero);
  EXPECT_SAME(call::pow(nzero, T(2)), zero);
  EXPECT_SAME(call::pow(nzero, T(0.5)), zero);
  EXPECT_SAME(call::pow(nzero, inf), zero);

  // Infinite exponent.
  EXPECT_SAME(call::pow(T(-1), inf), T(1));
  EXPECT_SAME(call::pow(T(-1), -inf), T(1));
  EXPECT_SAME(call::pow(T(0.5), inf), zero);
  EXPECT_SAME(call::pow(T(-0.5), inf), zero);
  EXPECT_SAME(call::pow(T(0.5), -inf), inf);
  EXPECT_SAME(call::pow(T(2), inf), inf);
  EXPECT_SAME(call::pow(T(-2), inf), inf);
  EXPECT_SAME(call::pow(T(2), -inf), zero);
  EXPECT_SAME(call::pow(inf, inf), inf);
  EXPECT_SAME(call::pow(-inf, -inf), zero);

  // Infinite base.
  EXPECT_SAME(call::pow(inf, T(-1)), zero);
  EXPECT_SAME(call::pow(inf, T(0.5)), inf);
  EXPECT_SAME(call::pow(-inf, T(-3)), nzero);
  EXPECT_SAME(call::pow(-inf, T(-2)), zero);
  EXPECT_SAME(call::pow(-inf, T(-0.5)), zero);
  EXPECT_SAME(call::pow(-inf, T(3)), -inf);
  EXPECT_SAME(call::pow(-inf, T(2)), inf);
  EXPECT_SAME(call::pow(-inf, T(0.5)), inf);

  // Negative finite base: integer exponents keep the sign rule, others NaN.
  EXPECT_SAME(call::pow(T(-2), T(3)), T(-8));
  EXPECT_SAME(call::pow(T(-2), T(-3)), T(-0.125));
  EXPECT_SAME(call::pow(T(-2), T(2)), T(4));
  EXPECT_TRUE(std::isnan(call::pow(T(-2), T(0.5))));
  EXPECT_TRUE(std::isnan(call::pow(T(-8), T(1) / T(3))));
  EXPECT_TRUE(std::isnan(call::pow(-L::denorm_min(), T(-2.5))));
  // Large even / odd integer exponents.
  const T two_m = static_cast<T>(uint64_t{1} << (L::digits - 1));
  EXPECT_SAME(call::pow(T(-1), two_m), T(1));       // even
  EXPECT_SAME(call::pow(T(-1), two_m + 1), T(-1));  // odd
  EXPECT_SAME(call::pow(T(-1), two_m * 4), T(1));   // beyond: even
  EXPECT_TRUE(std::isnan(call::pow(T(-1), two_m - T(0.5))));
  EXPECT_SAME(call::pow(T(-1), two_m - 1), T(-1));  // odd
  EXPECT_SAME(call::pow(T(-1), L::max()), T(1));
  EXPECT_SAME(call::pow(T(-1), -L::max()), T(1));

  // Overflow / underflow, with the sign of odd powers.
  const T odd_overflow = L::max_exponent10 + 1; // 39 or 309
  EXPECT_SAME(call::pow(T(10), odd_overflow), inf);
  EXPECT_SAME(call::pow(T(-10), odd_overflow), -inf);
  EXPECT_SAME(call::pow(T(-10), odd_overflow + 1), inf);
  EXPECT_SAME(call::pow(T(10), -odd_overflow - 40), zero);
  EXPECT_SAME(call::pow(T(-10), -odd_overflow - 40), nzero);
  EXPECT_SAME(call::pow(L::max(), T(2)), inf);
  EXPECT_SAME(call::pow(L::max(), T(-2)), zero);
  EXPECT_SAME(call::pow(L::denorm_min(), T(-1)), inf);
  EXPECT_SAME(call::pow(T(2), T(L::min_exponent - L::digits)),
              L::denorm_min());
}

TEST(MathFloatTest, PowSpecialValues) {
  check_pow_specials<float>();
}

TEST(MathDoubleTest, PowSpecialValues) {
  check_pow_specials<double>();
}

} // namespace
