// Accuracy and special-value tests for ditto/kernels/cpu/math.h.
//
// Float functions are checked on a strided sweep over all 2^32 bit patterns
// plus dense sweeps around thresholds; the reference is libm's double result
// rounded to float. Double functions are checked on a few million samples
// (log-uniform over the whole range plus targeted ranges); the reference is
// libm's long double (64-bit mantissa) result rounded to double. Errors are
// integer ulp distances between our result and the rounded reference.
// Under the sanitizers and emulators (test::test_thinned()) the strided
// sweeps take every 7th of their points and the random samples a 7th of
// their count; the neighbourhoods of thresholds stay whole.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ditto/ditto.h"
#include "ditto/kernels/cpu/erf.h"
#include "ditto/kernels/cpu/math.h"
#include "tests/cpu_caps.h"

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
DITTO_MATH_TEST_WRAP(erf)
#undef DITTO_MATH_TEST_WRAP
__attribute__((noinline)) float gelu(float x) {
  return dm::gelu(x);
}
template <class T>
__attribute__((noinline)) T pow(T x, T y) {
  return dm::pow(x, y);
}
__attribute__((noinline)) void sincos_2pi(double u, double& s, double& c) {
  dm::sincos_2pi(u, s, c);
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
        buf,
        sizeof(buf),
        "%s: max %llu ulp over %llu values at x=%a y=%a: "
        "got %a want %a",
        name,
        static_cast<unsigned long long>(ulp),
        static_cast<unsigned long long>(count),
        static_cast<double>(x),
        static_cast<double>(y),
        static_cast<double>(got),
        static_cast<double>(want));
    return buf;
  }
};

// Asserts the bound and logs the measured maximum for the record.
template <class T>
void expect_max_ulp(const MaxError<T>& err, uint64_t bound, const char* name) {
  std::printf("  %s\n", err.describe(name).c_str());
  EXPECT_LE(err.ulp, bound) << err.describe(name);
}

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

// The factor strides grow by and sample counts shrink by where the suite
// checks a sample of the points (odd: a stride keeps reaching odd and even
// mantissas).
const uint64_t kThin = ditto::test::test_thinned() ? 7 : 1;

using FloatFn = float (*)(float);
using FloatRef = double (*)(double);

// Accumulates the max error of f against ref over float inputs.
class FloatSweep {
 public:
  FloatSweep(FloatFn f, FloatRef ref) : f_(f), ref_(ref) {}

  // Every stride-th bit pattern in [begin, end] (sign bit included).
  // Where the suite is thinned, every (stride * kThin)-th.
  void bits(uint64_t begin, uint64_t end, uint64_t stride) {
    for (uint64_t b = begin; b <= end; b += stride * kThin) {
      check(from_bits(static_cast<uint32_t>(b)));
    }
  }
  // `half` consecutive floats on either side of `center`.
  void around(float center, uint32_t half) {
    int64_t c = ordered(center);
    for (int64_t k = c - half; k <= c + half; ++k) {
      check(from_bits(
          k < 0 ? (0x80000000u | static_cast<uint32_t>(-k))
                : static_cast<uint32_t>(k)));
    }
  }
  // Both signs of `center`.
  void around_pm(float center, uint32_t half) {
    around(center, half);
    around(-center, half);
  }
  const MaxError<float>& err() const {
    return err_;
  }

 private:
  void check(float x) {
    err_.add(f_(x), static_cast<float>(ref_(x)), x);
  }

  FloatFn f_;
  FloatRef ref_;
  MaxError<float> err_;
};

// About 4.2M values per function over the full bit-pattern space.
constexpr uint64_t kFloatStride = 1021;
constexpr uint64_t kAllBits = 0xffffffffull;

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
double sigmoid_ref(double x) {
  long double lx = x;
  long double r = lx >= 0 ? 1.0L / (1.0L + std::exp(-lx))
                          : std::exp(lx) / (1.0L + std::exp(lx));
  return static_cast<double>(r);
}

