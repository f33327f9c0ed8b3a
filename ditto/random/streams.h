#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/random/generator.h"

namespace ditto::random {

// A 64-bit seed derived from a root seed and a name: Philox4x32-10 of the
// name's FNV-1a hash, keyed by the root. Fixed forever (documented in
// docs/randomness.md); no std::hash, whose values differ between libraries.
DITTO_API uint64_t derive_seed(uint64_t root, std::string_view name);

// A named stream: a Philox generator keyed by derive_seed(initial seed of
// the process default generator, name). Every ditto::manual_seed re-derives
// it (back to the stream's start), and drawing from one stream never shifts
// another, nor the default generator: adding a validation pass that draws
// elsewhere leaves "dropout" untouched. The handle is shared: save and
// restore it with get_state/set_state like any generator.
DITTO_API Generator stream(std::string_view name);

// The names of the streams used so far in this process, sorted (what a
// checkpoint saves).
DITTO_API std::vector<std::string> stream_names();

} // namespace ditto::random

namespace ditto {

// Generators of other libraries (the C++ counterpart of Python's random and
// NumPy): seed_everything seeds them with seeds derived from its root and
// their names. See docs/randomness.md for registering a std::mt19937.
struct ExternalGenerator {
  std::function<void(uint64_t)> seed;
  std::function<std::vector<uint8_t>()> get_state;
  std::function<void(const std::vector<uint8_t>&)> set_state;
};

// Registers (or replaces) a generator under name. get_state/set_state may be
// empty when the library has no state to save.
DITTO_API void register_generator(
    const std::string& name,
    std::function<void(uint64_t)> seed_fn,
    std::function<std::vector<uint8_t>()> get_state_fn = {},
    std::function<void(const std::vector<uint8_t>&)> set_state_fn = {});
DITTO_API void unregister_generator(const std::string& name);

// manual_seed(s), then every registered generator with
// random::derive_seed(s, name), then C's srand with
// uint32(random::derive_seed(s, "srand")). Named streams follow manual_seed.
DITTO_API void seed_everything(uint64_t s);

// The states of the registered generators that can give one, by name, and
// their restoration (for checkpoints).
DITTO_API std::map<std::string, std::vector<uint8_t>>
registered_generator_states();
DITTO_API void set_registered_generator_states(
    const std::map<std::string, std::vector<uint8_t>>& states);

} // namespace ditto
