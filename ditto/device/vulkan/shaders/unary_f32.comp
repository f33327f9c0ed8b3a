#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// out = op(x) in float32, the CPU kernels' expressions: 0 neg, 1 abs,
// 2 relu, 3 exp, 7 erf, and in the DITTO_FLOAT64 build (unary_f32_f64) 4 log,
// 5 sqrt, 6 gelu (the declarations' vulkan codes).
layout(local_size_x = 256) in;

// ditto's float exp (kernels/cpu/math.h, Note [Float exp]): the same
// operations in the same order, each rounded (precise: no contraction).
// Constants by their bits (GLSL has no hex floats).
float scale2(float y, int k) {
  int k1 = k >> 1;
  int k2 = k - k1;
  precise float a = y * uintBitsToFloat(uint(k1 + 127) << 23);
  precise float b = a * uintBitsToFloat(uint(k2 + 127) << 23);
  return b;
}

// ditto's float erf (kernels/cpu/erf.h): the same operations in the same
// order, each rounded, the selects on the bits.
float ditto_erf(uint ux) {
  const float a = uintBitsToFloat(ux & 0x7FFFFFFFu);
  precise float z = a * a;
  precise float q = uintBitsToFloat(0xba21f65bu); // Q5
  q = uintBitsToFloat(0x3ba4b9cbu) + z * q;
  q = uintBitsToFloat(0xbcdb71a8u) + z * q;
  q = uintBitsToFloat(0x3de70fe5u) + z * q;
  q = uintBitsToFloat(0xbec09380u) + z * q;
  q = uintBitsToFloat(0x3e0375d3u) + z * q; // Q0
  precise float aq = a * q;
  precise float r_small = a + aq;
  precise float u = a - 0.875;
  precise float s = uintBitsToFloat(0x39977e07u); // S6
  s = uintBitsToFloat(0xbb40439bu) + u * s;
  s = uintBitsToFloat(0x3c844aa3u) + u * s;
  s = uintBitsToFloat(0xbd8a60f4u) + u * s;
  s = uintBitsToFloat(0xbf98a2b7u) + u * s;
  s = uintBitsToFloat(0xc060635du) + u * s;
  s = uintBitsToFloat(0xbe5878c7u) + u * s; // S0
  // erfc_exp2(s) = 2^(s - 2): s = k + r, 2^r = 1 + r E(r).
  const float kRound = uintBitsToFloat(0x4b400000u);
  precise float t = s + kRound;
  precise float kf = t - kRound;
  precise float r = s - kf;
  precise float e = uintBitsToFloat(0x3920bc7cu); // E5
  e = uintBitsToFloat(0x3aaf84afu) + r * e;
  e = uintBitsToFloat(0x3c1d96eau) + r * e;
  e = uintBitsToFloat(0x3d6357bdu) + r * e;
  e = uintBitsToFloat(0x3e75fdeeu) + r * e;
  e = uintBitsToFloat(0x3f317218u) + r * e; // E0
  precise float re = r * e;
  precise float y = 1.0 + re;
  const float scale = uintBitsToFloat(
      (floatBitsToUint(t) - floatBitsToUint(kRound) + 125u) << 23);
  precise float ys = y * scale;
  precise float r_large = 1.0 - ys;
  const uint abits = ux & 0x7FFFFFFFu;
  uint res = abits >= 0x407ad445u ? 0x3F800000u : floatBitsToUint(r_large);
  res = abits < 0x3F600000u ? floatBitsToUint(r_small) : res; // 0.875
  res |= ux & 0x80000000u;
  return uintBitsToFloat(nan_bits(ux) ? ux : res);
}