TEST(MathFloatTest, ExpAccuracy) {
  FloatSweep s(call::exp<float>, exp_ref);
  s.bits(0, kAllBits, kFloatStride);
  s.around(0.0f, 50000);
  s.around(0x1.62e42ep+6f, 50000); // overflow threshold
  s.around(-0x1.5d589ep+6f, 50000); // results turn subnormal
  s.around(-0x1.9fe368p+6f, 50000); // results turn 0
  s.around_pm(0x1.62e43p-2f, 20000); // k = 0 / +-1
  expect_max_ulp(s.err(), 1, "exp(float)");
}

TEST(MathFloatTest, LogAccuracy) {
  FloatSweep s(call::log<float>, log_ref);
  s.bits(0, kAllBits, kFloatStride);
  s.bits(1, 0x7fffff, 97); // subnormals
  s.around(1.0f, 200000);
  s.around(0x1.6a09e6p+0f, 20000); // sqrt(2), reduction boundary
  s.around(FLim::max(), 1000);
  expect_max_ulp(s.err(), 1, "log(float)");
}

TEST(MathFloatTest, Log1pAccuracy) {
  FloatSweep s(call::log1p<float>, log1p_ref);
  s.bits(0, kAllBits, kFloatStride);
  s.around(0.0f, 100000);
  s.bits(0xbf7e0000, 0xbf800000, 1); // x near -1
  s.around(0x1.a82798p-2f, 20000); // edges of the no-reduction range
  s.around(-0x1.2bec32p-2f, 20000);
  s.around(1.0f, 20000);
  expect_max_ulp(s.err(), 1, "log1p(float)");
}

TEST(MathFloatTest, Expm1Accuracy) {
  FloatSweep s(call::expm1<float>, expm1_ref);
  s.bits(0, kAllBits, kFloatStride);
  s.around(0.0f, 100000);
  for (float c : {0x1.62e43p-2f, 0x1.0a2b24p+0f, 0x1.62e43p+0f}) {
    s.around_pm(c, 20000); // k changes
  }
  s.around(0x1.1p+4f, 20000); // k = 23
  s.around(0x1.62e42ep+6f, 50000); // overflow threshold
  s.around(-0x1.154246p+4f, 20000); // results round to -1
  expect_max_ulp(s.err(), 1, "expm1(float)");
}

TEST(MathFloatTest, TanhAccuracy) {
  FloatSweep s(call::tanh<float>, tanh_ref);
  s.bits(0, kAllBits, kFloatStride);
  for (float c : {0.0f, 0.625f, 1.0f, 9.0f, 10.0f}) {
    s.around_pm(c, 50000);
  }
  s.bits(0x3e800000, 0x3f800000, 13); // [0.25, 1]
  expect_max_ulp(s.err(), 2, "tanh(float)");
}

TEST(MathFloatTest, SigmoidAccuracy) {
  FloatSweep s(call::sigmoid<float>, sigmoid_ref);
  s.bits(0, kAllBits, kFloatStride);
  s.around(0.0f, 100000);
  s.around(-0x1.5d589ep+6f, 50000); // results turn subnormal
  s.around(-0x1.9fe368p+6f, 50000); // results turn 0
  s.around(0x1.154246p+4f, 50000); // results round to 1
  s.bits(0xc0000000, 0xc1a00000, 13); // [-20, -2]
  expect_max_ulp(s.err(), 2, "sigmoid(float)");
}

double erf_ref(double x) {
  return std::erf(x);
}

// erf.h: at most 1.031 ulp over every float (measured exhaustively when it
// was written); here a strided sweep, both branches' edges (0.875), the
// saturation to 1 (3.9192), and the subnormals.
TEST(MathFloatTest, ErfAccuracy) {
  FloatSweep s(call::erf<float>, erf_ref);
  s.bits(0, kAllBits, kFloatStride);
  for (float c : {0.0f, 0.851359367f, 0.875f, 0x1.f5a88ap+1f, 1.0f}) {
    s.around_pm(c, 50000);
  }
  s.bits(0x3f000000, 0x3f800000, 7); // [0.5, 1]
  expect_max_ulp(s.err(), 1, "erf(float)");
  EXPECT_TRUE(std::signbit(call::erf(-0.0f)));
  EXPECT_EQ(call::erf(kInfF), 1.0f);
  EXPECT_EQ(call::erf(-kInfF), -1.0f);
  EXPECT_TRUE(std::isnan(call::erf(kNanF)));
  EXPECT_EQ(call::erf(FLim::denorm_min()), FLim::denorm_min());
}

