#pragma once

// Internal: what a Generator handle points at. Not installed.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ditto/random/mt19937.h"

namespace ditto {

class GeneratorImpl {
 public:
  virtual ~GeneratorImpl() = default;

  virtual uint32_t random() = 0;
  // Two draws, the first one the high half (as PyTorch's random64()).
  virtual uint64_t random64() = 0;
  virtual void set_current_seed(uint64_t seed) = 0;
  virtual uint64_t current_seed() const = 0;
  virtual std::vector<uint8_t> state_bytes() const = 0;
  virtual void set_state_bytes(const uint8_t* p, size_t n) = 0;
  virtual std::shared_ptr<GeneratorImpl> clone() const = 0;

  // Held by every op for its whole fill: fills are serial per generator and
  // concurrent use never corrupts the state.
  std::mutex mutex;
  // The cached second Box-Muller sample (PyTorch keeps the double one).
  std::optional<double> next_double_normal;
  std::optional<float> next_float_normal;
};

// PyTorch's CPUGeneratorImpl: mt19937 plus the normal caches.
class CPUGeneratorImpl final : public GeneratorImpl {
 public:
  explicit CPUGeneratorImpl(uint64_t seed) : engine_(seed) {}

  uint32_t random() override {
    return engine_();
  }
  uint64_t random64() override {
    uint64_t hi = engine_();
    uint64_t lo = engine_();
    return (hi << 32) | lo;
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
  random::MT19937 engine_;
};

} // namespace ditto
