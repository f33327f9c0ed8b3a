// Bit-reproducible erf for ditto's CPU kernels, in the style of math.h: a
// fixed sequence of IEEE-754 + - * /, comparisons and bit-mask selects (no
// libm, no FMA, no tables, no branches), so scalar, SSE, AVX2 and AVX-512
// code give the same bits and GCC vectorizes loops over it. Same build
// requirements as math.h (-ffp-contract=off, no -ffast-math, round to
// nearest, no FTZ/DAZ).
//
// Method, with a = |x| (both branches are computed, then one is selected):
//   a < 0.875   erf(a) = a + a q(a^2), q ~ erf(a)/a - 1 a polynomial
//               (float 6, double 12 coefficients) fitted for minimax
//               relative error. Adding a last keeps tiny and subnormal
//               inputs right (erf(a) ~ 1.128 a, never underflows to 0).
//   a >= 0.875  erf(a) = 1 - 2^(S(u) - 2), u = a - 0.875 (exact), S ~
//               log2(erfc(a)) + 2 a polynomial (float 7, double 19
//               coefficients) fitted for minimax absolute error of erfc on
//               [0.875, 3.92] (float) and [0.875, 5.93] (double). The +2
//               keeps |S| small near the split, where its rounding matters
//               most. 2^(S - 2) = 2^r 2^(k - 2), k = round(S), r = S - k
//               exactly, 2^r = 1 + r E(r) (float 6, double 11 coefficients,
//               minimax relative on [-1/2, 1/2]): no division, unlike
//               math::exp<double>. As erfc < 0.22 there, the relative errors
//               of S and 2^r enter the result scaled down by erfc. No a^2
//               is formed, so its rounding error (fdlibm splits a^2 for
//               this) never arises.
//   a >= 3.9192 (float) / 5.9216 (double): erfc(a) is below half an ulp of
//               1 and the result is exactly 1 (also for a = inf).
//   The sign of x is copied onto the result (erf(-x) = -erf(x) exactly,
//   erf(-0) = -0); a NaN comes back as that NaN.
// Coefficients: tools/erf_fit.py (Lawson's iteratively reweighted least
// squares on Chebyshev nodes in mpmath, then rounded one at a time from the
// constant term up, the rest refitted after each rounding). Since
// 2026-12-03; before, Note [erf]'s series and continued fraction in double
// took about 500 ns an element.
//
// Measured max error in ulp (float against the double erf of the float
// input, all 2^32 inputs; double against long double erfl, 30M log-uniform
// and targeted samples; tests/kernels/math_test.cpp checks samples of both):
//              float   double
//   erf        1.031   1.006
// Cost at 1M elements, one thread, -O3 -march=native (AVX-512): float 1.4-
// 1.6x math::exp<float>, double about 2.1x math::exp<double>.

#pragma once

#include "ditto/kernels/cpu/math.h"

