#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Fills from a Philox4x32-10 stream (ditto/random/philox.h), element i of
// a contiguous float32 tensor from its own words, as the CPU's
// philox_fill in ops/random/random.cpp: the same bits for the same key and
// position. Params: p[0] n, p[1] the element offset, p[2], p[3] the key,
// p[4], p[5] the first word's index (low, high; a multiple of 4), p[6]
// the op:
//   0: bernoulli_(p): words first + 2i (high) and + 2i + 1 (low) make v;
//      1 where v's low 53 bits are below the threshold ceil(p 2^53)
//      (p[7] its bits 32..52, p[8] its low word; 2^53 itself, for p = 1,
//      as p[7] = 0x200000), else 0: the CPU's double(v & (2^53 - 1)) 2^-53
//      < p, in integers.
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { float out_[]; };

uvec4 philox(uvec4 ctr, uvec2 key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key += uvec2(0x9E3779B9u, 0xBB67AE85u);
    }
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, ctr.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, ctr.z, hi1, lo1);
    ctr = uvec4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
  }
  return ctr;
}

void main() {
  const uint n = uint(p[0]);
  const uvec2 key = uvec2(uint(p[2]), uint(p[3]));
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    // Word first + 2i: block (first >> 2) + (i >> 1), lanes 2 (i & 1) and
    // the next, with the 64-bit block index carried into the high word.
    const uint blocks_lo = (uint(p[4]) >> 2) | (uint(p[5]) << 30);
    const uint blocks_hi = uint(p[5]) >> 2;
    uint carry;
    const uint block_lo = uaddCarry(blocks_lo, i >> 1, carry);
    const uvec4 w = philox(uvec4(block_lo, blocks_hi + carry, 0u, 0u), key);
    const uint hi = (i & 1u) == 0u ? w.x : w.z;
    const uint lo = (i & 1u) == 0u ? w.y : w.w;
    const uint v_hi = hi & 0x1FFFFFu;
    const uint t_hi = uint(p[7]), t_lo = uint(p[8]);
    const bool below = v_hi < t_hi || (v_hi == t_hi && lo < t_lo);
    out_[uint(p[1]) + i] = below ? 1.0 : 0.0;
  }
}