#ifdef DITTO_FLOAT64
// ditto's float log (kernels/cpu/math.h): fdlibm's reduction and forms,
// its division correctly rounded (div_exact). A denormal x is scaled by
// 2^25 from its bits, so a device that flushes denormals still sees it.
float ditto_log(uint ux) {
  const float x = uintBitsToFloat(ux);
  const bool sub = (ux & 0x7F800000u) == 0u && (ux & 0x80000000u) == 0u;
  // x * 2^25 for a positive denormal (or zero): mantissa * 2^-124, exact.
  const float x_scaled = float(ux & 0x007FFFFFu) * uintBitsToFloat(3u << 23);
  const uint ix = sub ? floatBitsToUint(x_scaled) : ux;
  const uint ke = (ix + 0x004afb20u) >> 23;
  const float m = uintBitsToFloat(ix - ((ke - 127u) << 23));
  const float kf = float(int(ke) - (sub ? 152 : 127));
  precise float f = m - 1.0;
  precise float two_f = 2.0 + f;
  const float s = div_exact(f, two_f);
  precise float z = s * s;
  precise float w = z * z;
  precise float h1 = uintBitsToFloat(0x3e789e26u) * w; // Lg4
  precise float g1 = uintBitsToFloat(0x3eccce13u) + h1; // Lg2
  precise float t1 = w * g1;
  precise float h2 = uintBitsToFloat(0x3e91e9eeu) * w; // Lg3
  precise float g2 = uintBitsToFloat(0x3f2aaaaau) + h2; // Lg1
  precise float t2 = z * g2;
  precise float R = t2 + t1;
  precise float half_f = 0.5 * f;
  precise float hfsq = half_f * f;
  const uint mant = ix & 0x7fffffu;
  const bool use_hfsq = mant >= (0x6147au << 3) && mant <= (0x6b851u << 3);
  precise float dk_hi = kf * uintBitsToFloat(0x3f317180u);
  precise float dk_lo = kf * uintBitsToFloat(0x3717f7d1u);
  precise float res;
  if (use_hfsq) {
    // dk_hi - ((hfsq - (s * (hfsq + R) + dk_lo)) - f)
    precise float a = hfsq + R;
    precise float b = s * a;
    precise float c = b + dk_lo;
    precise float d = hfsq - c;
    precise float e = d - f;
    res = dk_hi - e;
  } else {
    // dk_hi - ((s * (f - R) - dk_lo) - f)
    precise float a = f - R;
    precise float b = s * a;
    precise float c = b - dk_lo;
    precise float e = c - f;
    res = dk_hi - e;
  }
  uint ur = floatBitsToUint(res);
  ur = ux == 0x7F800000u ? ux : ur; // +inf
  ur = (ux & 0x7FFFFFFFu) == 0u ? 0xFF800000u : ur; // +-0: -inf
  ur = negative_bits(ux) ? 0x7FC00000u : ur; // x < 0: NaN
  return uintBitsToFloat(nan_bits(ux) ? ux : ur);
}
// ditto's float GELU (kernels/cpu/erf.h, Note [Float GELU]): x Phi(x),
// Phi = 1/2 + x P(x^2)/Q(x^2), the quotient correctly rounded (div_exact).
float ditto_gelu(uint ux) {
  const float x = uintBitsToFloat(ux);
  precise float z = x * x;
  precise float p = uintBitsToFloat(0x32b88509u); // P5
  p = uintBitsToFloat(0x36d68fa0u) + z * p;
  p = uintBitsToFloat(0x393efb91u) + z * p;
  p = uintBitsToFloat(0x3b9c039au) + z * p;
  p = uintBitsToFloat(0x3d103ec1u) + z * p;
  p = uintBitsToFloat(0x3ecc4229u) + z * p; // P0
  precise float q = uintBitsToFloat(0x359c12aau); // Q5
  q = uintBitsToFloat(0x38a2b7f3u) + z * q;
  q = uintBitsToFloat(0x3b0094c2u) + z * q;
  q = uintBitsToFloat(0x3cf10ef9u) + z * q;
  q = uintBitsToFloat(0x3e828773u) + z * q;
  q = 1.0 + z * q;
  const float ratio = div_exact(p, q);
  precise float xr = x * ratio;
  precise float phi = 0.5 + xr;
  uint ph = floatBitsToUint(phi);
  ph = negative_bits(ph) ? 0u : ph;
  // |x| >= 5.5426: Phi is 1 (resp. 0); a NaN x takes neither.
  const bool nan = nan_bits(ux);
  ph = !nan && order_key(ux) >= order_key(0x40b15cfbu) ? 0x3F800000u : ph;
  ph = !nan && order_key(ux) <= order_key(0xc0b15cfbu) ? 0u : ph;
  precise float res = x * uintBitsToFloat(ph);
  return nan ? uintBitsToFloat(ux | 0x00400000u) : res;
}
#endif

