// Bit-reproducible transcendental functions for ditto's CPU kernels.
//
// Every function is a fixed sequence of IEEE-754 basic operations (+ - * /),
// comparisons, bit-mask selects, integer ops and bit casts: no libm calls, no
// FMA, no tables, no long double and no branches. So the result is the same
// bit pattern in scalar code and in SSE/AVX2/AVX-512 vector code, and GCC
// auto-vectorizes loops over these functions (all of them, float and double,
// with -O3 -mavx2 and with AVX-512). Requirements on the build: contraction
// off (-ffp-contract=off; with -mfma, GCC's default for -std=gnu++XX would
// fuse a*b+c and change the bits), no -ffast-math. At run time:
// round-to-nearest, no FTZ/DAZ.
//
// Methods. Reductions and polynomials follow Sun's fdlibm (as in FreeBSD
// msun), with fdlibm's branches replaced by computing every case and
// selecting:
//   exp      x = k ln2 + r, |r| <= ln2/2, ln2 split in two (k ln2_hi exact);
//            double: exp(r) = 1 + r + r c / (2 - c) with a Remez
//            polynomial c(r^2). float: 1 + (r + r^2 P(r)), P Taylor's
//            series to degree 5, as a vector division costs as much as the
//            rest, and the two additions rounded (Note [Float exp]).
//            2^k is applied as two exact powers of two, so subnormal results
//            are rounded once and overflow to inf happens by itself.
//   log      x = 2^k m, m in [sqrt(2)/2, sqrt(2)), s = (m-1)/(m+1),
//            log(m) = 2s + s R(s^2) (Remez); subnormal x prescaled.
//   log1p    log of u = 1 + x plus the rounding error of 1 + x as c/u; no
//            reduction (f = x exactly) for 1 + x in [sqrt(2)/2, sqrt(2)).
//   expm1    fdlibm's expm1: exp's reduction plus a correction for its
//            rounding error, then per-k reconstructions free of cancellation.
//   tanh     |x| < 0.625: x + x^3 P(x^2) (Chebyshev fit, 6/12 terms);
//            else 1 - 2/(t + 2), t = expm1(2|x|), with t + 2 kept exactly as
//            a sum of two floats; sign copied from x.
//   sigmoid  e = exp(-|x|), 1/(1 + e) for x >= 0 and e/(1 + e) for x < 0,
//            so the negative tail is accurate down to subnormals. double
//            keeps exp's rounding error (hi + lo, the exact error of exp's
//            last add) and 1 + e exactly and corrects the quotient; float
//            divides once (Note [Float sigmoid]).
//   sincos_2pi  sin(2 pi u) and cos(2 pi u) (Box-Muller's angle): 4u = n + f
//            exactly (n an integer, |f| <= 1/2), the angle f pi/2 formed as
//            hi + lo by Dekker's exact product (no FMA), FreeBSD msun's
//            branch-free __kernel_sin/__kernel_cos, quadrant n mod 4 by
//            swapping and sign flips. For |u| < 2^48.
//   pow      float: exp(y log|x|) in double with the double log/exp (error
//            < 2^-44 relative before the final rounding to float). double:
//            fdlibm's e_pow.c: log2|x| in extra precision from pieces whose
//            low 32 bits are zero (so products are exact without FMA),
//            y log2|x| as hi + lo, then 2^(hi + lo). Special cases as C99
//            Annex F: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN,
//            pow(-1, +-inf) = 1, signed zeros/infinities for odd integer y,
//            NaN for a negative finite base with a non-integer exponent.
// A NaN argument comes back as that NaN (pow: x's if x is NaN, else y's).
//
// Measured max error in ulp (against libm's double result for float and its
// long double result for double; float: all 2^32 inputs, pow float 25M
// samples; double: 10-12M log-uniform and targeted samples per function):
//              float   double
//   exp        1.023*  0.894
//   log        0.888   0.894
//   log1p      0.835   0.830
//   expm1      0.813   0.813
//   tanh       1.097   1.088
//   sigmoid    2.402*  1.293
//   pow        0.500   0.850
// Subnormal inputs and results are included in these figures. (*) float exp
// after the two-addition reconstruction (Note [Float exp]): all 2^32 inputs;
// sigmoid after the single division (Note [Float sigmoid]): every 3rd bit
// pattern.
//
// The exp, log, log1p, expm1 and double pow algorithms and coefficients are
// ported from fdlibm, whose notice asks to be preserved:
//   Copyright (C) 1993, 2004 by Sun Microsystems, Inc. All rights reserved.
//   Permission to use, copy, modify, and distribute this software is freely
//   granted, provided that this notice is preserved.
//
// The namespace below depends on DITTO_KERNEL_NS so that translation units
// compiled with different -m flags get distinct inline functions (no ODR
// clash between, e.g., the AVX2 and AVX-512 copies).

#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#ifndef DITTO_KERNEL_NS
#define DITTO_KERNEL_NS scalar
#endif

#ifdef __FAST_MATH__
#error "ditto/kernels/cpu/math.h needs strict IEEE semantics (no -ffast-math)"
#endif

// Force inlining: the vectorizer only handles loops whose body has no calls.
#if defined(__GNUC__) || defined(__clang__)
#define DITTO_MATH_INLINE inline __attribute__((always_inline))
#else
#define DITTO_MATH_INLINE inline
#endif

