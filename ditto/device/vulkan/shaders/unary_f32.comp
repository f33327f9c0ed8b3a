#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// out = op(x) in float32, the CPU kernels' expressions: 0 neg, 1 abs,
// 2 relu, 3 exp, and in the DITTO_FLOAT64 build (unary_f32_f64) 4 log
// (kernels.cpp maps kernels::UnaryOp to these).
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
#ifdef DITTO_FLOAT64
    } else if (op == 4) {
      r = floatBitsToUint(ditto_log(u));
    } else {
      r = sqrt_exact(u);
#endif
    }
    out_[operand_index(i, 0)] = r;
  }
}