float ditto_exp(uint ux) {
  const float x = uintBitsToFloat(ux);
  // Clamp to [-104, 89] (0 for NaN), decided on the bits.
  uint uc = nan_bits(ux) ? 0u : ux;
  if (order_key(uc) > order_key(0x42B20000u)) { // 89
    uc = 0x42B20000u;
  }
  if (order_key(uc) < order_key(0xC2D00000u)) { // -104
    uc = 0xC2D00000u;
  }
  const float xc = uintBitsToFloat(uc);
  const float kInvLn2 = uintBitsToFloat(0x3fb8aa3bu);
  const float kRound = uintBitsToFloat(0x4b400000u);
  const float kLn2Hi = uintBitsToFloat(0x3f317200u);
  const float kLn2Lo = uintBitsToFloat(0x35bfbe8eu);
  precise float t0 = xc * kInvLn2;
  precise float t = t0 + kRound;
  precise float kf = t - kRound;
  const int k = int(floatBitsToUint(t) - floatBitsToUint(kRound));
  precise float m = kf * kLn2Hi;
  precise float hi = xc - m;
  precise float lo = kf * kLn2Lo;
  precise float r = hi - lo;
  // p = r^2 (1/2 + r (1/6 + r (1/24 + r (1/120 + r (1/720 + r / 5040))))).
  precise float h = uintBitsToFloat(0x39500d01u);
  h = uintBitsToFloat(0x3ab60b61u) + r * h;
  h = uintBitsToFloat(0x3c088889u) + r * h;
  h = uintBitsToFloat(0x3d2aaaabu) + r * h;
  h = uintBitsToFloat(0x3e2aaaabu) + r * h;
  h = 0.5 + r * h;
  precise float r2 = r * r;
  precise float p = r2 * h;
  precise float s = r + p;
  precise float y = 1.0 + s;
  return nan_bits(ux) ? x : scale2(y, k);
}
layout(set = 0, binding = 1) buffer Out { uint out_[]; };
layout(set = 0, binding = 2) readonly buffer X { uint x_[]; };
void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    // On the bits (common.glsl): the sign flip of -x, and the CPU's
    // selects, which keep NaN and -0 as the CPU does.
    uint u = x_[operand_index(i, 1)];
    uint r;
    if (op == 0) {
      r = u ^ 0x80000000u;
    } else if (op == 1) {
      // x < 0 ? -x : (x == 0 ? 0 : x)
      r = negative_bits(u) ? (u & 0x7FFFFFFFu)
                           : (u == 0x80000000u ? 0u : u);
    } else if (op == 2) {
      // x < 0 ? 0 : x
      r = negative_bits(u) ? 0u : u;
    } else if (op == 3) {
      r = floatBitsToUint(ditto_exp(u));
    } else if (op == 7) {
      r = floatBitsToUint(ditto_erf(u));
#ifdef DITTO_FLOAT64
    } else if (op == 4) {
      r = floatBitsToUint(ditto_log(u));
    } else if (op == 6) {
      r = floatBitsToUint(ditto_gelu(u));
    } else {
      r = sqrt_exact(u);
#endif
    }
    out_[operand_index(i, 0)] = r;
  }
}