// The float GELU x Phi(x) (Note [Float GELU]): exhaustively, at most 5.03
// ulp for x >= -1 and |error| <= 2.94e-7 |x| everywhere (the negative
// tail cancels, as PyTorch's 1 + erf does; there |error| <= 1.08e-6,
// PyTorch 1.13's 2.6e-7, near x = -5 where GELU is -1.4e-6); here a strided
// sweep of every float, a dense one over [-1, 0] and the edges of the fit
// (+-5.5426), against x Phi(x) in double (erfc below 0, so the reference does
// not cancel).
TEST(MathFloatTest, GeluAccuracy) {
  uint64_t worst_ulp = 0;
  double worst_rel = 0, worst_tail = 0;
  int64_t count = 0;
  auto check = [&](float x) {
    if (!std::isfinite(x)) {
      return;
    }
    ++count;
    const double xd = x;
    const double want = xd < 0 ? xd * 0.5 * std::erfc(-xd * M_SQRT1_2)
                               : xd * 0.5 * (1 + std::erf(xd * M_SQRT1_2));
    const float got = call::gelu(x);
    ASSERT_FALSE(x < 0 && got > 0) << "gelu(" << x << ") = " << got;
    const float want_f = static_cast<float>(want);
    if (x >= -1 && want_f != 0) {
      const uint64_t u = ulp_distance(got, want_f);
      worst_ulp = std::max(worst_ulp, u);
      ASSERT_LE(u, 6u) << "gelu(" << x << ") = " << got << ", want " << want;
    }
    if (std::abs(x) > 1e-30f) {
      const double rel = std::abs(got - want) / std::abs(xd);
      worst_rel = std::max(worst_rel, rel);
      ASSERT_LE(rel, 3e-7) << "gelu(" << x << ") = " << got << ", want "
                           << want;
    }
    if (x < -1) {
      worst_tail = std::max(worst_tail, std::abs(got - want));
      ASSERT_LE(std::abs(got - want), 1.1e-6) << "gelu(" << x << ")";
    }
  };
  for (uint64_t b = 0; b <= kAllBits; b += kFloatStride * kThin) {
    check(std::bit_cast<float>(static_cast<uint32_t>(b)));
  }
  const uint32_t step = uint32_t(61 * kThin);
  for (uint32_t b = 0xbf800000u; b > 0x80000000u; b -= step) { // [-1, 0)
    check(std::bit_cast<float>(b));
  }
  for (float c : {5.5426f, -5.5426f, 1.0f, -3.0f}) {
    float x = c;
    for (int i = 0; i < 20000; ++i) {
      x = std::nextafter(x, -FLim::infinity());
    }
    for (int i = 0; i < 40000; ++i) {
      check(x);
      x = std::nextafter(x, FLim::infinity());
    }
  }
  std::printf(
      "gelu(float): max %llu ulp for x >= -1, max |err|/|x| %.3g, max "
      "|err| %.3g for x < -1, over %lld values\n",
      static_cast<unsigned long long>(worst_ulp),
      worst_rel,
      worst_tail,
      static_cast<long long>(count));
  EXPECT_EQ(call::gelu(kInfF), kInfF);
  EXPECT_TRUE(std::isnan(call::gelu(-kInfF))); // -inf * 0, as PyTorch's
  EXPECT_TRUE(std::isnan(call::gelu(kNanF)));
  EXPECT_EQ(call::gelu(6.0f), 6.0f);
  EXPECT_EQ(call::gelu(1e30f), 1e30f);
  EXPECT_EQ(call::gelu(-6.0f), 0.0f);
  EXPECT_TRUE(std::signbit(call::gelu(-6.0f)));
  EXPECT_EQ(call::gelu(0.0f), 0.0f);
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
  for (int i = 0; i < int(1500000 / kThin); ++i) {
    float x = from_bits(static_cast<uint32_t>(s.next() % 0x7f800000u) + 1);
    double l = std::log(static_cast<double>(x));
    if (l == 0) {
      continue;
    }
    check(x, static_cast<float>(s.uniform(-104.0, 89.0) / l));
  }
  // Random bit patterns for both (mostly specials, 0, inf and NaN results).
  for (int i = 0; i < int(300000 / kThin); ++i) {
    uint64_t b = s.next();
    check(
        from_bits(static_cast<uint32_t>(b)),
        from_bits(static_cast<uint32_t>(b >> 32)));
  }
  // Negative base, integer exponent.
  for (int i = 0; i < int(300000 / kThin); ++i) {
    float x = -static_cast<float>(s.log_uniform(0x1p-8, 0x1p8));
    check(x, static_cast<float>(std::floor(s.uniform(-40.0, 40.0))));
  }
  // Base near 1 with a large exponent.
  for (int i = 0; i < int(300000 / kThin); ++i) {
    float x =
        1.0f + static_cast<float>(s.sign() * s.log_uniform(0x1p-24, 0x1p-6));
    double l = std::log(static_cast<double>(x));
    check(x, static_cast<float>(s.uniform(-104.0, 89.0) / l));
  }
  expect_max_ulp(err, 1, "pow(float)");

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

const int kDoubleSamples = int(400000 / kThin);

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
  expect_max_ulp(err, 1, "exp(double)");
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
  expect_max_ulp(err, 1, "log(double)");
}

