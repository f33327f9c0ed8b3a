#pragma once

// Internal: what a Generator handle points at. Not installed.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/random/mt19937.h"
#include "ditto/random/philox.h"

namespace ditto {

class GeneratorImpl {
 public:
  virtual ~GeneratorImpl() = default;

  // One 32-bit draw. Not virtual for mt19937: fills call it per element.
  uint32_t random() {
    return mt_ != nullptr ? (*mt_)() : random_impl();
  }
  // Two draws, the first one the high half (as PyTorch's random64()).
  uint64_t random64() {
    uint64_t hi = random();
    return (hi << 32) | random();
  }
  virtual void set_current_seed(uint64_t seed) = 0;
  virtual uint64_t current_seed() const = 0;
  virtual std::vector<uint8_t> state_bytes() const = 0;
  virtual void set_state_bytes(const uint8_t* p, size_t n) = 0;
  virtual std::shared_ptr<GeneratorImpl> clone() const = 0;
  // Counter-based generators can hand out a range of words up front, which
  // parallel kernels then compute independently; others return nothing.
  virtual random::PhiloxKey* philox_key() {
    return nullptr;
  }
  // Reserves n words and returns the index of the first (Philox only).
  virtual uint64_t reserve(uint64_t) {
    return 0;
  }

  // Held by every op for its whole fill: fills are serial per generator and
  // concurrent use never corrupts the state.
  std::mutex mutex;
  // The cached second Box-Muller sample (PyTorch keeps the double one).
  std::optional<double> next_double_normal;
  std::optional<float> next_float_normal;

 protected:
  virtual uint32_t random_impl() = 0;
  // Set by an mt19937 generator to its engine.
  random::MT19937* mt_ = nullptr;
};

// PyTorch's CPUGeneratorImpl: mt19937 plus the normal caches.
class CPUGeneratorImpl final : public GeneratorImpl {
 public:
  explicit CPUGeneratorImpl(uint64_t seed) : engine_(seed) {
    mt_ = &engine_;
  }

  void set_current_seed(uint64_t seed) override {
    next_double_normal.reset();
    next_float_normal.reset();
    engine_.seed_engine(seed);
  }
  uint64_t current_seed() const override {
    return engine_.seed();
  }
  std::vector<uint8_t> state_bytes() const override;
  void set_state_bytes(const uint8_t* p, size_t n) override;
  std::shared_ptr<GeneratorImpl> clone() const override;

 private:
  uint32_t random_impl() override {
    return engine_();
  }

  random::MT19937 engine_;
};

// Philox4x32-10 keyed by the seed; its position is a word index, so state
// is (seed, position) and any word is computed directly.
class PhiloxGeneratorImpl final : public GeneratorImpl {
 public:
  explicit PhiloxGeneratorImpl(uint64_t seed) {
    set_current_seed(seed);
  }

  void set_current_seed(uint64_t seed) override {
    next_double_normal.reset();
    next_float_normal.reset();
    seed_ = seed;
    key_ = {uint32_t(seed), uint32_t(seed >> 32)};
    pos_ = 0;
  }
  uint64_t current_seed() const override {
    return seed_;
  }
  std::vector<uint8_t> state_bytes() const override;
  void set_state_bytes(const uint8_t* p, size_t n) override;
  std::shared_ptr<GeneratorImpl> clone() const override;
  random::PhiloxKey* philox_key() override {
    return &key_;
  }
  uint64_t reserve(uint64_t n) override {
    // The stream has 2^64 words: a position that would pass its end (a
    // state set near it) is an error, not a wrap to the stream's start.
    check_room(n);
    uint64_t first = (pos_ + 3) & ~uint64_t(3); // start on a block
    // Keep later draws on a fresh block, so a fill's size never shifts the
    // lanes of what follows.
    pos_ = (first + n + 3) & ~uint64_t(3);
    return first;
  }

 private:
  static constexpr uint64_t kEnd = ~uint64_t(0) - 3;
  void check_room(uint64_t n) const {
    DITTO_CHECK(
        pos_ <= kEnd && ((pos_ + 3) & ~uint64_t(3)) <= kEnd - n,
        ValueError,
        "Generator",
        "the Philox stream's position ",
        pos_,
        " plus ",
        n,
        " words passes its end (2^64 - 4 words); reseed the generator "
        "(manual_seed) or set a state further back");
  }
  uint32_t random_impl() override {
    check_room(1);
    return random::philox_word(key_, pos_++);
  }

  uint64_t seed_ = 0;
  random::PhiloxKey key_{};
  uint64_t pos_ = 0;
};

} // namespace ditto
