#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "ditto/core/api.h"
#include "ditto/core/generator.h"

namespace ditto {

// The current thread's default generator: the innermost GeneratorGuard's,
// else the process-wide default CPU generator. The process default starts
// from DITTO_SEED if set, else from the OS; initial_seed() always tells.
DITTO_API Generator default_generator();

// As torch.manual_seed: seeds the default generator of every device (CPU
// only today) for the current thread (a GeneratorGuard's generator inside
// its scope).
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
