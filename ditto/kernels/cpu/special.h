// Bit-reproducible lgamma, digamma and trigamma for ditto's CPU kernels, in
// the style of math.h (whose build requirements hold here too): fixed
// sequences of IEEE-754 + - * / and sqrt, comparisons, bit-mask selects
// and math.h's / trig.h's own log and sin; no libm, no branches. The double
// functions are the reference; float evaluates them on the widened input
// and rounds once.
//
// Methods, for y = x >= 1/2 (x < 1/2 by reflection):
//   shift    w = y + n >= 16 with n <= 16 (the factors y, y + 1, ...
//            selected, so every element runs the same operations);
//   lgamma   Stirling's series at w: (w - 1/2) log w - w + log(2 pi)/2 +
//            sum B_2k / (2k (2k - 1) w^(2k - 1)), six terms, minus the
//            log of the product of the factors; x < 1/2: log(pi) -
//            log|sin(pi x)| - lgamma(1 - x);
//   digamma  log w - 1/(2w) - sum B_2k / (2k w^2k), six terms, minus the
//            sum of 1 / factor; x < 1/2: digamma(1 - x) - pi / tan(pi x);
//   trigamma 1/w + 1/(2w^2) + sum B_2k / w^(2k + 1), six terms, plus the
//            sum of 1 / factor^2; x < 1/2: pi^2 / sin^2(pi x) -
//            trigamma(1 - x).
// sin(pi x) and tan(pi x) reduce x by its nearest integer first (exact),
// so arguments near the poles and large ones keep their phase.
//
// Accuracy (double, 2M samples on [-30, 30] and e^[-20, 25], against long
// double libm and a long double reference): lgamma within 68 ulp where
// |lgamma| > 1 and within 1.5e-14 absolute elsewhere (near its zeros at 1
// and 2 the shift subtracts nearly equal logarithms); digamma within 15 ulp
// where |digamma| > 1. Float results (the double ones rounded) are within
// an ulp of the true value. glibc's lgamma is better near the zeros; these
// give the same bits on every machine.
//
// Special values as PyTorch: lgamma of 0, a negative integer, +-inf is
// +inf; digamma(+-0) is -+inf and of a negative integer NaN (torch's
// convention); trigamma of 0 and negative integers is +inf.

#pragma once

#include <cmath>

#include "ditto/kernels/cpu/math.h"
#include "ditto/kernels/cpu/trig.h"