// sin(2 pi u), cos(2 pi u). The reference reduces 4u = n + f exactly in
// double (as the function does) and evaluates sinl/cosl at f pi/2 in long
// double, so zeros of the result are not blurred by rounding 2 pi u.
TEST(MathDoubleTest, Sincos2PiAccuracy) {
  Sampler smp(21);
  std::vector<double> us;
  for (int i = 0; i < kDoubleSamples; ++i) {
    us.push_back(smp.uniform(0.0, 1.0)); // Box-Muller's domain
    us.push_back(smp.sign() * smp.log_uniform(0x1p-60, 0x1p40));
  }
  for (int k = -16; k <= 16; ++k) {
    add_around(us, k / 8.0, 200); // zeros, ones and the octants
  }
  MaxError<double> err_s, err_c;
  for (double u : us) {
    double s = 0, c = 0;
    call::sincos_2pi(u, s, c);
    const double t = 4.0 * u;
    const double n = std::nearbyint(t);
    const long double a = (long double)(t - n) * (M_PIl / 2);
    long double rs = sinl(a), rc = cosl(a);
    switch (int64_t(n) & 3) {
      case 1:
        std::swap(rs, rc), rc = -rc;
        break;
      case 2:
        rs = -rs, rc = -rc;
        break;
      case 3:
        std::swap(rs, rc), rs = -rs;
        break;
    }
    err_s.add(s, double(rs), u);
    err_c.add(c, double(rc), u);
  }
  expect_max_ulp(err_s, 1, "sin_2pi(double)");
  expect_max_ulp(err_c, 1, "cos_2pi(double)");
  double s = 0, c = 0;
  for (double bad : {kNanD, kInfD, -kInfD, 0x1p60}) {
    call::sincos_2pi(bad, s, c);
    EXPECT_TRUE(std::isnan(s) && std::isnan(c)) << bad;
  }
  call::sincos_2pi(0.25, s, c); // exactly 1 and 0
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(c, 0.0);
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
  expect_max_ulp(err, 1, "log1p(double)");
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
  expect_max_ulp(err, 1, "expm1(double)");
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
  expect_max_ulp(err, 2, "tanh(double)");
}