namespace ditto::kernels::DITTO_KERNEL_NS {
namespace math {

namespace detail {

// a < kErfSplit: erf(a) = a + a q(a^2). kErfSplit <= a < kErfSat: erf(a) =
// 1 - 2^(S(a - kErfSplit) - 2). a >= kErfSat: erf(a) rounds to 1 (erfc(a) <
// 2^-25 resp. 2^-54; the smallest such float resp. double).
constexpr float kErfSplitF = 0.875f;
constexpr float kErfSatF = 0x1.f5a88ap+1f; // 3.9192059
constexpr double kErfSplitD = 0.875;
constexpr double kErfSatD = 0x1.7afb48dc96627p+2; // 5.9215872

// float: q(z), |erf err| <= 2^-26.1 relative
constexpr float kErfQ0F = 0x1.06eba6p-3f;
constexpr float kErfQ1F = -0x1.8127p-2f;
constexpr float kErfQ2F = 0x1.ce1fcap-4f;
constexpr float kErfQ3F = -0x1.b6e35p-6f;
constexpr float kErfQ4F = 0x1.497396p-8f;
constexpr float kErfQ5F = -0x1.43ecb6p-11f;
// float: S(u), |erfc err| <= 2^-28.7 absolute
constexpr float kErfS0F = -0x1.b0f18ep-3f;
constexpr float kErfS1F = -0x1.c0c6bap+1f;
constexpr float kErfS2F = -0x1.31456ep+0f;
constexpr float kErfS3F = -0x1.14c1e8p-4f;
constexpr float kErfS4F = 0x1.089546p-6f;
constexpr float kErfS5F = -0x1.808736p-9f;
constexpr float kErfS6F = 0x1.2efc0ep-12f;
// float: E(r), |2^r err| <= 2^-28.3 relative
constexpr float kErfE0F = 0x1.62e43p-1f;
constexpr float kErfE1F = 0x1.ebfbdcp-3f;
constexpr float kErfE2F = 0x1.c6af7ap-5f;
constexpr float kErfE3F = 0x1.3b2dd4p-7f;
constexpr float kErfE4F = 0x1.5f095ep-10f;
constexpr float kErfE5F = 0x1.4178f8p-13f;

// double: q(z), |erf err| <= 2^-56.3 relative
constexpr double kErfQ0D = 0x1.06eba8214db69p-3;
constexpr double kErfQ1D = -0x1.812746b0379fep-2;
constexpr double kErfQ2D = 0x1.ce2f21a0436e2p-4;
constexpr double kErfQ3D = -0x1.b82ce312ae023p-6;
constexpr double kErfQ4D = 0x1.565bcd128f2ebp-8;
constexpr double kErfQ5D = -0x1.c02db47f810fap-11;
constexpr double kErfQ6D = 0x1.f9a32db776dbdp-14;
constexpr double kErfQ7D = -0x1.f4d22ac939415p-17;
constexpr double kErfQ8D = 0x1.b9d8d7a71c73ep-20;
constexpr double kErfQ9D = -0x1.5e7caa0762fap-23;
constexpr double kErfQ10D = 0x1.eae04f307d3d9p-27;
constexpr double kErfQ11D = -0x1.f0b502e060b25p-31;
// double: S(u), |erfc err| <= 2^-57.5 absolute
constexpr double kErfS0D = -0x1.b0f18be23024fp-3;
constexpr double kErfS1D = -0x1.c0c6c4d07eafp+1;
constexpr double kErfS2D = -0x1.31443efd0c002p+0;
constexpr double kErfS3D = -0x1.151f328c81203p-4;
constexpr double kErfS4D = 0x1.0ba6ad9141124p-6;
constexpr double kErfS5D = -0x1.956c594a0577ap-9;
constexpr double kErfS6D = 0x1.2fbdf46d65646p-12;
constexpr double kErfS7D = 0x1.66c205e1aca06p-14;
constexpr double kErfS8D = -0x1.dc893b53c6bdep-15;
constexpr double kErfS9D = 0x1.267116cb1d02ep-16;
constexpr double kErfS10D = -0x1.8ae7d1d526163p-19;
constexpr double kErfS11D = -0x1.a982b9900bbdcp-23;
constexpr double kErfS12D = 0x1.702096f104843p-22;
constexpr double kErfS13D = -0x1.29748c64fa215p-23;
constexpr double kErfS14D = 0x1.336aa01fc414ap-25;
constexpr double kErfS15D = -0x1.bb09724d86069p-28;
constexpr double kErfS16D = 0x1.b1e0b3662addfp-31;
constexpr double kErfS17D = -0x1.0486ce8322fa9p-34;
constexpr double kErfS18D = 0x1.21a6139d6bf2cp-39;
// double: E(r), |2^r err| <= 2^-57.8 relative
constexpr double kErfE0D = 0x1.62e42fefa39efp-1;
constexpr double kErfE1D = 0x1.ebfbdff82c59cp-3;
constexpr double kErfE2D = 0x1.c6b08d704a0d3p-5;
constexpr double kErfE3D = 0x1.3b2ab6fba11ecp-7;
constexpr double kErfE4D = 0x1.5d87fe78b3f66p-10;
constexpr double kErfE5D = 0x1.4309130c04289p-13;
constexpr double kErfE6D = 0x1.ffcbfbf79b277p-17;
constexpr double kErfE7D = 0x1.62bfcdd4a640dp-20;
constexpr double kErfE8D = 0x1.b5260ffc06f5dp-24;
constexpr double kErfE9D = 0x1.e611b435263b2p-28;
constexpr double kErfE10D = 0x1.e80b90f5cad58p-32;

// float GELU: Phi(x) = 1/2 + x P(z)/Q(z), z = x^2, for |x| < kGeluSatF
// (tools/gelu_fit.py; relative error of (Phi - 1/2)/x at most 4.7e-8 with
// these float coefficients).
constexpr float kGeluSatF = 5.5426f;
constexpr float kGeluP0F = 0x1.988452p-2f;
constexpr float kGeluP1F = 0x1.207d82p-5f;
constexpr float kGeluP2F = 0x1.380734p-8f;
constexpr float kGeluP3F = 0x1.7df722p-13f;
constexpr float kGeluP4F = 0x1.ad1f40p-18f;
constexpr float kGeluP5F = 0x1.710a12p-26f;
constexpr float kGeluQ1F = 0x1.050ee6p-2f;
constexpr float kGeluQ2F = 0x1.e21df2p-6f;
constexpr float kGeluQ3F = 0x1.012984p-9f;
constexpr float kGeluQ4F = 0x1.456fe6p-14f;
constexpr float kGeluQ5F = 0x1.382554p-20f;

// 2^(s - 2) for s = S(u) in about [-23.2, 3] (float) or [-52, 3] (double),
// the range S takes for a < kErfSat: s = k + r exactly, k = round(s), |r| <=
// 1/2, 2^r = 1 + r E(r). The result is never subnormal, so 2^(k - 2) is one
// factor. Other s (a >= kErfSat or NaN) give garbage that erf does not select;
// the integer ops are unsigned so that no overflow is UB.
DITTO_MATH_INLINE float erfc_exp2(float s) {
  const float t = s + kRoundF;
  const float r = s - (t - kRoundF);
  const float y = 1.0f +
      r * horner(r, kErfE0F, kErfE1F, kErfE2F, kErfE3F, kErfE4F, kErfE5F);
  return y * f32_from_bits((to_bits(t) - to_bits(kRoundF) + 125u) << 23);
}

// S and E in double, each split into its even and odd part: two Horner
// chains of half the length, as one long chain (19 coefficients) made the
// loop latency-bound (1.6x slower with AVX-512). q is split differently
// (in erf), as its even and odd parts nearly cancel near the split (1.14
// instead of 0.96 ulp).
DITTO_MATH_INLINE double erf_s(double u) {
  const double u2 = u * u;
  const double even = horner(
      u2,
      kErfS0D,
      kErfS2D,
      kErfS4D,
      kErfS6D,
      kErfS8D,
      kErfS10D,
      kErfS12D,
      kErfS14D,
      kErfS16D,
      kErfS18D);
  const double odd = horner(
      u2,
      kErfS1D,
      kErfS3D,
      kErfS5D,
      kErfS7D,
      kErfS9D,
      kErfS11D,
      kErfS13D,
      kErfS15D,
      kErfS17D);
  return even + u * odd;
}

DITTO_MATH_INLINE double erf_e(double r) {
  const double r2 = r * r;
  const double even =
      horner(r2, kErfE0D, kErfE2D, kErfE4D, kErfE6D, kErfE8D, kErfE10D);
  const double odd = horner(r2, kErfE1D, kErfE3D, kErfE5D, kErfE7D, kErfE9D);
  return even + r * odd;
}

DITTO_MATH_INLINE double erfc_exp2(double s) {
  const double t = s + kRoundD;
  const double r = s - (t - kRoundD);
  const double y = 1.0 + r * erf_e(r);
  return y * f64_from_bits((to_bits(t) - to_bits(kRoundD) + 1021u) << 52);
}

} // namespace detail

// ---------------------------------------------------------------------------
// erf

DITTO_MATH_INLINE float erf(float x) {
  using namespace detail;
  const float a = abs(x);
  const float z = a * a;
  const float q =
      horner(z, kErfQ0F, kErfQ1F, kErfQ2F, kErfQ3F, kErfQ4F, kErfQ5F);
  const float r_small = a + a * q;
  // u is exact (a - 0.875 needs no bits below a's last one).
  const float u = a - kErfSplitF;
  const float s =
      horner(u, kErfS0F, kErfS1F, kErfS2F, kErfS3F, kErfS4F, kErfS5F, kErfS6F);
  const float r_large = 1.0f - erfc_exp2(s);
  // From kErfSatF on (also inf) the result is 1; beyond the fit's range P
  // may be garbage (even NaN), which the selects drop.
  float r = select(a >= kErfSatF, 1.0f, r_large);
  r = select(a < kErfSplitF, r_small, r);
  const float res = f32_from_bits(to_bits(r) | (to_bits(x) & kSignF));
  return select(x != x, x, res);
}

DITTO_MATH_INLINE double erf(double x) {
  using namespace detail;
  const double a = abs(x);
  const double z = a * a;
  // Low and high halves of q as two chains; the high half is below 2^-9
  // of q, so its rounding hardly matters (an even/odd split would cancel).
  const double z2 = z * z;
  const double z6 = z2 * z2 * z2;
  const double q_lo =
      horner(z, kErfQ0D, kErfQ1D, kErfQ2D, kErfQ3D, kErfQ4D, kErfQ5D);
  const double q_hi =
      horner(z, kErfQ6D, kErfQ7D, kErfQ8D, kErfQ9D, kErfQ10D, kErfQ11D);
  const double q = q_lo + z6 * q_hi;
  const double r_small = a + a * q;
  const double u = a - kErfSplitD;
  const double s = erf_s(u);
  const double r_large = 1.0 - erfc_exp2(s);
  double r = select(a >= kErfSatD, 1.0, r_large);
  r = select(a < kErfSplitD, r_small, r);
  const double res = f64_from_bits(to_bits(r) | (to_bits(x) & kSignD));
  return select(x != x, x, res);
}

// ---------------------------------------------------------------------------
// gelu (float): x Phi(x), the exact GELU (PyTorch's approximate='none'), in
// about half the operations of (x/2)(1 + erf(x/sqrt 2)) with the erf above:
// Note [Float GELU]. double GELU keeps that formula with the double erf.

DITTO_MATH_INLINE float gelu(float x) {
  using namespace detail;
  const float z = x * x;
  const float p =
      horner(z, kGeluP0F, kGeluP1F, kGeluP2F, kGeluP3F, kGeluP4F, kGeluP5F);
  const float q =
      horner(z, 1.0f, kGeluQ1F, kGeluQ2F, kGeluQ3F, kGeluQ4F, kGeluQ5F);
  float phi = 0.5f + x * (p / q);
  // Rounding can take 1/2 + x R below 0 where Phi is tiny (x near -5.5):
  // the result keeps x's sign, as x Phi(x) does.
  phi = select(phi < 0.0f, 0.0f, phi);
  // Beyond the fit's range Phi is 1 (resp. 0) in float; there P/Q may be
  // inf/inf, which the selects drop. A NaN x fails both and stays NaN.
  phi = select(x >= kGeluSatF, 1.0f, phi);
  phi = select(x <= -kGeluSatF, 0.0f, phi);
  return x * phi;
}

} // namespace math
} // namespace ditto::kernels::DITTO_KERNEL_NS