namespace ditto::kernels::DITTO_KERNEL_NS {
namespace math {

namespace detail {

DITTO_MATH_INLINE uint32_t to_bits(float x) {
  return std::bit_cast<uint32_t>(x);
}
DITTO_MATH_INLINE uint64_t to_bits(double x) {
  return std::bit_cast<uint64_t>(x);
}
DITTO_MATH_INLINE float f32_from_bits(uint32_t u) {
  return std::bit_cast<float>(u);
}
DITTO_MATH_INLINE double f64_from_bits(uint64_t u) {
  return std::bit_cast<double>(u);
}

constexpr uint32_t kSignF = 0x80000000u;
constexpr uint64_t kSignD = 0x8000000000000000ull;
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr double kNanD = std::numeric_limits<double>::quiet_NaN();

// Adding 1.5 * 2^p rounds to an integer held in the low mantissa bits.
constexpr float kRoundF = 0x1.8p23f;
constexpr double kRoundD = 0x1.8p52;

DITTO_MATH_INLINE float abs(float x) {
  return f32_from_bits(to_bits(x) & ~kSignF);
}
DITTO_MATH_INLINE double abs(double x) {
  return f64_from_bits(to_bits(x) & ~kSignD);
}

// Branch-free select through bit masks. A plain `c ? a : b` lets GCC sink
// the FP work of a and b into conditional blocks, and with the default
// -ftrapping-math it then refuses to if-convert (vectorize) the loop.
DITTO_MATH_INLINE float select(bool c, float a, float b) {
  uint32_t m = 0u - static_cast<uint32_t>(c);
  return f32_from_bits((to_bits(a) & m) | (to_bits(b) & ~m));
}
DITTO_MATH_INLINE double select(bool c, double a, double b) {
  uint64_t m = 0ull - static_cast<uint64_t>(c);
  return f64_from_bits((to_bits(a) & m) | (to_bits(b) & ~m));
}

// y * 2^k for y in about [0.5, 2] and k in [-250, 250]. Two factors keep
// each power of two normal; the first product is exact, so the result is
// rounded once even when it is subnormal or overflows.
DITTO_MATH_INLINE float scale2(float y, int32_t k) {
  int32_t k1 = k >> 1;
  int32_t k2 = k - k1;
  float s1 = f32_from_bits(static_cast<uint32_t>(k1 + 127) << 23);
  float s2 = f32_from_bits(static_cast<uint32_t>(k2 + 127) << 23);
  return (y * s1) * s2;
}

// Same for double with k in [-2040, 2040]. The halving goes through an
// offset unsigned value: AVX2 has no 64-bit arithmetic shift.
DITTO_MATH_INLINE double scale2(double y, int64_t k) {
  int64_t k1 = static_cast<int64_t>(static_cast<uint64_t>(k + 4096) >> 1);
  k1 -= 2048;
  int64_t k2 = k - k1;
  double s1 = f64_from_bits(static_cast<uint64_t>(k1 + 1023) << 52);
  double s2 = f64_from_bits(static_cast<uint64_t>(k2 + 1023) << 52);
  return (y * s1) * s2;
}

// Exact conversion of a small biased integer to double without a 64-bit
// int->double instruction (missing before AVX-512DQ).
DITTO_MATH_INLINE double small_u64_to_f64(uint64_t u) {
  return f64_from_bits(0x4330000000000000ull + u) - 0x1p52;
}

// Clears the low 32 bits: a head with at most 21 significant bits, so that
// products of two heads are exact.
DITTO_MATH_INLINE double trunc32(double x) {
  return f64_from_bits(to_bits(x) & 0xffffffff00000000ull);
}

// c0 + z * (c1 + z * (c2 + ...)), evaluated in exactly that order.
template <class T>
DITTO_MATH_INLINE T horner(T, T c) {
  return c;
}
template <class T, class... Cs>
DITTO_MATH_INLINE T horner(T z, T c0, Cs... cs) {
  return c0 + z * horner(z, static_cast<T>(cs)...);
}

// ---------------------------------------------------------------------------
// exp / expm1 coefficients (fdlibm).
constexpr double kLn2HiD = 0x1.62e42feep-1; // 32 significant bits
constexpr double kLn2LoD = 0x1.a39ef35793c76p-33;
constexpr double kInvLn2D = 0x1.71547652b82fep+0;
constexpr double kExpP1D = 0x1.555555555553ep-3;
constexpr double kExpP2D = -0x1.6c16c16bebd93p-9;
constexpr double kExpP3D = 0x1.1566aaf25de2cp-14;
constexpr double kExpP4D = -0x1.bbd41c5d26bf1p-20;
constexpr double kExpP5D = 0x1.6376972bea4d0p-25;

constexpr float kLn2HiF = 0x1.62e4p-1f; // 15 significant bits
constexpr float kLn2LoF = 0x1.7f7d1cp-20f;
constexpr float kInvLn2F = 0x1.715476p+0f;

constexpr double kExpm1Q1D = -0x1.11111111110f4p-5;
constexpr double kExpm1Q2D = 0x1.a01a019fe5585p-10;
constexpr double kExpm1Q3D = -0x1.4ce199eaadbb7p-14;
constexpr double kExpm1Q4D = 0x1.0cfca86e65239p-18;
constexpr double kExpm1Q5D = -0x1.afdb76e09c32dp-23;

constexpr float kExpm1Q1F = -0x1.1110dp-5f;
constexpr float kExpm1Q2F = 0x1.9e602p-10f;

// log / log1p coefficients (fdlibm); double uses kLn2HiD / kLn2LoD.
constexpr double kLg1D = 0x1.5555555555593p-1;
constexpr double kLg2D = 0x1.999999997fa04p-2;
constexpr double kLg3D = 0x1.2492494229359p-2;
constexpr double kLg4D = 0x1.c71c51d8e78afp-3;
constexpr double kLg5D = 0x1.7466496cb03dep-3;
constexpr double kLg6D = 0x1.39a09d078c69fp-3;
constexpr double kLg7D = 0x1.2f112df3e5244p-3;

constexpr float kLogLn2HiF = 0x1.62e3p-1f; // 16 significant bits
constexpr float kLogLn2LoF = 0x1.2fefa2p-17f;
constexpr float kLg1F = 0x1.555554p-1f;
constexpr float kLg2F = 0x1.999c26p-2f;
constexpr float kLg3F = 0x1.23d3dcp-2f;
constexpr float kLg4F = 0x1.f13c4cp-3f;

// tanh(x) = x + x z P(z), z = x^2, |x| < 0.625 (Chebyshev fit of P).
constexpr float kTanhC0F = -0x1.555556p-2f;
constexpr float kTanhC1F = 0x1.1110eap-3f;
constexpr float kTanhC2F = -0x1.ba08c4p-5f;
constexpr float kTanhC3F = 0x1.64a976p-6f;
constexpr float kTanhC4F = -0x1.116a16p-7f;
constexpr float kTanhC5F = 0x1.2c83cp-9f;

constexpr double kTanhC0D = -0x1.5555555555555p-2;
constexpr double kTanhC1D = 0x1.11111111110a8p-3;
constexpr double kTanhC2D = -0x1.ba1ba1ba0f126p-5;
constexpr double kTanhC3D = 0x1.664f487e0a749p-6;
constexpr double kTanhC4D = -0x1.226e3473dce5cp-7;
constexpr double kTanhC5D = 0x1.d6d39ae3905e2p-9;
constexpr double kTanhC6D = -0x1.7d9f6f23e8682p-10;
constexpr double kTanhC7D = 0x1.3526e9ed54da1p-11;
constexpr double kTanhC8D = -0x1.f243823c8c981p-13;
constexpr double kTanhC9D = 0x1.8445870f6fe41p-14;
constexpr double kTanhC10D = -0x1.05bbdae896297p-15;
constexpr double kTanhC11D = 0x1.b33642a122cddp-18;

// Reduced argument r and integer k with x = k ln2 + r, for |x| < 2000.
// r = hi - lo where k * ln2_hi is exact.
struct ReducedD {
  double hi, lo, r, kd;
  int64_t k;
};
DITTO_MATH_INLINE ReducedD reduce_ln2(double x) {
  ReducedD out;
  double t = x * kInvLn2D + kRoundD;
  out.kd = t - kRoundD;
  out.k = static_cast<int64_t>(to_bits(t) - to_bits(kRoundD));
  out.hi = x - out.kd * kLn2HiD;
  out.lo = out.kd * kLn2LoD;
  out.r = out.hi - out.lo;
  return out;
}

struct ReducedF {
  float hi, lo, r, kf;
  int32_t k;
};
DITTO_MATH_INLINE ReducedF reduce_ln2(float x, float ln2_hi, float ln2_lo) {
  ReducedF out;
  float t = x * kInvLn2F + kRoundF;
  out.kf = t - kRoundF;
  out.k = static_cast<int32_t>(to_bits(t) - to_bits(kRoundF));
  out.hi = x - out.kf * ln2_hi;
  out.lo = out.kf * ln2_lo;
  out.r = out.hi - out.lo;
  return out;
}

// log(1 + f) polynomial part: R(s) with s = f / (2 + f).
DITTO_MATH_INLINE double log_poly(double s) {
  double z = s * s;
  double w = z * z;
  double t1 = w * horner(w, kLg2D, kLg4D, kLg6D);
  double t2 = z * horner(w, kLg1D, kLg3D, kLg5D, kLg7D);
  return t2 + t1;
}
DITTO_MATH_INLINE float log_poly(float s) {
  float z = s * s;
  float w = z * z;
  float t1 = w * horner(w, kLg2F, kLg4F);
  float t2 = z * horner(w, kLg1F, kLg3F);
  return t2 + t1;
}

// pow (double) constants (fdlibm e_pow.c).
constexpr double kPowDpH = 0x1.2b80340000000p-1; // log2(1.5) head
constexpr double kPowDpL = 0x1.cfdeb43cfd006p-27; // log2(1.5) tail
constexpr double kPowL1 = 0x1.3333333333303p-1;
constexpr double kPowL2 = 0x1.b6db6db6fabffp-2;
constexpr double kPowL3 = 0x1.55555518f264dp-2;
constexpr double kPowL4 = 0x1.17460a91d4101p-2;
constexpr double kPowL5 = 0x1.d864a93c9db65p-3;
constexpr double kPowL6 = 0x1.a7e284a454eefp-3;
constexpr double kPowLg2 = 0x1.62e42fefa39efp-1;
constexpr double kPowLg2H = 0x1.62e43p-1;
constexpr double kPowLg2L = -0x1.05c610ca86c39p-29;
constexpr double kPowCp = 0x1.ec709dc3a03fdp-1; // 2 / (3 ln2)
constexpr double kPowCpH = 0x1.ec709ep-1;
constexpr double kPowCpL = -0x1.e2fe0145b01f5p-28;

// |x|^y for finite nonzero |x| = ax and finite y (other inputs give
// garbage that pow() overrides). fdlibm's algorithm without its branches.
DITTO_MATH_INLINE double pow_core(double ax, double y) {
  // log2(ax) = n + log2(m), m in [sqrt(3)/2, sqrt(3)), pivot bp = 1 or 1.5.
  bool sub = ax < 0x1p-1022;
  double ax_scaled = ax * 0x1p53;
  double a = select(sub, ax_scaled, ax);
  uint64_t ia = to_bits(a);
  uint64_t hx = ia >> 32;
  uint64_t j = hx & 0xfffff;
  bool pivot15 = (j > 0x3988e) & (j < 0xbb67a);
  bool halve = j >= 0xbb67a;
  uint64_t hm = (j | 0x3ff00000) - (halve ? 0x100000 : 0);
  double m = f64_from_bits((hm << 32) | (ia & 0xffffffffull));
  double bias = select(sub, 1076.0, 1023.0);
  double nd = small_u64_to_f64((hx >> 20) + (halve ? 1 : 0)) - bias;
  double bp = select(pivot15, 1.5, 1.0);
  double dp_h = select(pivot15, kPowDpH, 0.0);
  double dp_l = select(pivot15, kPowDpL, 0.0);

  // ss = s_h + s_l = (m - bp) / (m + bp) in extra precision.
  double u = m - bp;
  double v = 1.0 / (m + bp);
  double ss = u * v;
  double s_h = trunc32(ss);
  uint64_t th_bits =
      ((hm >> 1) | 0x20000000) + 0x00080000 + (pivot15 ? (1u << 18) : 0);
  double t_h = f64_from_bits(th_bits << 32); // head of m + bp
  double t_l = m - (t_h - bp);
  double s_l = v * ((u - s_h * t_h) - s_h * t_l);

  // log2(m) = 2/(3 ln2) * (3 s + s^3 + ...), kept as hi + lo.
  double s2 = ss * ss;
  double r =
      s2 * s2 * horner(s2, kPowL1, kPowL2, kPowL3, kPowL4, kPowL5, kPowL6);
  r += s_l * (s_h + ss);
  s2 = s_h * s_h;
  double t_h2 = trunc32(3.0 + s2 + r);
  double t_l2 = r - ((t_h2 - 3.0) - s2);
  u = s_h * t_h2;
  v = s_l * t_h2 + t_l2 * ss;
  double p_h = trunc32(u + v);
  double p_l = v - (p_h - u);
  double z_h = kPowCpH * p_h;
  double z_l = kPowCpL * p_h + p_l * kPowCp + dp_l;
  double t1 = trunc32(((z_h + z_l) + dp_h) + nd);
  double t2 = z_l - (((t1 - nd) - dp_h) - z_h);

  // y * log2(ax) = p_h + p_l; y1 * t1 is exact.
  double y1 = trunc32(y);
  p_l = (y - y1) * t1 + y * t2;
  p_h = y1 * t1;
  double z = p_h + p_l;
  // Beyond +-1100 the result is inf or 0 anyway; clamping keeps the integer
  // part representable. NaN only arises for inputs pow() overrides.
  bool big = z > 1100.0;
  bool small = z < -1100.0;
  bool nan = z != z;
  p_h = select(nan, 0.0, p_h);
  p_h = select(small, -1100.0, p_h);
  p_h = select(big, 1100.0, p_h);
  p_l = select(nan | big | small, 0.0, p_l);
  z = p_h + p_l;

  // 2^(p_h + p_l) = 2^n * exp((p_h - n + p_l) ln2); p_h - n is exact.
  double tn = z + kRoundD;
  double ndd = tn - kRoundD;
  int64_t n = static_cast<int64_t>(to_bits(tn) - to_bits(kRoundD));
  p_h -= ndd;
  double t = trunc32(p_l + p_h);
  u = t * kPowLg2H;
  v = (p_l - (t - p_h)) * kPowLg2 + t * kPowLg2L;
  z = u + v;
  double w = v - (z - u);
  t = z * z;
  t1 = z - t * horner(t, kExpP1D, kExpP2D, kExpP3D, kExpP4D, kExpP5D);
  r = (z * t1) / (t1 - 2.0) - (w + z * w);
  z = 1.0 - (r - z);
  return scale2(z, n);
}

// C99 Annex F special cases of pow, applied on top of r = |x|^y computed
// for the generic case.
template <class T>
DITTO_MATH_INLINE T pow_fixup(T x, T y, T r) {
  using U = decltype(to_bits(T()));
  constexpr int kMant = std::numeric_limits<T>::digits - 1;
  constexpr T kTwoMant = static_cast<T>(U(1) << kMant);
  constexpr U kSign = U(1) << (sizeof(T) * 8 - 1);
  constexpr T kInf = std::numeric_limits<T>::infinity();
  constexpr T kNan = std::numeric_limits<T>::quiet_NaN();
  T ax = std::bit_cast<T>(to_bits(x) & ~kSign);
  T ay = std::bit_cast<T>(to_bits(y) & ~kSign);

  // Is y an integer, and odd? Below 2^kMant, adding 2^kMant rounds |y| to an
  // integer whose parity is the last mantissa bit.
  // All comparisons and arithmetic are done up front: with -ftrapping-math
  // GCC will not if-convert (vectorize) FP ops inside a select arm.
  T rounded = ay + kTwoMant;
  bool y_below = ay < kTwoMant;
  bool y_below2 = ay < 2 * kTwoMant;
  // At or above 2^kMant every finite value is an integer.
  bool y_int = (((rounded - kTwoMant) == ay) | !y_below) & (ay != kInf);
  U parity = y_below ? to_bits(rounded) : (y_below2 ? to_bits(ay) : U(0));
  // Sign of the result: sign of x if y is an odd integer (kept in the
  // integer domain; a bool made from a bit does not vectorize).
  U odd_sign = (parity << (sizeof(T) * 8 - 1)) & (y_int ? kSign : U(0));
  U neg = to_bits(x) & odd_sign;
  bool y_neg = y < 0;
  bool y_pos = y > 0;
  bool x_zero = ax == 0;
  bool x_inf = ax == kInf;
  bool x_big = ax > 1;

  T mag = r;
  mag = select(x_zero, select(y_neg, kInf, T(0)), mag);
  mag = select(x_inf, select(y_pos, kInf, T(0)), mag);
  T res = std::bit_cast<T>(to_bits(mag) | neg);
  // Negative finite base with non-integer exponent.
  res = select((x < 0) & !x_inf & !y_int, kNan, res);
  // y = +-inf: 1 for |x| = 1, else inf or 0 by |x| > 1 and the sign of y.
  T inf_res = select(x_big == y_pos, kInf, T(0));
  inf_res = select(ax == 1, T(1), inf_res);
  res = select(ay == kInf, inf_res, res);
  // Return a NaN input as is: x + y would pick either payload depending on
  // how the compiler orders the commutative add.
  res = select(y != y, y, res);
  res = select(x != x, x, res);
  res = select((x == 1) | (y == 0), T(1), res);
  return res;
}

// exp in three stages, exp_reduce, exp_poly and exp_finish, which
// exp_stages runs one after the other. Kernels may instead run each stage
// over a block of elements before the next (Note [Staged loops] in
// cpu_kernels.cpp): the operations, and so the bits, are the same.
// The float exp_finish returns the result (Note [Float exp]); the double one
// returns it as hi + lo: hi the correctly scaled, once-rounded result and lo
// the exact error of its final addition (scaled the same way, may flush to
// zero for tiny results), which double sigmoid uses.
template <class T>
struct Parts {
  T hi, lo;
};

DITTO_MATH_INLINE ReducedF exp_reduce(float x) {
  // Outside [-104, 89] the result is 0 or inf; clamping keeps k in range and
  // the final scaling produces the 0 / inf itself.
  float xc = select(x > 89.0f, 89.0f, x);
  xc = select(xc < -104.0f, -104.0f, xc);
  xc = select(x != x, 0.0f, xc);
  return reduce_ln2(xc, kLn2HiF, kLn2LoF);
}

DITTO_MATH_INLINE ReducedD exp_reduce(double x) {
  double xc = select(x > 710.0, 710.0, x);
  xc = select(xc < -746.0, -746.0, xc);
  xc = select(x != x, 0.0, xc);
  return reduce_ln2(xc);
}

// float: r^2 P(r) with P Taylor's series up to r^5 (truncation below 2^-27
// of the result for |r| <= ln2/2). A polynomial rather than fdlibm's
// rational form: a vector division costs as much as the rest.
DITTO_MATH_INLINE float exp_poly(float r) {
  return (r * r) *
      horner(r,
             0.5f,
             float(1.0 / 6),
             float(1.0 / 24),
             float(1.0 / 120),
             float(1.0 / 720),
             float(1.0 / 5040));
}

// double: fdlibm's c = r - r^2 P(r^2).
DITTO_MATH_INLINE double exp_poly(double r) {
  double z = r * r;
  return r - z * horner(z, kExpP1D, kExpP2D, kExpP3D, kExpP4D, kExpP5D);
}

// Note [Float exp]
// exp(r) = 1 + (r + p), p = r^2 P(r): the two additions are rounded and
// r = hi - lo carries the reduction's rounding, so the result is within
// 1.023 ulp (measured over all floats), against 0.765 ulp for the earlier
// form that added 1 + hi exactly (as s + s_err) and the small terms after
// it. That form cost 5 of about 35 vector operations per element and made
// float exp 1.1 to 1.15x PyTorch's time at 1M elements with AVX2; PyTorch's
// (Sleef's) expf is itself a 1-ulp function of this shape. Changed on
// 2026-11-25: float exp results, and everything computed from them
// (softmax, cross-entropy, sigmoid, every training run), differ from earlier
// versions in the last bits. x is exp's argument (only a NaN is looked at),
// a its reduction and p exp_poly(a.r).
DITTO_MATH_INLINE float exp_finish(float x, const ReducedF& a, float p) {
  const float y = 1.0f + (a.r + p);
  return select(x != x, x, scale2(y, a.k));
}

DITTO_MATH_INLINE Parts<double> exp_finish(
    double x,
    const ReducedD& a,
    double c) {
  double b = (a.lo - (a.r * c) / (2.0 - c)) - a.hi;
  double y = 1.0 - b;
  double y_err = (1.0 - y) - b;
  Parts<double> out;
  out.hi = select(x != x, x, scale2(y, a.k));
  out.lo = scale2(y_err, a.k);
  return out;
}

template <class T>
DITTO_MATH_INLINE auto exp_stages(T x) {
  auto a = exp_reduce(x);
  return exp_finish(x, a, exp_poly(a.r));
}

} // namespace detail

// ---------------------------------------------------------------------------
// exp

DITTO_MATH_INLINE float exp(float x) {
  return detail::exp_stages(x);
}

DITTO_MATH_INLINE double exp(double x) {
  return detail::exp_stages(x).hi;
}

// ---------------------------------------------------------------------------
// log

DITTO_MATH_INLINE float log(float x) {
  using namespace detail;
  bool sub = x < 0x1p-126f;
  float x_scaled = x * 0x1p25f;
  float xs = select(sub, x_scaled, x);
  uint32_t ix = to_bits(xs);
  // Biased exponent after moving m into [sqrt(2)/2, sqrt(2)).
  uint32_t ke = (ix + 0x004afb20u) >> 23;
  float m = f32_from_bits(ix - ((ke - 127u) << 23));
  float kf = static_cast<float>(static_cast<int32_t>(ke) - (sub ? 152 : 127));
  float f = m - 1.0f;
  float s = f / (2.0f + f);
  float R = log_poly(s);
  float hfsq = 0.5f * f * f;
  // fdlibm's choice of the more accurate form by mantissa range.
  uint32_t mant = ix & 0x7fffff;
  bool use_hfsq = (mant >= (0x6147au << 3)) & (mant <= (0x6b851u << 3));
  float dk_hi = kf * kLogLn2HiF;
  float dk_lo = kf * kLogLn2LoF;
  float r_hfsq = dk_hi - ((hfsq - (s * (hfsq + R) + dk_lo)) - f);
  float r_plain = dk_hi - ((s * (f - R) - dk_lo) - f);
  float res = select(use_hfsq, r_hfsq, r_plain);
  res = select(x == kInfF, x, res);
  res = select(x == 0.0f, -kInfF, res);
  res = select(x < 0.0f, kNanF, res);
  return select(x != x, x, res);
}

DITTO_MATH_INLINE double log(double x) {
  using namespace detail;
  bool sub = x < 0x1p-1022;
  double x_scaled = x * 0x1p54;
  double xs = select(sub, x_scaled, x);
  uint64_t ix = to_bits(xs);
  uint64_t ke = (ix + 0x00095f6400000000ull) >> 52;
  double m = f64_from_bits(ix - ((ke - 1023u) << 52));
  double bias = select(sub, 1077.0, 1023.0);
  double kd = small_u64_to_f64(ke) - bias;
  double f = m - 1.0;
  double s = f / (2.0 + f);
  double R = log_poly(s);
  double hfsq = 0.5 * f * f;
  int64_t mant = static_cast<int64_t>((ix >> 32) & 0xfffff);
  bool use_hfsq = (mant >= 0x6147a) & (mant <= 0x6b851);
  double dk_hi = kd * kLn2HiD;
  double dk_lo = kd * kLn2LoD;
  double r_hfsq = dk_hi - ((hfsq - (s * (hfsq + R) + dk_lo)) - f);
  double r_plain = dk_hi - ((s * (f - R) - dk_lo) - f);
  double res = select(use_hfsq, r_hfsq, r_plain);
  res = select(x == kInfD, x, res);
  res = select(x == 0.0, -kInfD, res);
  res = select(x < 0.0, kNanD, res);
  return select(x != x, x, res);
}

// ---------------------------------------------------------------------------
// log1p

DITTO_MATH_INLINE float log1p(float x) {
  using namespace detail;
  // Near 0 (1 + x in [sqrt(2)/2, sqrt(2))) use f = x exactly.
  bool near0 = (x < 0x1.a82798p-2f) & (x > -0x1.2bec32p-2f);
  float u = 1.0f + x;
  uint32_t iu = to_bits(u);
  uint32_t ke = (iu + 0x004afb20u) >> 23;
  float m = f32_from_bits(iu - ((ke - 127u) << 23));
  float kf = static_cast<float>(static_cast<int32_t>(ke) - 127);
  // Rounding error of u = 1 + x, both differences below are exact.
  float c_big = 1.0f - (u - x);
  float c_small = x - (u - 1.0f);
  float c = select(u >= 2.0f, c_big, c_small) / u;
  float f = m - 1.0f;
  f = select(near0, x, f);
  c = select(near0, 0.0f, c);
  kf = select(near0, 0.0f, kf);
  float s = f / (2.0f + f);
  float R = log_poly(s);
  float hfsq = 0.5f * f * f;
  float res =
      kf * kLogLn2HiF - ((hfsq - (s * (hfsq + R) + (kf * kLogLn2LoF + c))) - f);
  res = select(x == kInfF, x, res);
  res = select(x == -1.0f, -kInfF, res);
  res = select(x < -1.0f, kNanF, res);
  res = select(x != x, x, res);
  return select(x == 0.0f, x, res); // keeps -0
}

DITTO_MATH_INLINE double log1p(double x) {
  using namespace detail;
  bool near0 = (x < 0x1.a827999fcef32p-2) & (x > -0x1.2bec333018866p-2);
  double u = 1.0 + x;
  uint64_t iu = to_bits(u);
  uint64_t ke = (iu + 0x00095f6400000000ull) >> 52;
  double m = f64_from_bits(iu - ((ke - 1023u) << 52));
  double kd = small_u64_to_f64(ke) - 1023.0;
  double c_big = 1.0 - (u - x);
  double c_small = x - (u - 1.0);
  double c = select(u >= 2.0, c_big, c_small) / u;
  double f = m - 1.0;
  f = select(near0, x, f);
  c = select(near0, 0.0, c);
  kd = select(near0, 0.0, kd);
  double s = f / (2.0 + f);
  double R = log_poly(s);
  double hfsq = 0.5 * f * f;
  double res =
      kd * kLn2HiD - ((hfsq - (s * (hfsq + R) + (kd * kLn2LoD + c))) - f);
  res = select(x == kInfD, x, res);
  res = select(x == -1.0, -kInfD, res);
  res = select(x < -1.0, kNanD, res);
  res = select(x != x, x, res);
  return select(x == 0.0, x, res);
}

// ---------------------------------------------------------------------------
// expm1

DITTO_MATH_INLINE float expm1(float x) {
  using namespace detail;
  // Below -24 the result rounds to -1; above 89 it overflows.
  float xc = select(x > 89.0f, 89.0f, x);
  xc = select(xc < -24.0f, -24.0f, xc);
  xc = select(x != x, 0.0f, xc);
  ReducedF a = reduce_ln2(xc, kLogLn2HiF, kLogLn2LoF);
  int32_t k = a.k;
  float r = a.r;
  float c = (a.hi - r) - a.lo; // error of r = hi - lo
  float hfx = 0.5f * r;
  float hxs = r * hfx;
  float r1 = horner(hxs, 1.0f, kExpm1Q1F, kExpm1Q2F);
  float t = 3.0f - r1 * hfx;
  float e = hxs * ((r1 - t) / (6.0f - r * t));
  float res0 = r - (r * e - hxs);
  e = (r * (e - c) - c) - hxs;
  float res_m1 = 0.5f * (r - e) - 0.5f;
  float res_p1_neg = -2.0f * (e - (r + 0.5f));
  float res_p1_pos = 1.0f + 2.0f * (r - e);
  float res_p1 = select(r < -0.25f, res_p1_neg, res_p1_pos);
  // General k: 2^k * (1 + expm1(r)) - 1 arranged to avoid cancellation.
  bool far = (k <= -2) | (k > 56);
  int32_t kc = k < 2 ? 2 : (k > 56 ? 56 : k);
  float two_mk = f32_from_bits(static_cast<uint32_t>(127 - kc) << 23);
  float y_far = 1.0f - (e - r);
  float y_lo = (1.0f - two_mk) - (e - r);
  float y_hi = (r - (e + two_mk)) + 1.0f;
  float y = select(far, y_far, select(k < 23, y_lo, y_hi));
  y = scale2(y, k);
  float y_m1 = y - 1.0f;
  float res = select(far, y_m1, y);
  res = select(k == 1, res_p1, res);
  res = select(k == -1, res_m1, res);
  res = select(k == 0, res0, res);
  return select(x != x, x, res);
}

DITTO_MATH_INLINE double expm1(double x) {
  using namespace detail;
  // Below -40 the result rounds to -1; above 710 it overflows.
  double xc = select(x > 710.0, 710.0, x);
  xc = select(xc < -40.0, -40.0, xc);
  xc = select(x != x, 0.0, xc);
  ReducedD a = reduce_ln2(xc);
  int64_t k = a.k;
  double r = a.r;
  double c = (a.hi - r) - a.lo;
  double hfx = 0.5 * r;
  double hxs = r * hfx;
  double r1 =
      horner(hxs, 1.0, kExpm1Q1D, kExpm1Q2D, kExpm1Q3D, kExpm1Q4D, kExpm1Q5D);
  double t = 3.0 - r1 * hfx;
  double e = hxs * ((r1 - t) / (6.0 - r * t));
  double res0 = r - (r * e - hxs);
  e = (r * (e - c) - c) - hxs;
  double res_m1 = 0.5 * (r - e) - 0.5;
  double res_p1_neg = -2.0 * (e - (r + 0.5));
  double res_p1_pos = 1.0 + 2.0 * (r - e);
  double res_p1 = select(r < -0.25, res_p1_neg, res_p1_pos);
  bool far = (k <= -2) | (k > 56);
  int64_t kc = k < 2 ? 2 : (k > 56 ? 56 : k);
  double two_mk = f64_from_bits(static_cast<uint64_t>(1023 - kc) << 52);
  double y_far = 1.0 - (e - r);
  double y_lo = (1.0 - two_mk) - (e - r);
  double y_hi = (r - (e + two_mk)) + 1.0;
  double y = select(far, y_far, select(k < 20, y_lo, y_hi));
  y = scale2(y, k);
  double y_m1 = y - 1.0;
  double res = select(far, y_m1, y);
  res = select(k == 1, res_p1, res);
  res = select(k == -1, res_m1, res);
  res = select(k == 0, res0, res);
  return select(x != x, x, res);
}

// ---------------------------------------------------------------------------
// tanh

DITTO_MATH_INLINE float tanh(float x) {
  using namespace detail;
  float a = abs(x);
  a = select(a > 10.0f, 10.0f, a); // tanh(10) rounds to 1
  // |x| < 0.625: odd polynomial (Chebyshev fit, error < 2^-30).
  float z = a * a;
  float p =
      z * horner(z, kTanhC0F, kTanhC1F, kTanhC2F, kTanhC3F, kTanhC4F, kTanhC5F);
  float r_small = a + a * p;
  // Otherwise 1 - 2 / (t + 2) with t = expm1(2a) >= 2.49, the sum t + 2
  // carried exactly as s + s_err.
  float t = expm1(2.0f * a);
  float s = t + 2.0f;
  float s_err = (t - s) + 2.0f;
  float q = 2.0f / s;
  q = q - q * (s_err / s);
  float r = select(a < 0.625f, r_small, 1.0f - q);
  float res = f32_from_bits(to_bits(r) | (to_bits(x) & kSignF));
  return select(x != x, x, res);
}

DITTO_MATH_INLINE double tanh(double x) {
  using namespace detail;
  double a = abs(x);
  a = select(a > 22.0, 22.0, a); // tanh(22) rounds to 1
  // |x| < 0.625: odd polynomial (Chebyshev fit, error < 2^-59).
  double z = a * a;
  double p = z *
      horner(z,
             kTanhC0D,
             kTanhC1D,
             kTanhC2D,
             kTanhC3D,
             kTanhC4D,
             kTanhC5D,
             kTanhC6D,
             kTanhC7D,
             kTanhC8D,
             kTanhC9D,
             kTanhC10D,
             kTanhC11D);
  double r_small = a + a * p;
  double t = expm1(2.0 * a);
  double s = t + 2.0;
  double s_err = (t - s) + 2.0;
  double q = 2.0 / s;
  q = q - q * (s_err / s);
  double r = select(a < 0.625, r_small, 1.0 - q);
  double res = f64_from_bits(to_bits(r) | (to_bits(x) & kSignD));
  return select(x != x, x, res);
}

// ---------------------------------------------------------------------------
// sigmoid(x) = 1 / (1 + exp(-x))

// With e = exp(-|x|) = e_hi + e_lo, write 1 + e = d + d_err where d_err is
// the exact rounding error of 1 + e_hi plus e_lo. For num = 1 (x >= 0) or
// num = e (x < 0), num / (1 + e) ~ q + (num_lo - q * d_err) / d with
// q = num_hi / d. Only the final division and e's own small error remain;
// the negative tail keeps full relative accuracy down to subnormals.
// sigmoid_finish is the last stage, after exp_stages(-|x|).
template <class T>
DITTO_MATH_INLINE T sigmoid_finish(T x, T e_hi, T e_lo) {
  using namespace detail;
  T d = T(1) + e_hi;
  T d_err = ((T(1) - d) + e_hi) + e_lo;
  bool pos = x >= T(0);
  T num = select(pos, T(1), e_hi);
  T q = num / d; // NaN propagates from e
  T num_err = select(pos, T(0), e_lo);
  // 1/d is q itself (x >= 0) or 1 - q (x < 0, since e/d = 1 - 1/d): no
  // second division for the small correction term.
  T inv_d = select(pos, q, T(1) - q);
  return q + (num_err - q * d_err) * inv_d;
}

// Note [Float sigmoid]
// In float, num / (1 + e) with e = exp(-|x|) (float exp's result) and one
// division: at most 2.40 ulp (integer distance 2 from the correctly rounded
// result), against 1.17 for the corrected quotient that double uses. The
// correction (exp's lo, the error of 1 + e, a second product and sum) was
// about 40 of 150 vector instructions per 8 values with AVX2 and made float
// sigmoid 1.2 to 1.3x PyTorch's time at 1M elements; without it sigmoid is
// exp plus one add and one division, like PyTorch's 1 / (1 + exp(-x)). The
// negative tail stays accurate down to subnormals (e/(1 + e), not 1/(1 +
// exp(-x)), which overflows to 0 below -88.7). Changed on 2026-11-25: float
// sigmoid results differ from earlier versions in the last bits.
DITTO_MATH_INLINE float sigmoid_quotient(float x, float e) {
  using namespace detail;
  const float d = 1.0f + e;
  const float num = select(x >= 0.0f, 1.0f, e);
  return num / d; // NaN propagates from e
}

DITTO_MATH_INLINE float sigmoid(float x) {
  return sigmoid_quotient(x, detail::exp_stages(-detail::abs(x)));
}

DITTO_MATH_INLINE double sigmoid(double x) {
  detail::Parts<double> e = detail::exp_stages(-detail::abs(x));
  return sigmoid_finish(x, e.hi, e.lo);
}

// ---------------------------------------------------------------------------
// pow

DITTO_MATH_INLINE float pow(float x, float y) {
  // In double, |y log|x|| <= ~150 carries < 2^-44 relative error, far below
  // float's half ulp, so the final conversion is the only real rounding.
  double ax = static_cast<double>(detail::abs(x));
  double r = exp(static_cast<double>(y) * log(ax));
  return detail::pow_fixup(x, y, static_cast<float>(r));
}

DITTO_MATH_INLINE double pow(double x, double y) {
  double r = detail::pow_core(detail::abs(x), y);
  return detail::pow_fixup(x, y, r);
}

// ---------------------------------------------------------------------------
// sincos_2pi

namespace detail {
constexpr double kPio2HiD = 0x1.921fb54442d18p+0; // pi/2 rounded
constexpr double kPio2LoD = 0x1.1a62633145c07p-54; // pi/2 - kPio2HiD
// FreeBSD msun k_sin.c / k_cos.c (fdlibm), |x| <= pi/4.
constexpr double kSinS1 = -1.66666666666666324348e-01;
constexpr double kSinS2 = 8.33333333332248946124e-03;
constexpr double kSinS3 = -1.98412698298579493134e-04;
constexpr double kSinS4 = 2.75573137070700676789e-06;
constexpr double kSinS5 = -2.50507602534068634195e-08;
constexpr double kSinS6 = 1.58969099521155010221e-10;
constexpr double kCosC1 = 4.16666666666666019037e-02;
constexpr double kCosC2 = -1.38888888888741095749e-03;
constexpr double kCosC3 = 2.48015872894767294178e-05;
constexpr double kCosC4 = -2.75573143513906633035e-07;
constexpr double kCosC5 = 2.08757232129817482790e-09;
constexpr double kCosC6 = -1.13596475577881948265e-11;

// The rounding error of p = a * b (Dekker, Veltkamp's split; exact while
// nothing overflows or underflows).
DITTO_MATH_INLINE double two_prod_err(double a, double b, double p) {
  const double ca = 134217729.0 * a, cb = 134217729.0 * b;
  const double ah = ca - (ca - a), al = a - ah;
  const double bh = cb - (cb - b), bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

// sin(x + y) and cos(x + y) for |x + y| <= pi/4, y a tail below x's ulp.
DITTO_MATH_INLINE double kernel_sin(double x, double y) {
  const double z = x * x, w = z * z;
  const double r =
      kSinS2 + z * (kSinS3 + z * kSinS4) + z * w * (kSinS5 + z * kSinS6);
  const double v = z * x;
  return x - ((z * (0.5 * y - v * r) - y) - v * kSinS1);
}
DITTO_MATH_INLINE double kernel_cos(double x, double y) {
  const double z = x * x, w = z * z;
  const double r = z * (kCosC1 + z * (kCosC2 + z * kCosC3)) +
      w * w * (kCosC4 + z * (kCosC5 + z * kCosC6));
  const double hz = 0.5 * z;
  const double one_hz = 1.0 - hz;
  return one_hz + (((1.0 - one_hz) - hz) + (z * r - x * y));
}

DITTO_MATH_INLINE double flip_sign_if(bool c, double x) {
  return f64_from_bits(to_bits(x) ^ (static_cast<uint64_t>(c) << 63));
}
} // namespace detail

DITTO_MATH_INLINE void sincos_2pi(double u, double& s, double& c) {
  using namespace detail;
  const double t = u * 4.0; // exact
  const double rt = t + kRoundD; // n in the low mantissa bits
  const uint64_t q = to_bits(rt) & 3u;
  const double f = t - (rt - kRoundD); // exact, |f| <= 1/2
  const double p = f * kPio2HiD;
  const double tl = two_prod_err(f, kPio2HiD, p) + f * kPio2LoD;
  const double hi = p + tl;
  const double lo = tl - (hi - p);
  const double ks = kernel_sin(hi, lo), kc = kernel_cos(hi, lo);
  // Quadrant q: (sin, cos) = (ks, kc), (kc, -ks), (-ks, -kc), (-kc, ks).
  const bool odd = (q & 1u) != 0;
  s = flip_sign_if((q & 2u) != 0, select(odd, kc, ks));
  c = flip_sign_if(((q + 1u) & 2u) != 0, select(odd, ks, kc));
  // A NaN or infinite u gives NaN.
  const bool bad = !(abs(u) < 0x1p48);
  s = select(bad, kNanD, s);
  c = select(bad, kNanD, c);
}

} // namespace math
} // namespace ditto::kernels::DITTO_KERNEL_NS