TEST(MathDoubleTest, ErfAccuracy) {
  Sampler s(18);
  std::vector<double> xs;
  for (int i = 0; i < kDoubleSamples; ++i) {
    xs.push_back(s.sign() * s.log_uniform(DLim::denorm_min(), 7.0));
    xs.push_back(s.uniform(-6.5, 6.5));
  }
  for (double c : {0.875, 0x1.7afb48dc96627p+2, 0.8749996}) {
    add_around(xs, c, 5000);
    add_around(xs, -c, 5000);
  }
  MaxError<double> err;
  check_samples(
      err, call::erf<double>, [](long double x) { return erfl(x); }, xs);
  expect_max_ulp(err, 2, "erf(double)");
  EXPECT_TRUE(std::signbit(call::erf(-0.0)));
  EXPECT_EQ(call::erf(kInfD), 1.0);
  EXPECT_TRUE(std::isnan(call::erf(kNanD)));
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
  expect_max_ulp(err, 2, "sigmoid(double)");
}

TEST(MathDoubleTest, PowAccuracy) {
  Sampler s(17);
  MaxError<double> err;
  auto check = [&](double x, double y) {
    long double want =
        std::pow(static_cast<long double>(x), static_cast<long double>(y));
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
  expect_max_ulp(err, 1, "pow(double)");

  for (int base = 2; base <= 30; ++base) {
    double p = 1.0;
    for (int n = 0; p * base < 0x1p53; ++n) {
      EXPECT_EQ(call::pow(static_cast<double>(base), static_cast<double>(n)), p)
          << base << "^" << n;
      EXPECT_EQ(
          call::pow(-static_cast<double>(base), static_cast<double>(n)),
          (n & 1) ? -p : p)
          << -base << "^" << n;
      p *= base;
    }
  }
}

// ---------------------------------------------------------------------------
// Special values, checked exactly (including the sign of zero). The cases
// are collected in tables so that there is a single EXPECT per table.

template <class T>
bool same(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b);
  }
  return a == b && std::signbit(a) == std::signbit(b);
}

template <class T>
struct Case {
  const char* expr;
  T got;
  T want;
};

template <class T>
void expect_cases(const std::vector<Case<T>>& cases) {
  for (const Case<T>& c : cases) {
    EXPECT_TRUE(same(c.got, c.want))
        << c.expr << " = " << std::hexfloat << c.got << ", want " << c.want;
  }
}

#define CASE(got, want) \
  Case<T> {             \
#got, got, want     \
  }

template <class T>
std::vector<Case<T>> unary_special_cases() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity();
  const T nan = L::quiet_NaN();
  const T snan = L::signaling_NaN();
  const T tiny = L::denorm_min();
  const T big = L::max();
  const T nzero = T(-0.0);

  std::vector<Case<T>> cases = {
      CASE(call::exp(inf), inf),         CASE(call::exp(-inf), T(0)),
      CASE(call::exp(T(0)), T(1)),       CASE(call::exp(nzero), T(1)),
      CASE(call::exp(big), inf),         CASE(call::exp(-big), T(0)),
      CASE(call::exp(tiny), T(1)),       CASE(call::exp(-tiny), T(1)),

      CASE(call::log(T(0)), -inf),       CASE(call::log(nzero), -inf),
      CASE(call::log(T(1)), T(0)),       CASE(call::log(inf), inf),
      CASE(call::log(T(-1)), nan),       CASE(call::log(-tiny), nan),
      CASE(call::log(-inf), nan),

      CASE(call::log1p(T(0)), T(0)),     CASE(call::log1p(nzero), nzero),
      CASE(call::log1p(T(-1)), -inf),    CASE(call::log1p(inf), inf),
      CASE(call::log1p(tiny), tiny),     CASE(call::log1p(-tiny), -tiny),
      CASE(call::log1p(T(-1.5)), nan),   CASE(call::log1p(-inf), nan),

      CASE(call::expm1(T(0)), T(0)),     CASE(call::expm1(nzero), nzero),
      CASE(call::expm1(inf), inf),       CASE(call::expm1(-inf), T(-1)),
      CASE(call::expm1(big), inf),       CASE(call::expm1(-big), T(-1)),
      CASE(call::expm1(T(-100)), T(-1)), CASE(call::expm1(tiny), tiny),
      CASE(call::expm1(-tiny), -tiny),

      CASE(call::tanh(T(0)), T(0)),      CASE(call::tanh(nzero), nzero),
      CASE(call::tanh(inf), T(1)),       CASE(call::tanh(-inf), T(-1)),
      CASE(call::tanh(big), T(1)),       CASE(call::tanh(-big), T(-1)),
      CASE(call::tanh(T(30)), T(1)),     CASE(call::tanh(tiny), tiny),
      CASE(call::tanh(-tiny), -tiny),

      CASE(call::sigmoid(T(0)), T(0.5)), CASE(call::sigmoid(nzero), T(0.5)),
      CASE(call::sigmoid(inf), T(1)),    CASE(call::sigmoid(-inf), T(0)),
      CASE(call::sigmoid(big), T(1)),    CASE(call::sigmoid(-big), T(0)),
      CASE(call::sigmoid(T(40)), T(1)),
  };
  for (T n : {nan, -nan, snan}) {
    cases.push_back(CASE(call::exp(n), nan));
    cases.push_back(CASE(call::log(n), nan));
    cases.push_back(CASE(call::log1p(n), nan));
    cases.push_back(CASE(call::expm1(n), nan));
    cases.push_back(CASE(call::tanh(n), nan));
    cases.push_back(CASE(call::sigmoid(n), nan));
  }
  return cases;
}

