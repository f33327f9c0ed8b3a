#pragma once

#include <array>
#include <cstdint>

#include "ditto/core/api.h"

namespace ditto::random {

// The 32-bit Mersenne Twister exactly as PyTorch's CPU generator runs it
// (at::mt19937): seeded from the low 32 bits of a 64-bit seed, the full seed
// kept for initial_seed(), the twist done lazily on the first draw. Its
// output equals std::mt19937 seeded with uint32_t(seed).
class DITTO_API MT19937 {
 public:
  static constexpr int kN = 624;

  explicit MT19937(uint64_t seed = 5489) {
    seed_engine(seed);
  }

  void seed_engine(uint64_t seed);

  // Inline: fills call it once per element.
  uint32_t operator()() {
    if (--left_ <= 0) {
      twist();
    }
    uint32_t y = state_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
  }

  uint64_t seed() const {
    return seed_;
  }

  // The raw state, as PyTorch's get_rng_state() lays it out.
  struct State {
    uint64_t seed = 0;
    int32_t left = 1;
    bool seeded = false;
    uint32_t next = 0;
    std::array<uint32_t, kN> words{};
  };
  State state() const;
  // Throws ValueError (naming op) unless seeded, 0 < left <= 624 and
  // next <= 624, as PyTorch checks.
  void set_state(const State& s, const char* op);

 private:
  void twist();

  uint64_t seed_ = 0;
  int32_t left_ = 1;
  bool seeded_ = false;
  uint32_t next_ = 0;
  std::array<uint32_t, kN> state_{};
};

} // namespace ditto::random
