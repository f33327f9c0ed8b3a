#pragma once

#include <array>
#include <cstdint>

#include "ditto/core/api.h"

namespace ditto::random {

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC11): a counter-based generator. Four 32-bit words come from a
// 128-bit counter and a 64-bit key alone, so any element of a stream can be
// computed without the ones before it. Checked against Random123's
// known-answer vectors.
using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

inline PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    uint64_t p0 = uint64_t(kM0) * ctr[0];
    uint64_t p1 = uint64_t(kM1) * ctr[2];
    ctr = {
        uint32_t(p1 >> 32) ^ ctr[1] ^ key[0],
        uint32_t(p1),
        uint32_t(p0 >> 32) ^ ctr[3] ^ key[1],
        uint32_t(p0)};
  }
  return ctr;
}

// Word i of the stream with this key: block i / 4 (the counter holds the
// 64-bit block index in its low words), lane i % 4.
inline uint32_t philox_word(PhiloxKey key, uint64_t i) {
  uint64_t block = i >> 2;
  PhiloxCounter c =
      philox4x32_10({uint32_t(block), uint32_t(block >> 32), 0u, 0u}, key);
  return c[i & 3];
}

} // namespace ditto::random