TEST(MathFloatTest, UnarySpecialValues) {
  using T = float;
  expect_cases(unary_special_cases<T>());
  // Results at the ends of the range (correctly rounded values).
  expect_cases<T>({
      CASE(call::exp(-0x1.9fe368p+6f), 0x1p-149f), // just above ln 2^-150
      CASE(call::exp(-0x1.9fe36ap+6f), 0.0f), // just below
      CASE(call::exp(0x1.62e42ep+6f), 0x1.ffff08p+127f), // below overflow
      CASE(call::exp(0x1.62e43p+6f), kInfF), // above
      CASE(call::sigmoid(-0x1.9fe368p+6f), 0x1p-149f),
      CASE(call::log(0x1p-149f), -0x1.9d1da0p+6f),
  });
}

TEST(MathDoubleTest, UnarySpecialValues) {
  using T = double;
  expect_cases(unary_special_cases<T>());
  expect_cases<T>({
      CASE(call::exp(-0x1.74910d52d3051p+9), 0x1p-1074), // above ln 2^-1075
      CASE(call::exp(-0x1.74910d52d3052p+9), 0.0), // below
      CASE(call::exp(0x1.62e42fefa39efp+9), 0x1.fffffffffff2ap+1023),
      CASE(call::exp(0x1.62e42fefa39f0p+9), kInfD),
      CASE(call::sigmoid(-0x1.74385446d71c3p+9), 0x1p-1074),
      CASE(call::log(0x1p-1074), -0x1.74385446d71c3p+9),
  });
}

