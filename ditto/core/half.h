#pragma once

// float16 and bfloat16 to and from float32, with PyTorch's bits (c10::Half,
// c10::BFloat16): rounding to nearest, ties to even; a NaN becomes the
// quiet NaN 0x7E00 (float16, sign kept) or 0xFFFF (bfloat16, as PyTorch's
// vectorized conversion). Integer
// operations only, so every CPU and compiler gives the same bits.

#include <bit>
#include <cstdint>

#include "ditto/core/dtype.h"

namespace ditto {

inline float half_to_float(Half h) {
  const uint32_t sign = uint32_t(h.x & 0x8000u) << 16;
  uint32_t e = (h.x >> 10) & 0x1Fu;
  uint32_t m = h.x & 0x3FFu;
  uint32_t bits;
  if (e == 0x1F) {
    bits = sign | 0x7F800000u | (m << 13);
  } else if (e != 0) {
    bits = sign | ((e + 112) << 23) | (m << 13);
  } else if (m == 0) {
    bits = sign;
  } else {
    // A subnormal m * 2^-24: normalize.
    e = 113;
    while ((m & 0x400u) == 0) {
      m <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((m & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

inline Half float_to_half(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  const auto sign = uint16_t((w >> 16) & 0x8000u);
  const uint32_t a = w & 0x7FFFFFFFu;
  if (a > 0x7F800000u) {
    return Half{uint16_t(sign | 0x7E00u)};
  }
  if (a >= 0x477FF000u) { // 65520 and above round to infinity
    return Half{uint16_t(sign | 0x7C00u)};
  }
  if (a >= 0x38800000u) { // 2^-14 and above: a normal float16
    const uint32_t odd = (a >> 13) & 1u;
    return Half{uint16_t(sign | ((a - 0x38000000u + 0xFFFu + odd) >> 13))};
  }
  // A subnormal float16 (or zero): m * 2^(e - 150) in units of 2^-24.
  const int e = int(a >> 23);
  const int shift = 126 - e;
  if (shift > 24) {
    return Half{sign};
  }
  const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1u))) {
    ++q;
  }
  return Half{uint16_t(sign | q)};
}

inline float bfloat16_to_float(BFloat16 b) {
  return std::bit_cast<float>(uint32_t(b.x) << 16);
}

inline BFloat16 float_to_bfloat16(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) {
    // PyTorch's vectorized conversion (cvtfp32_bf16, what its x86 builds
    // run on tensors) writes 0xFFFF; c10's scalar constructor 0x7FC0.
    return BFloat16{0xFFFF};
  }
  return BFloat16{uint16_t((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16)};
}

} // namespace ditto
