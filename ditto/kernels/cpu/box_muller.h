#pragma once

// Internal: PyTorch 1.13's AVX2 float32 normal fill (normal_fill_16_AVX2),
// emulated exactly. It is not libm: it uses the Cephes-derived avx_mathfun
// log and sincos, and these are their operation sequences including the
// multiply-adds GCC fused in PyTorch's build (reference/pytorch-rng.md §5.2,
// path B). Pure IEEE arithmetic plus std::fma, so every ISA gives the same
// bits. Written branch-free over the 8 lanes of a block (selects are bit
// masks) so the compiler vectorizes it. Included by cpu_kernels.cpp inside
// its per-capability namespace; needs <bit>, <cmath> and <cstdint>.

namespace box_muller {

inline float sel(bool c, float a, float b) {
  uint32_t m = 0u - uint32_t(c);
  return std::bit_cast<float>(
      (std::bit_cast<uint32_t>(a) & m) | (std::bit_cast<uint32_t>(b) & ~m));
}

inline float flip_sign_if(bool c, float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) ^ (uint32_t(c) << 31));
}

inline float avx_log(float x) {
  x = sel(x < 0x1p-126f, 0x1p-126f, x); // max(x, smallest normal)
  uint32_t bits = std::bit_cast<uint32_t>(x);
  int32_t k = int32_t(bits >> 23) - 127;
  float m = std::bit_cast<float>((bits & ~0x7f800000u) | 0x3f000000u);
  float e = float(k) + 1.0f;
  bool lt = m < 0.707106781186547524f;
  e = e - sel(lt, 1.0f, 0.0f);
  x = (m - 1.0f) + sel(lt, m, 0.0f);
  float z = x * x;
  float y = 7.0376836292E-2f;
  y = std::fma(y, x, -1.1514610310E-1f);
  y = std::fma(y, x, 1.1676998740E-1f);
  y = std::fma(y, x, -1.2420140846E-1f);
  y = std::fma(y, x, 1.4249322787E-1f);
  y = std::fma(y, x, -1.6668057665E-1f);
  y = std::fma(y, x, 2.0000714765E-1f);
  y = std::fma(y, x, -2.4999993993E-1f);
  y = std::fma(y, x, 3.3333331174E-1f);
  y = y * x;
  y = std::fma(y, z, e * -2.12194440e-4f);
  y = std::fma(-z, 0.5f, y);
  x = x + y;
  return std::fma(e, 0.693359375f, x);
}

inline void avx_sincos(float theta, float& s, float& c) {
  bool neg = std::bit_cast<uint32_t>(theta) >> 31;
  float x = std::bit_cast<float>(std::bit_cast<uint32_t>(theta) & 0x7fffffffu);
  float y = x * 1.27323954473516f;
  int32_t j = int32_t(y);
  j = (j + 1) & ~1;
  y = float(j);
  const bool swap = (j & 4) != 0;
  const bool as_is = (j & 2) == 0;
  const bool cos_neg = ((~(j - 2)) & 4) != 0;
  x = std::fma(y, -0.78515625f, x);
  x = std::fma(y, -2.4187564849853515625e-4f, x);
  x = std::fma(y, -3.77489497744594108e-8f, x);
  float z = x * x;
  float cp = std::fma(
      std::fma(2.443315711809948E-005f, z, -1.388731625493765E-003f),
      z,
      4.166664568298827E-002f);
  cp = cp * z;
  cp = std::fma(cp, z, -(z * 0.5f));
  cp = cp + 1.0f;
  float sp = std::fma(
      std::fma(-1.9515295891E-4f, z, 8.3321608736E-3f), z, -1.6666654611E-1f);
  sp = sp * z;
  sp = std::fma(sp, x, x);
  s = flip_sign_if(neg != swap, sel(as_is, sp, cp));
  c = flip_sign_if(cos_neg, sel(as_is, cp, sp));
}

// One block of 16: the first 8 uniforms give the radius, the next 8 the
// angle.
inline void normal_block_float(float* d, float mean, float std) {
  const float two_pi = float(2.0 * 3.14159265358979323846);
  float out_c[8], out_s[8];
  for (int j = 0; j < 8; ++j) {
    float radius = std::sqrt(-2.0f * avx_log(1.0f - d[j]));
    float sn, cs;
    avx_sincos(two_pi * d[j + 8], sn, cs);
    out_c[j] = std::fma(radius * cs, std, mean);
    out_s[j] = std::fma(radius * sn, std, mean);
  }
  for (int j = 0; j < 8; ++j) {
    d[j] = out_c[j];
    d[j + 8] = out_s[j];
  }
}

} // namespace box_muller