template <class T>
std::vector<Case<T>> pow_special_cases() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity();
  const T nan = L::quiet_NaN();
  const T zero = 0;
  const T nzero = T(-0.0);
  // 2^(digits-1): from here on every value is an integer.
  const T two_m = static_cast<T>(uint64_t{1} << (L::digits - 1));
  const T odd_overflow = L::max_exponent10 + 1; // 39 or 309, both odd

  std::vector<Case<T>> cases = {
      // NaN in, NaN out (unless pow(x, 0) or pow(1, y)).
      CASE(call::pow(nan, T(1)), nan),
      CASE(call::pow(T(2), nan), nan),
      CASE(call::pow(nan, nan), nan),
      CASE(call::pow(T(-1), nan), nan),

      // Zero base.
      CASE(call::pow(zero, T(-3)), inf),
      CASE(call::pow(nzero, T(-3)), -inf),
      CASE(call::pow(zero, T(-2)), inf),
      CASE(call::pow(nzero, T(-2)), inf),
      CASE(call::pow(nzero, T(-0.5)), inf),
      CASE(call::pow(nzero, -inf), inf),
      CASE(call::pow(zero, T(3)), zero),
      CASE(call::pow(nzero, T(3)), nzero),
      CASE(call::pow(nzero, T(2)), zero),
      CASE(call::pow(nzero, T(0.5)), zero),
      CASE(call::pow(nzero, inf), zero),

      // Infinite exponent.
      CASE(call::pow(T(-1), inf), T(1)),
      CASE(call::pow(T(-1), -inf), T(1)),
      CASE(call::pow(T(0.5), inf), zero),
      CASE(call::pow(T(-0.5), inf), zero),
      CASE(call::pow(T(0.5), -inf), inf),
      CASE(call::pow(T(2), inf), inf),
      CASE(call::pow(T(-2), inf), inf),
      CASE(call::pow(T(2), -inf), zero),
      CASE(call::pow(inf, inf), inf),
      CASE(call::pow(-inf, -inf), zero),

      // Infinite base.
      CASE(call::pow(inf, T(-1)), zero),
      CASE(call::pow(inf, T(0.5)), inf),
      CASE(call::pow(-inf, T(-3)), nzero),
      CASE(call::pow(-inf, T(-2)), zero),
      CASE(call::pow(-inf, T(-0.5)), zero),
      CASE(call::pow(-inf, T(3)), -inf),
      CASE(call::pow(-inf, T(2)), inf),
      CASE(call::pow(-inf, T(0.5)), inf),

      // Negative finite base: integer exponents give the signed result,
      // others NaN.
      CASE(call::pow(T(-2), T(3)), T(-8)),
      CASE(call::pow(T(-2), T(-3)), T(-0.125)),
      CASE(call::pow(T(-2), T(2)), T(4)),
      CASE(call::pow(T(-2), T(0.5)), nan),
      CASE(call::pow(T(-8), T(1) / T(3)), nan),
      CASE(call::pow(-L::denorm_min(), T(-2.5)), nan),
      CASE(call::pow(T(-1), two_m), T(1)),
      CASE(call::pow(T(-1), two_m + 1), T(-1)),
      CASE(call::pow(T(-1), two_m - 1), T(-1)),
      CASE(call::pow(T(-1), two_m - T(0.5)), nan),
      CASE(call::pow(T(-1), two_m * 4), T(1)),
      CASE(call::pow(T(-1), L::max()), T(1)),
      CASE(call::pow(T(-1), -L::max()), T(1)),

      // Overflow and underflow, with the sign of odd powers.
      CASE(call::pow(T(10), odd_overflow), inf),
      CASE(call::pow(T(-10), odd_overflow), -inf),
      CASE(call::pow(T(-10), odd_overflow + 1), inf),
      CASE(call::pow(T(10), -odd_overflow - 40), zero),
      CASE(call::pow(T(-10), -odd_overflow - 40), nzero),
      CASE(call::pow(L::max(), T(2)), inf),
      CASE(call::pow(L::max(), T(-2)), zero),
      CASE(call::pow(L::denorm_min(), T(-1)), inf),
      CASE(call::pow(T(2), T(L::min_exponent - L::digits)), L::denorm_min()),
  };
  // pow(x, +-0) = 1 for any x, even NaN; pow(1, y) = 1 for any y.
  for (T x : {T(0), nzero, T(1), T(-1), T(2.5), T(-3), inf, -inf, nan}) {
    cases.push_back(CASE(call::pow(x, zero), T(1)));
    cases.push_back(CASE(call::pow(x, nzero), T(1)));
  }
  for (T y : {T(0), T(1), T(-7), T(0.5), inf, -inf, nan, L::max()}) {
    cases.push_back(CASE(call::pow(T(1), y), T(1)));
  }
  return cases;
}

TEST(MathFloatTest, PowSpecialValues) {
  expect_cases(pow_special_cases<float>());
}

TEST(MathDoubleTest, PowSpecialValues) {
  expect_cases(pow_special_cases<double>());
}

