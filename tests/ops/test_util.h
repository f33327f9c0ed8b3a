// Helpers shared by the op tests.

#pragma once

#include <cstring>

#include "ditto/ditto.h"

namespace ditto::test {

// Same dtype, same sizes and the same bytes (of the contiguous values).
inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) {
    return false;
  }
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) == 0;
}

} // namespace ditto::test
