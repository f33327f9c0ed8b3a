// Bit-reproducible trigonometric, inverse trigonometric, hyperbolic and
// base-2/base-10 functions for ditto's CPU kernels, in the style of math.h
// (whose build requirements hold here too): fixed sequences of IEEE-754
// + - * / and sqrt, comparisons, bit-mask selects, integer ops and bit
// casts; no libm, no FMA. The double functions are the reference; a float
// function evaluates the double one on the widened input and rounds once,
// so float results are correctly rounded but for the rare input whose
// double result lies within its own error of a float rounding boundary.
//
// Methods (fdlibm's, as in FreeBSD msun, with branches replaced by
// computing the cases and selecting):
//   sin, cos, tan  x = n pi/2 + r, |r| <= pi/4 about: for |x| < 2^19,
//            Cody and Waite's reduction with pi/2 in four pieces of 33
//            bits and a last one (fdlibm's third round, always taken), r
//            as hi + lo; then fdlibm's __kernel_sin / __kernel_cos (the
//            ones math.h's sincos_2pi uses) and the quadrant n mod 4.
//            tan = sin / cos of r (or -cos / sin), one division.
//            |x| >= 2^19: Payne and Hanek's reduction, x 2/pi mod 4 from
//            192 bits of 2/pi at the position x's exponent picks, in
//            integers (rem_pio2_large, a scalar function): a loop over a
//            contiguous block runs the branch-free medium path when every
//            element is below 2^19 and the general per-element one when
//            not, so the bits are the same either way.
//   atan     fdlibm's s_atan.c: |x| cut at 7/16, 11/16, 19/16, 39/16 into
//            atan(c) + atan((x - c) / (1 + c x)) for c = 0, 1/2, 1, 3/2,
//            inf, one division (the five numerators and denominators
//            selected), an 11-term odd polynomial, atan(c) as hi + lo.
//   asin     atan(x / sqrt((1 - x)(1 + x))); acos 2 atan(sqrt((1 - x) /
//            (1 + x))); atan2(y, x) atan(|y| / |x|), reflected to pi - a for
//            a negative (or -0) x, with C99's zeros and infinities, the sign
//            of y copied.
//   sinh, cosh  from expm1 below 22 (fdlibm's forms free of cancellation),
//            exp(|x|/2)^2 / 2 above, so the range reaches the overflow
//            threshold itself.
//   asinh, acosh, atanh  fdlibm's forms over log1p, sqrt and log.
//   log2, log10  x = 2^k m, m in [sqrt(2)/2, sqrt(2)): k + log(m)/ln 2
//            (exact for powers of two), k log10(2) (in two pieces) +
//            log(m)/ln 10.
//   exp2     x = k + r, |r| <= 1/2 exactly, exp(r ln 2) with r ln 2 as
//            hi + lo, scaled by 2^k (exact for integral x).
// Accuracy (double, against long double libm, tests/kernels/math_test.cpp):
// sin, cos 1 ulp; tan, asin, acos, atan2 2 ulp; atan, sinh, cosh, asinh,
// acosh, atanh, log2, log10, exp2 about 1.5 ulp.
//
// The reductions, kernels and atan coefficients are fdlibm's:
//   Copyright (C) 1993, 2004 by Sun Microsystems, Inc. All rights reserved.
//   Permission to use, copy, modify, and distribute this software is freely
//   granted, provided that this notice is preserved.
// The 2/pi bits come from tools/two_over_pi.py (integer arithmetic).

#pragma once

#include <cmath>

#include "ditto/kernels/cpu/math.h"