namespace ditto::kernels::DITTO_KERNEL_NS {
namespace math {

namespace detail {

constexpr double kPiD = 0x1.921fb54442d18p+1;
constexpr double kHalfLog2PiD = 0x1.d67f1c864beb4p-1; // log(2 pi) / 2
constexpr double kLogPiD = 0x1.250d048e7a1bdp+0;

// w = y + n >= 16 and the product (lgamma), sum of reciprocals (digamma)
// or sum of squared reciprocals (trigamma) of y, y + 1, ..., y + n - 1.
struct GammaShift {
  double w, prod, inv, inv2;
};
DITTO_MATH_INLINE GammaShift gamma_shift(double y) {
  GammaShift s{y, 1.0, 0.0, 0.0};
  for (int k = 0; k < 16; ++k) {
    const bool c = s.w < 16.0;
    const double r = 1.0 / s.w;
    s.prod *= select(c, s.w, 1.0);
    s.inv += select(c, r, 0.0);
    s.inv2 += select(c, r * r, 0.0);
    s.w = select(c, s.w + 1.0, s.w);
  }
  return s;
}

// x minus its nearest integer, exactly (|r| <= 1/2): |sin(pi x)|,
// sin^2 and tan(pi x) have period 1 in x.
DITTO_MATH_INLINE double reduce_int(double x) {
  const double big = 0x1p52;
  const double ax = abs(x);
  const double n = select(ax < big, (ax + big) - big, ax);
  return x - f64_from_bits(to_bits(n) | (to_bits(x) & kSignD));
}

// x is an integer.
DITTO_MATH_INLINE bool on_integer(double x) {
  return reduce_int(x) == 0.0;
}

// |sin(pi x)|, exactly 0 at the integers.
DITTO_MATH_INLINE double abs_sin_pi(double x) {
  return abs(trig_medium<0>(kPiD * reduce_int(x)));
}

DITTO_MATH_INLINE double stirling_lgamma(double w) {
  const double r = 1.0 / w, r2 = r * r;
  const double series = r *
      horner(r2,
             1.0 / 12,
             -1.0 / 360,
             1.0 / 1260,
             -1.0 / 1680,
             1.0 / 1188,
             -691.0 / 360360);
  return ((w - 0.5) * log(w) - w) + (kHalfLog2PiD + series);
}

DITTO_MATH_INLINE double lgamma_right(double y) {
  const GammaShift s = gamma_shift(y);
  return stirling_lgamma(s.w) - log(s.prod);
}

DITTO_MATH_INLINE double digamma_right(double y) {
  const GammaShift s = gamma_shift(y);
  const double r = 1.0 / s.w, r2 = r * r;
  const double series = r2 *
      horner(r2,
             1.0 / 12,
             -1.0 / 120,
             1.0 / 252,
             -1.0 / 240,
             1.0 / 132,
             -691.0 / 32760);
  return ((log(s.w) - 0.5 * r) - series) - s.inv;
}

DITTO_MATH_INLINE double trigamma_right(double y) {
  const GammaShift s = gamma_shift(y);
  const double r = 1.0 / s.w, r2 = r * r;
  const double series =
      r * r2 *
      horner(
          r2, 1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730);
  return ((r + 0.5 * r2) + series) + s.inv2;
}

} // namespace detail

DITTO_MATH_INLINE double lgamma(double x) {
  using namespace detail;
  const bool left = x < 0.5;
  const double y = select(left, 1.0 - x, x);
  const double right = lgamma_right(y);
  const double reflected = (kLogPiD - log(abs_sin_pi(x))) - right;
  double r = select(left, reflected, right);
  r = select(abs(x) == kInfD, kInfD, r);
  return select(x != x, x, r);
}

DITTO_MATH_INLINE double digamma(double x) {
  using namespace detail;
  const bool left = x < 0.5;
  const double y = select(left, 1.0 - x, x);
  const double right = digamma_right(y);
  const double t = trig_medium<2>(kPiD * reduce_int(x));
  const double reflected = right - kPiD / t;
  double r = select(left, reflected, right);
  // torch: +-0 give -+inf, negative integers NaN, -inf NaN, +inf +inf.
  r = select(x < 0.0 && on_integer(x), kNanD, r);
  r = select(
      x == 0.0, f64_from_bits(to_bits(kInfD) ^ (~to_bits(x) & kSignD)), r);
  r = select(x == -kInfD, kNanD, select(x == kInfD, kInfD, r));
  return select(x != x, x, r);
}

DITTO_MATH_INLINE double trigamma(double x) {
  using namespace detail;
  const bool left = x < 0.5;
  const double y = select(left, 1.0 - x, x);
  const double right = trigamma_right(y);
  const double s = abs_sin_pi(x);
  const double reflected = (kPiD * kPiD) / (s * s) - right;
  double r = select(left, reflected, right);
  r = select(x == kInfD, 0.0, r);
  return select(x != x, x, r);
}

DITTO_MATH_INLINE float lgamma(float x) {
  return static_cast<float>(lgamma(static_cast<double>(x)));
}
DITTO_MATH_INLINE float digamma(float x) {
  return static_cast<float>(digamma(static_cast<double>(x)));
}
DITTO_MATH_INLINE float trigamma(float x) {
  return static_cast<float>(trigamma(static_cast<double>(x)));
}

} // namespace math
} // namespace ditto::kernels::DITTO_KERNEL_NS
