#pragma once

// The Generator handle and the default generators. Random state is a
// random/ concept and lives here whole: the handle, its definition
// (generator.cpp) and the engines behind it. The layers point one way:
// ditto/core/ includes nothing outside core/ (tensor.h only names
// `class Generator;` for the random-fill methods, whose definitions are in
// ditto/ops/random/random.cpp), and random/ builds on core.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "ditto/core/api.h"
#include "ditto/core/device.h"

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

// The current thread's default generator: the innermost GeneratorGuard's,
// else the process-wide default CPU generator. The process default starts
// from DITTO_SEED if set, else from the OS; initial_seed() always tells.
DITTO_API Generator default_generator();

// The generator a random op on `device` draws from when it is given none:
// the innermost GeneratorGuard's, else the CPU's default generator for the
// CPU and, for a Vulkan device, that device's default generator: a Philox
// stream (Generator::philox, as PyTorch's CUDA generators are Philox),
// seeded with kDefaultGeneratorSeed until manual_seed.
DITTO_API Generator default_generator(Device device);
// The device's own default generator whatever the guards (the process-wide
// default CPU generator for kCPU), as torch.cuda.default_generators[i].
DITTO_API Generator device_generator(Device device);
// As torch.manual_seed: seeds the default generator of every device for
// the current thread (a GeneratorGuard's generator inside its scope, and
// the devices' Philox generators, which get_state/set_state through
// default_generator(device)).
DITTO_API void manual_seed(uint64_t seed);
DITTO_API uint64_t initial_seed();
DITTO_API uint64_t seed();
DITTO_API Tensor get_rng_state();
DITTO_API void set_rng_state(const Tensor& state);

// Within its scope, g is the current thread's default generator.
class DITTO_API GeneratorGuard {
 public:
  explicit GeneratorGuard(Generator g);
  ~GeneratorGuard();
  GeneratorGuard(const GeneratorGuard&) = delete;
  GeneratorGuard& operator=(const GeneratorGuard&) = delete;

 private:
  std::optional<Generator> previous_;
};

// Saves the current default generator's state and restores it at the end of
// the scope (torch.random.fork_rng).
class DITTO_API ForkRng {
 public:
  ForkRng();
  ~ForkRng();
  ForkRng(const ForkRng&) = delete;
  ForkRng& operator=(const ForkRng&) = delete;

 private:
  Generator generator_;
  std::shared_ptr<GeneratorImpl> saved_;
};

} // namespace ditto
