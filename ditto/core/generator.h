#pragma once

// The Generator handle, in core so that a Tensor's random-fill methods can
// take one. The engines behind it (mt19937, Philox), the default generators
// and the seeding API are in ditto/random/.

#include <cstdint>
#include <memory>

#include "ditto/core/api.h"

namespace ditto {

class Tensor;
class GeneratorImpl;

// PyTorch's default seed of a new Generator (c10 default_rng_seed_val).
inline constexpr uint64_t kDefaultGeneratorSeed = 67280421310721ull;

// A handle on a random-number generator. Copies share the generator (as
// torch.Generator objects do); clone() copies its state. Random ops take an
// optional Generator; without one they use the current thread's default
// generator (see GeneratorGuard).
class DITTO_API Generator {
 public:
  // A new CPU mt19937 generator seeded with kDefaultGeneratorSeed, the same
  // stream as torch.Generator().
  Generator();
  explicit Generator(std::shared_ptr<GeneratorImpl> impl);

  // A counter-based Philox4x32-10 generator: element i of a fill depends
  // only on (seed, position, i), so fills run in parallel and give the same
  // bits for any thread count. Not PyTorch's stream.
  static Generator philox(uint64_t seed);
  bool is_philox() const;

  // As torch.Generator.manual_seed: only the low 32 bits reach mt19937, but
  // initial_seed() reports the full value. A negative int64 seed is taken as
  // its two's-complement bits, as PyTorch does.
  Generator& manual_seed(uint64_t seed);
  uint64_t initial_seed() const;
  // Seeds from the OS (/dev/urandom) and returns the seed.
  uint64_t seed();

  // The state as a uint8 tensor; for a CPU mt19937 generator it is the
  // 5056-byte layout of torch.Generator.get_state(), so states move between
  // PyTorch and ditto.
  Tensor get_state() const;
  // ValueError (and the generator unchanged) for a blob of the wrong size
  // or an invalid state.
  Generator& set_state(const Tensor& state);

  Generator clone() const;

  bool operator==(const Generator& other) const {
    return impl_ == other.impl_;
  }
  GeneratorImpl* impl() const {
    return impl_.get();
  }

 private:
  std::shared_ptr<GeneratorImpl> impl_;
};

} // namespace ditto
