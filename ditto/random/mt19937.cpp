#include "ditto/random/mt19937.h"

#include "ditto/core/error.h"

namespace ditto::random {
namespace {
constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfu;
constexpr uint32_t kUpper = 0x80000000u;
constexpr uint32_t kLower = 0x7fffffffu;
} // namespace

void MT19937::seed_engine(uint64_t seed) {
  seed_ = seed;
  seeded_ = true;
  state_[0] = uint32_t(seed & 0xffffffffu);
  for (int j = 1; j < kN; ++j) {
    uint32_t prev = state_[j - 1];
    state_[j] = 1812433253u * (prev ^ (prev >> 30)) + uint32_t(j);
  }
  left_ = 1;
  next_ = 0;
}

void MT19937::twist() {
  auto mix = [](uint32_t u, uint32_t v) {
    uint32_t y = (u & kUpper) | (v & kLower);
    return (y >> 1) ^ ((v & 1u) ? kMatrixA : 0u);
  };
  int j = 0;
  for (; j < kN - kM; ++j) {
    state_[j] = state_[j + kM] ^ mix(state_[j], state_[j + 1]);
  }
  for (; j < kN - 1; ++j) {
    state_[j] = state_[j + kM - kN] ^ mix(state_[j], state_[j + 1]);
  }
  state_[kN - 1] = state_[kM - 1] ^ mix(state_[kN - 1], state_[0]);
  left_ = kN;
  next_ = 0;
}

MT19937::State MT19937::state() const {
  State s;
  s.seed = seed_;
  s.left = left_;
  s.seeded = seeded_;
  s.next = next_;
  s.words = state_;
  return s;
}

void MT19937::set_state(const State& s, const char* op) {
  // Every state the engine reaches has left + next == kN + 1 (a draw takes
  // one from left and adds one to next; a twist restarts at kN and 0),
  // except a fresh seed's (left 1, next 0). Anything else would read past
  // the words before the next twist.
  const bool consistent = s.left >= 1 && s.left <= kN &&
      (int64_t(s.left) + int64_t(s.next) == kN + 1 ||
       (s.left == 1 && s.next == 0));
  DITTO_CHECK(
      s.seeded && consistent,
      ValueError,
      op,
      "invalid mt19937 state (seeded ",
      s.seeded,
      ", left ",
      s.left,
      ", next ",
      s.next,
      ")");
  seed_ = s.seed;
  left_ = s.left;
  seeded_ = s.seeded;
  next_ = s.next;
  state_ = s.words;
}

} // namespace ditto::random