namespace ditto::kernels::DITTO_KERNEL_NS {
namespace math {

namespace detail {

// 2/pi's first 1280 bits after the binary point, 64 a word, most
// significant first.
inline constexpr uint64_t kTwoOverPi[20] = {
    0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
    0xfe5163abdebbc561ull, 0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull,
    0xfe1deb1cb129a73eull, 0xe88235f52ebb4484ull, 0xe99c7026b45f7e41ull,
    0x3991d639835339f4ull, 0x9c845f8bbdf9283bull, 0x1ff897ffde05980full,
    0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull, 0x4f463f669e5fea2dull,
    0x7527bac7ebe5f17bull, 0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull,
    0x56033046fc7b6babull, 0xf0cfbc209af4361dull,
};

constexpr double kInvPio2D = 0x1.45f306dc9c883p-1;
// pi/2 = kPio2P1 + kPio2P2 + kPio2P3 + kPio2P3t, the first three of 33
// significant bits (fdlibm's pio2_1, pio2_2, pio2_3), so n * piece is
// exact for n < 2^20; kPio2P1t and kPio2P2t are the rounded rests.
constexpr double kPio2P1 = 0x1.921fb544p+0;
constexpr double kPio2P1t = 0x1.0b4611a626331p-34;
constexpr double kPio2P2 = 0x1.0b4611a6p-34;
constexpr double kPio2P2t = 0x1.3198a2e037073p-69;
constexpr double kPio2P3 = 0x1.3198a2ep-69;
constexpr double kPio2P3t = 0x1.b839a252049c1p-104;
// Below this |x| the medium reduction is exact enough (fdlibm: 2^19 pi/2).
constexpr double kTrigMediumLimit = 0x1p19;

struct TrigReduced {
  double hi, lo; // r = hi + lo, |r| <= pi/4 (about)
  uint64_t q; // n mod 4
};

// One round of fdlibm's reduction: r - w holds x - n (pieces so far), with
// (t - r) - w the exact error of t - w.
DITTO_MATH_INLINE TrigReduced rem_pio2_medium(double x) {
  const double rt = x * kInvPio2D + kRoundD;
  const uint64_t q = to_bits(rt) & 3u;
  const double fn = rt - kRoundD;
  double r = x - fn * kPio2P1; // exact (Sterbenz)
  double t = r;
  double w = fn * kPio2P2;
  r = t - w;
  w = fn * kPio2P2t - ((t - r) - w);
  t = r;
  w = fn * kPio2P3;
  r = t - w;
  w = fn * kPio2P3t - ((t - r) - w);
  const double hi = r - w;
  const double lo = (r - hi) - w;
  return {hi, lo, q};
}

// Bits i .. i + 63 of 2/pi (bit 1 is the first after the point).
inline uint64_t two_over_pi_bits(int i) {
  const int k = (i - 1) >> 6, o = (i - 1) & 63;
  uint64_t v = kTwoOverPi[k] << o;
  if (o != 0) {
    v |= kTwoOverPi[k + 1] >> (64 - o);
  }
  return v;
}

// Bits pos .. pos + 63 of the 256-bit p (p[0] most significant).
inline uint64_t bits_of_256(const uint64_t p[4], int pos) {
  const int w = 3 - (pos >> 6), o = pos & 63;
  uint64_t v = p[w] >> o;
  if (o != 0 && w > 0) {
    v |= p[w - 1] << (64 - o);
  }
  return v;
}

// Payne-Hanek for finite |x| >= 2^19: |x| = m 2^e with m an integer of 53
// bits; the bits of 2/pi worth at least 4 after multiplying by 2^e are
// dropped (they add multiples of 4 to x 2/pi), the next 192 are
// multiplied by m in integers, and the product's bits give n mod 4 and the
// fraction f in [-1/2, 1/2), normalized so that a fraction close to 0 keeps
// 106 significant bits. r = f pi/2 as hi + lo.
inline TrigReduced rem_pio2_large(double x) {
  const uint64_t b = to_bits(x);
  const int e = static_cast<int>((b >> 52) & 0x7ff) - 1075;
  const uint64_t m = (b & 0xfffffffffffffull) | (1ull << 52);
  const int s = e - 1 > 1 ? e - 1 : 1; // the first bit of 2/pi kept
  const uint64_t w0 = two_over_pi_bits(s);
  const uint64_t w1 = two_over_pi_bits(s + 64);
  const uint64_t w2 = two_over_pi_bits(s + 128);
  using U128 = unsigned __int128;
  const U128 t2 = static_cast<U128>(m) * w2;
  const U128 t1 = static_cast<U128>(m) * w1 + (t2 >> 64);
  const U128 t0 = static_cast<U128>(m) * w0 + (t1 >> 64);
  const uint64_t p[4] = {
      static_cast<uint64_t>(t0 >> 64),
      static_cast<uint64_t>(t0),
      static_cast<uint64_t>(t1),
      static_cast<uint64_t>(t2)};
  // x 2/pi = p 2^-sh, sh in [190, 224]: the integer part's two low bits
  // at sh, the fraction's 128 leading bits below.
  const int sh = s + 191 - e;
  uint64_t q = bits_of_256(p, sh) & 3u;
  const uint64_t f_hi = bits_of_256(p, sh - 64);
  const uint64_t f_lo = bits_of_256(p, sh - 128);
  // f >= 1/2: the next integer, f - 1.
  const bool up = (f_hi >> 63) != 0;
  q = (q + (up ? 1u : 0u)) & 3u;
  U128 u = (static_cast<U128>(f_hi) << 64) | f_lo;
  if (up) {
    u = ~u + 1; // |f - 1| 2^128
  }
  if (u == 0) {
    return {0.0, 0.0, q};
  }
  const uint64_t uh = static_cast<uint64_t>(u >> 64);
  const int lz = uh != 0 ? __builtin_clzll(uh)
                         : 64 + __builtin_clzll(static_cast<uint64_t>(u));
  const U128 v = u << lz;
  const double a = static_cast<double>(static_cast<uint64_t>(v >> 75));
  const double c =
      static_cast<double>(static_cast<uint64_t>(v >> 22) & ((1ull << 53) - 1));
  // 2^-(53 + lz) and 2^-(106 + lz), lz <= 127 (normal doubles).
  const double s1 = f64_from_bits(static_cast<uint64_t>(1023 - 53 - lz) << 52);
  const double s2 = f64_from_bits(static_cast<uint64_t>(1023 - 106 - lz) << 52);
  double fh = a * s1, fl = c * s2; // exact
  if (up) {
    fh = -fh;
    fl = -fl;
  }
  const double pr = fh * kPio2HiD;
  const double err =
      two_prod_err(fh, kPio2HiD, pr) + (fh * kPio2LoD + fl * kPio2HiD);
  const double hi = pr + err;
  const double lo = err - (hi - pr);
  // x = n pi/2 + r for |x|: -x = -n pi/2 - r.
  if ((b & kSignD) != 0) {
    return {-hi, -lo, (4u - q) & 3u};
  }
  return {hi, lo, q};
}

// sin (which = 0), cos (1) or tan (2) of the reduced argument.
template <int which>
DITTO_MATH_INLINE double trig_finish(const TrigReduced& a) {
  const double ks = kernel_sin(a.hi, a.lo), kc = kernel_cos(a.hi, a.lo);
  const bool odd = (a.q & 1u) != 0;
  if constexpr (which == 0) {
    return flip_sign_if((a.q & 2u) != 0, select(odd, kc, ks));
  } else if constexpr (which == 1) {
    return flip_sign_if(((a.q + 1u) & 2u) != 0, select(odd, ks, kc));
  } else {
    return select(odd, -kc, ks) / select(odd, ks, kc);
  }
}

// For |x| < kTrigMediumLimit (branch-free, vectorizes).
template <int which>
DITTO_MATH_INLINE double trig_medium(double x) {
  return trig_finish<which>(rem_pio2_medium(x));
}

// Any x.
template <int which>
inline double trig_any(double x) {
  if (abs(x) < kTrigMediumLimit) {
    return trig_medium<which>(x);
  }
  if (!(abs(x) <= std::numeric_limits<double>::max())) {
    return x - x; // NaN for inf and NaN
  }
  return trig_finish<which>(rem_pio2_large(x));
}

// fdlibm's s_atan.c.
constexpr double kAtanHi[4] = {
    0x1.dac670561bb4fp-2,
    0x1.921fb54442d18p-1,
    0x1.f730bd281f69bp-1,
    0x1.921fb54442d18p+0};
constexpr double kAtanLo[4] = {
    0x1.a2b7f222f65e2p-56,
    0x1.1a62633145c07p-55,
    0x1.007887af0cbbdp-56,
    0x1.1a62633145c07p-54};
constexpr double kAtanT[11] = {
    3.33333333333329318027e-01,
    -1.99999999998764832476e-01,
    1.42857142725034663711e-01,
    -1.11111104054623557880e-01,
    9.09088713343650656196e-02,
    -7.69187620504482999495e-02,
    6.66107313738753120669e-02,
    -5.83357013379057348645e-02,
    4.97687799461593236017e-02,
    -3.65315727442169155270e-02,
    1.62858201153657823623e-02};

constexpr double kPiHiD = 0x1.921fb54442d18p+1;
constexpr double kPiLoD = 0x1.1a62633145c07p-53;

// atan(a) and pi - atan(a) for a = |x| >= 0 (or NaN); the second keeps
// atan(c)'s low part, so that pi - atan(huge) rounds to pi/2.
struct AtanParts {
  double value, reflected;
};
DITTO_MATH_INLINE AtanParts atan_abs_parts(double a) {
  const bool c0 = a < 0.4375, c1 = a < 0.6875, c2 = a < 1.1875, c3 = a < 2.4375;
  // Numerator and denominator of the reduced argument.
  const double num = select(
      c0,
      a,
      select(
          c1, 2.0 * a - 1.0, select(c2, a - 1.0, select(c3, a - 1.5, -1.0))));
  const double den = select(
      c0,
      1.0,
      select(c1, 2.0 + a, select(c2, a + 1.0, select(c3, 1.0 + 1.5 * a, a))));
  const double t = num / den;
  const double z = t * t, w = z * z;
  const double s1 = z *
      (kAtanT[0] +
       w *
           (kAtanT[2] +
            w *
                (kAtanT[4] +
                 w * (kAtanT[6] + w * (kAtanT[8] + w * kAtanT[10])))));
  const double s2 = w *
      (kAtanT[1] +
       w * (kAtanT[3] + w * (kAtanT[5] + w * (kAtanT[7] + w * kAtanT[9]))));
  const double hi = select(
      c1,
      kAtanHi[0],
      select(c2, kAtanHi[1], select(c3, kAtanHi[2], kAtanHi[3])));
  const double lo = select(
      c1,
      kAtanLo[0],
      select(c2, kAtanLo[1], select(c3, kAtanLo[2], kAtanLo[3])));
  const double c = (t * (s1 + s2) - lo) - t;
  const double small = t - t * (s1 + s2);
  return {
      select(c0, small, hi - c),
      select(c0, (kPiHiD - small) + kPiLoD, (kPiHiD - hi) + (kPiLoD + c))};
}
DITTO_MATH_INLINE double atan_abs(double a) {
  return atan_abs_parts(a).value;
}

DITTO_MATH_INLINE double copy_sign_of(double mag, double from) {
  return f64_from_bits((to_bits(mag) & ~kSignD) | (to_bits(from) & kSignD));
}

constexpr double kLn2D = 0x1.62e42fefa39efp-1;
constexpr double kLn2LoD2 = 0x1.abc9e3b39803fp-56; // ln 2 - kLn2D
constexpr double kInvLn2D2 = 0x1.71547652b82fep+0;
constexpr double kInvLn10D = 0x1.bcb7b1526e50ep-2;
constexpr double kLog10_2HiD = 0x1.34413509f7p-2; // 41 bits: k * hi exact
constexpr double kLog10_2LoD = 0x1.3fde623e2566bp-43; // log10(2) - hi

// k and m with x = 2^k m, m in [sqrt(2)/2, sqrt(2)), for finite x > 0.
DITTO_MATH_INLINE void split_exponent(double x, double& k, double& m) {
  const bool sub = x < 0x1p-1022;
  const double xs = select(sub, x * 0x1p54, x);
  const uint64_t b = to_bits(xs);
  const double e =
      small_u64_to_f64((b >> 52) & 0x7ff) - 1023.0 - select(sub, 54.0, 0.0);
  double mm = f64_from_bits((b & 0xfffffffffffffull) | 0x3ff0000000000000ull);
  const bool big = mm > 0x1.6a09e667f3bcdp+0;
  m = select(big, mm * 0.5, mm);
  k = select(big, e + 1.0, e);
}

} // namespace detail

// ---- sin, cos, tan (any x; a loop over a block checks |x| < 2^19 first,
// see trig_block in cpu_kernels.cpp)
inline double sin(double x) {
  return detail::trig_any<0>(x);
}
inline double cos(double x) {
  return detail::trig_any<1>(x);
}
inline double tan(double x) {
  return detail::trig_any<2>(x);
}

// ---- atan, asin, acos, atan2
DITTO_MATH_INLINE double atan(double x) {
  return detail::copy_sign_of(detail::atan_abs(detail::abs(x)), x);
}
DITTO_MATH_INLINE double asin(double x) {
  const double t = x / std::sqrt((1.0 - x) * (1.0 + x));
  return atan(t);
}
DITTO_MATH_INLINE double acos(double x) {
  return 2.0 * detail::atan_abs(std::sqrt((1.0 - x) / (1.0 + x)));
}
DITTO_MATH_INLINE double atan2(double y, double x) {
  using namespace detail;
  const double ay = abs(y), ax = abs(x);
  const AtanParts p = atan_abs_parts(ay / ax);
  // 0/0 and inf/inf: C99's atan2(0, +-0) = 0, pi and atan2(inf, +-inf) =
  // pi/4, 3pi/4.
  const bool both_zero = ay == 0.0 && ax == 0.0;
  const bool both_inf = ay == kInfD && ax == kInfD;
  const bool neg_x = (to_bits(x) & kSignD) != 0;
  double a = select(neg_x, p.reflected, p.value);
  a = select(both_zero, select(neg_x, kPiHiD, 0.0), a);
  a = select(
      both_inf, select(neg_x, 0x1.2d97c7f3321d2p+1, 0x1.921fb54442d18p-1), a);
  const double r = copy_sign_of(a, y);
  return select(x != x || y != y, x + y, r);
}

// ---- sinh, cosh, asinh, acosh, atanh
DITTO_MATH_INLINE double sinh(double x) {
  using namespace detail;
  const double ax = abs(x);
  const double t = expm1(select(ax < 22.0, ax, 0.0));
  const double small = 0.5 * (2.0 * t - t * t / (t + 1.0)); // ax < 1
  const double mid = 0.5 * (t + t / (t + 1.0)); // ax < 22
  const double w = exp(0.5 * ax);
  const double large = (0.5 * w) * w;
  const double r = select(ax < 1.0, small, select(ax < 22.0, mid, large));
  return select(x != x, x, copy_sign_of(r, x));
}
DITTO_MATH_INLINE double cosh(double x) {
  using namespace detail;
  const double ax = abs(x);
  const double t = expm1(select(ax < 0.5 * kLn2D, ax, 0.0));
  const double small = 1.0 + (t * t) / (2.0 * (1.0 + t));
  const double e = exp(select(ax < 22.0, ax, 0.0));
  const double mid = 0.5 * e + 0.5 / e;
  const double w = exp(0.5 * ax);
  const double large = (0.5 * w) * w;
  const double r =
      select(ax < 0.5 * kLn2D, small, select(ax < 22.0, mid, large));
  return select(x != x, x, r);
}
DITTO_MATH_INLINE double asinh(double x) {
  using namespace detail;
  const double ax = abs(x);
  const double big = log(select(ax > 0x1p28, ax, 1.0)) + kLn2D;
  const double mid = log(2.0 * ax + 1.0 / (std::sqrt(x * x + 1.0) + ax));
  const double x2 = x * x;
  const double small = log1p(ax + x2 / (1.0 + std::sqrt(1.0 + x2)));
  const double r = select(
      ax < 0x1p-28, ax, select(ax > 0x1p28, big, select(ax > 2.0, mid, small)));
  return select(x != x, x, copy_sign_of(r, x));
}
DITTO_MATH_INLINE double acosh(double x) {
  using namespace detail;
  const double big = log(select(x > 0x1p28, x, 1.0)) + kLn2D;
  const double mid = log(2.0 * x - 1.0 / (x + std::sqrt(x * x - 1.0)));
  const double t = x - 1.0;
  const double small = log1p(t + std::sqrt(2.0 * t + t * t));
  const double r = select(x > 0x1p28, big, select(x > 2.0, mid, small));
  // x < 1 (and NaN): NaN, as small's sqrt of a negative gives.
  return select(x < 1.0, kNanD, select(x != x, x, r));
}
DITTO_MATH_INLINE double atanh(double x) {
  using namespace detail;
  const double ax = abs(x);
  const double t = ax + ax;
  const double small = 0.5 * log1p(t + t * ax / (1.0 - ax));
  const double large = 0.5 * log1p(t / (1.0 - ax));
  const double r = select(ax < 0.5, small, large);
  return select(x != x, x, copy_sign_of(r, x));
}

// ---- log2, log10, exp2
DITTO_MATH_INLINE double log2(double x) {
  using namespace detail;
  double k, m;
  split_exponent(x, k, m);
  const double r = k + log(m) * kInvLn2D2;
  const bool regular = x > 0.0 && x < kInfD;
  return select(regular, r, log(x)); // 0, negative, inf, NaN as log
}
DITTO_MATH_INLINE double log10(double x) {
  using namespace detail;
  double k, m;
  split_exponent(x, k, m);
  const double r = k * kLog10_2HiD + (k * kLog10_2LoD + log(m) * kInvLn10D);
  const bool regular = x > 0.0 && x < kInfD;
  return select(regular, r, log(x));
}
DITTO_MATH_INLINE double exp2(double x) {
  using namespace detail;
  double xc = select(x > 1100.0, 1100.0, x);
  xc = select(xc < -1100.0, -1100.0, xc);
  xc = select(x != x, 0.0, xc);
  const double rt = xc + kRoundD;
  const int64_t k = static_cast<int64_t>(to_bits(rt) - to_bits(kRoundD));
  const double r = xc - (rt - kRoundD); // exact, |r| <= 1/2
  const double hi = r * kLn2D;
  const double lo = two_prod_err(r, kLn2D, hi) + r * kLn2LoD2;
  const double e = exp(hi);
  const double y = scale2(e + e * lo, k);
  return select(x != x, x, y);
}

// ---- float: the double function, rounded once
#define DITTO_TRIG_FLOAT(name)                               \
  DITTO_MATH_INLINE float name(float x) {                    \
    return static_cast<float>(name(static_cast<double>(x))); \
  }
DITTO_TRIG_FLOAT(atan)
DITTO_TRIG_FLOAT(asin)
DITTO_TRIG_FLOAT(acos)
DITTO_TRIG_FLOAT(sinh)
DITTO_TRIG_FLOAT(cosh)
DITTO_TRIG_FLOAT(asinh)
DITTO_TRIG_FLOAT(acosh)
DITTO_TRIG_FLOAT(atanh)
DITTO_TRIG_FLOAT(log2)
DITTO_TRIG_FLOAT(log10)
DITTO_TRIG_FLOAT(exp2)
#undef DITTO_TRIG_FLOAT
inline float sin(float x) {
  return static_cast<float>(sin(static_cast<double>(x)));
}
inline float cos(float x) {
  return static_cast<float>(cos(static_cast<double>(x)));
}
inline float tan(float x) {
  return static_cast<float>(tan(static_cast<double>(x)));
}
DITTO_MATH_INLINE float atan2(float y, float x) {
  return static_cast<float>(
      atan2(static_cast<double>(y), static_cast<double>(x)));
}

} // namespace math
} // namespace ditto::kernels::DITTO_KERNEL_NS