#undef CASE

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// Note [Staged loops] in cpu_kernels.cpp: the contiguous exp and sigmoid
// kernels run the stages of exp_parts over blocks; every element must still
// get the bits of the one-element functions here, on every capability,
// including NaN payloads, the partial last block and the strided path.
template <class T>
std::vector<T> staged_inputs(Bits<T> (*bits_at)(uint64_t), uint64_t n) {
  std::vector<T> xs;
  for (uint64_t i = 0; i < n; ++i) {
    xs.push_back(std::bit_cast<T>(bits_at(i)));
  }
  using L = std::numeric_limits<T>;
  for (T v :
       {T(0),           -T(0),           L::infinity(),   -L::infinity(),
        L::quiet_NaN(), -L::quiet_NaN(), L::denorm_min(), -L::denorm_min(),
        L::min(),       L::max(),        -L::max(),       T(88.72),
        T(89),          T(-104),         T(-103.9),       T(709.78),
        T(710),         T(-746),         T(-745.1),       T(1e-30),
        T(-1e-30)}) {
    xs.push_back(v);
  }
  return xs; // not a multiple of the 256-element block
}

template <class T>
void expect_staged_bits(
    const std::vector<T>& xs,
    const char* name,
    ditto::Tensor (*op)(const ditto::Tensor&),
    T (*one)(T)) {
  using ditto::Tensor;
  const int64_t n = int64_t(xs.size());
  Tensor x = ditto::empty({n}, ditto::dtype_of<T>);
  std::copy(xs.begin(), xs.end(), x.data_ptr<T>());
  // Every element twice side by side: column 0 is a stride-2 view.
  Tensor wide = ditto::stack({x, x}, 1);
  const ditto::CpuCapability before = ditto::get_cpu_capability();
  for (ditto::CpuCapability c : ditto::test::testable_capabilities()) {
    ditto::set_cpu_capability(c);
    Tensor staged = op(x);
    Tensor strided = op(wide.select(1, 0));
    const T* a = staged.data_ptr<T>();
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T want = one(xs[size_t(i)]);
      // (item() would go through double and quiet a signaling NaN.)
      const T b = strided.data_ptr<T>()[i * strided.stride(0)];
      if (std::bit_cast<Bits<T>>(a[i]) != std::bit_cast<Bits<T>>(want) ||
          std::bit_cast<Bits<T>>(b) != std::bit_cast<Bits<T>>(want)) {
        if (++wrong <= 5) {
          ADD_FAILURE() << name << " on " << ditto::cpu_capability_name(c)
                        << std::hex
                        << " at x = " << std::bit_cast<Bits<T>>(xs[size_t(i)])
                        << ": staged " << std::bit_cast<Bits<T>>(a[i])
                        << ", strided " << std::bit_cast<Bits<T>>(b)
                        << ", one element " << std::bit_cast<Bits<T>>(want);
        }
      }
    }
    EXPECT_EQ(wrong, 0) << name << " on " << ditto::cpu_capability_name(c);
  }
  ditto::set_cpu_capability(before);
}

TEST(StagedLoops, FloatExpAndSigmoidGiveTheOneElementBits) {
  // Every 4099th bit pattern: all exponents, both signs, NaN payloads.
  std::vector<float> xs = staged_inputs<float>(
      [](uint64_t i) { return uint32_t(i * 4099u); },
      (uint64_t(1) << 32) / 4099);
  expect_staged_bits<float>(xs, "exp", ditto::exp, call::exp<float>);
  expect_staged_bits<float>(
      xs, "sigmoid", ditto::sigmoid, call::sigmoid<float>);
}

TEST(StagedLoops, DoubleExpAndSigmoidGiveTheOneElementBits) {
  // Random bit patterns, then values spread over exp's whole range.
  std::vector<double> xs = staged_inputs<double>(
      [](uint64_t i) {
        uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
        return z ^ (z >> 29);
      },
      100000);
  for (int i = 0; i < 100000; ++i) {
    xs.push_back(-750.0 + 1460.0 * double(i) / 100000.0);
  }
  expect_staged_bits<double>(xs, "exp", ditto::exp, call::exp<double>);
  expect_staged_bits<double>(
      xs, "sigmoid", ditto::sigmoid, call::sigmoid<double>);
}

} // namespace
