#pragma once

// Internal: what the random ops share (random.cpp, multinomial.cpp).

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "ditto/random/generator.h"
#include "ditto/random/generator_impl.h"

namespace ditto::detail {

// PyTorch's uniform on [0, 1) from one draw (float) or two (double): the
// low `digits` bits, scaled.
template <typename T>
T uniform01(GeneratorImpl& g) {
  constexpr int kDigits = std::numeric_limits<T>::digits;
  constexpr uint64_t kMask = (uint64_t(1) << kDigits) - 1;
  const T scale = T(1) / T(uint64_t(1) << kDigits);
  uint64_t v = std::is_same_v<T, double> ? g.random64() : g.random();
  return T(v & kMask) * scale;
}

// The generator a draw uses: gen, or the default one (held in hold).
inline GeneratorImpl& resolve(
    const std::optional<Generator>& gen,
    Generator& hold) {
  hold = gen ? *gen : default_generator();
  return *hold.impl();
}

} // namespace ditto::detail
