// zlib's CRC-32, what the fixture scripts (gen_nn_golden.py,
// gen_rnn_golden.py) record of a tensor's bytes and of the default
// generator's state.

#pragma once

#include <array>
#include <cstdint>

#include "ditto/ditto.h"

namespace ditto::test {

inline uint32_t crc32(const void* data, size_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) {
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      }
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  }
  return c ^ 0xFFFFFFFFu;
}

// Of t's values in its dtype, in logical order.
inline uint32_t crc_of(const Tensor& t) {
  Tensor c = t.detach().contiguous();
  return crc32(c.raw_data(), size_t(c.numel()) * c.element_size());
}

inline uint32_t rng_crc() {
  return crc_of(default_generator().get_state());
}

} // namespace ditto::test
