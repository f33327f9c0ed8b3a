#include "ditto/random/streams.h"

#include <cstdlib>
#include <mutex>

#include "ditto/core/error.h"
#include "ditto/random/generator_impl.h"
#include "ditto/random/philox.h"

namespace ditto {
namespace detail {
// Bumped by ditto::manual_seed (generator.cpp): named streams re-derive.
uint64_t seed_epoch();
Generator process_default_generator();
} // namespace detail

namespace random {

uint64_t derive_seed(uint64_t root, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a 64
  for (unsigned char c : name) {
    h = (h ^ c) * 0x100000001b3ull;
  }
  PhiloxCounter out = philox4x32_10(
      {uint32_t(h), uint32_t(h >> 32), 0x5eedu, uint32_t(name.size())},
      {uint32_t(root), uint32_t(root >> 32)});
  return (uint64_t(out[0]) << 32) | out[1];
}

namespace {
struct Stream {
  Generator gen;
  uint64_t epoch;
};
std::mutex g_streams_mu;
std::map<std::string, Stream, std::less<>> g_streams;

// The process default, not a worker's guard generator.
Generator process_default_for_streams() {
  return detail::process_default_generator();
}
} // namespace

Generator stream(std::string_view name) {
  DITTO_CHECK(!name.empty(), ValueError, "stream", "empty stream name");
  uint64_t epoch = detail::seed_epoch();
  std::lock_guard<std::mutex> lock(g_streams_mu);
  auto it = g_streams.find(name);
  uint64_t root = process_default_for_streams().initial_seed();
  if (it == g_streams.end()) {
    it = g_streams
             .emplace(
                 std::string(name),
                 Stream{Generator::philox(derive_seed(root, name)), epoch})
             .first;
  } else if (it->second.epoch != epoch) {
    it->second.gen.manual_seed(derive_seed(root, name));
    it->second.epoch = epoch;
  }
  return it->second.gen;
}

std::vector<std::string> stream_names() {
  std::lock_guard<std::mutex> lock(g_streams_mu);
  std::vector<std::string> names;
  for (const auto& [name, s] : g_streams) {
    names.push_back(name);
  }
  return names;
}

} // namespace random

namespace {
std::mutex g_ext_mu;
std::map<std::string, ExternalGenerator> g_external;
} // namespace

void register_generator(
    const std::string& name,
    std::function<void(uint64_t)> seed_fn,
    std::function<std::vector<uint8_t>()> get_state_fn,
    std::function<void(const std::vector<uint8_t>&)> set_state_fn) {
  DITTO_CHECK(
      !name.empty(), ValueError, "register_generator", "empty generator name");
  DITTO_CHECK(
      bool(seed_fn),
      ValueError,
      "register_generator",
      "generator '",
      name,
      "' needs a seed function");
  DITTO_CHECK(
      bool(get_state_fn) == bool(set_state_fn),
      ValueError,
      "register_generator",
      "generator '",
      name,
      "' needs both get_state and set_state, or neither");
  std::lock_guard<std::mutex> lock(g_ext_mu);
  g_external[name] = ExternalGenerator{
      std::move(seed_fn), std::move(get_state_fn), std::move(set_state_fn)};
}

void unregister_generator(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_ext_mu);
  g_external.erase(name);
}

void seed_everything(uint64_t s) {
  manual_seed(s);
  std::map<std::string, ExternalGenerator> gens;
  {
    std::lock_guard<std::mutex> lock(g_ext_mu);
    gens = g_external;
  }
  for (auto& [name, g] : gens) {
    g.seed(random::derive_seed(s, name));
  }
  std::srand(uint32_t(random::derive_seed(s, "srand")));
}

std::map<std::string, std::vector<uint8_t>> registered_generator_states() {
  std::map<std::string, ExternalGenerator> gens;
  {
    std::lock_guard<std::mutex> lock(g_ext_mu);
    gens = g_external;
  }
  std::map<std::string, std::vector<uint8_t>> out;
  for (auto& [name, g] : gens) {
    if (g.get_state) {
      out[name] = g.get_state();
    }
  }
  return out;
}

void set_registered_generator_states(
    const std::map<std::string, std::vector<uint8_t>>& states) {
  std::map<std::string, ExternalGenerator> gens;
  {
    std::lock_guard<std::mutex> lock(g_ext_mu);
    gens = g_external;
  }
  // Check every name first, so a bad map changes nothing.
  for (auto& [name, bytes] : states) {
    auto it = gens.find(name);
    DITTO_CHECK(
        it != gens.end() && it->second.set_state,
        ValueError,
        "set_registered_generator_states",
        "no registered generator '",
        name,
        "' with a set_state function");
  }
  for (auto& [name, bytes] : states) {
    gens[name].set_state(bytes);
  }
}

} // namespace ditto
