#pragma once

#include <string>

#include "ditto/core/shape.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto {

// conv1d, conv2d, conv3d and their backward_input and backward_weight
// are declared in conv/conv.ops.toml (declared.h): LibTorch's signatures
// (bias a std::optional<Tensor>; a size argument of one value serves every
// spatial dim). Their bits do not depend on the algorithm, the thread count
// or the CPU (Note [Convolution algorithms]).

// Algorithm selection, like torch.backends.cudnn (see docs/linalg.md).
namespace backends::conv {

// benchmark off (default): a fixed heuristic picks the algorithm from the
// shapes and dtype. On: the first call for a key (direction, dtype, shapes,
// stride, padding, dilation, groups, thread count, determinism) times up to
// benchmark_limit() candidates and keeps the fastest for later calls.
DITTO_API void benchmark(bool on);
DITTO_API bool benchmark();
// Only deterministic algorithms (also when use_deterministic_algorithms is
// on). Default false.
DITTO_API void deterministic(bool on);
DITTO_API bool deterministic();
// Candidates timed per key (default 10; 0 means all).
DITTO_API void benchmark_limit(int limit);
DITTO_API int benchmark_limit();
// With benchmark on, keys found in a loaded tuning cache are used without
// timing anything.
DITTO_API void replay_only(bool on);
DITTO_API bool replay_only();

// The tuning cache: every choice timed in this process (and loaded ones),
// as versioned JSON with the CPU capability and thread count. save writes
// atomically (ValueError if it cannot); load returns false, reports why
// through the determinism warning handler and changes nothing when the file
// is missing, corrupt, of another version or from another CPU capability.
DITTO_API void save_tuning_cache(const std::string& path);
// The text save_tuning_cache writes.
DITTO_API std::string tuning_cache_json();
DITTO_API bool load_tuning_cache(const std::string& path);
DITTO_API void clear_tuning_cache();

// What the last convolution on this thread ran and how it was chosen.
enum class ChoiceSource { Heuristic, Timed, Cached, Replayed };
struct Choice {
  std::string direction; // "forward", "backward_input", "backward_weight"
  std::string algorithm;
  ChoiceSource source = ChoiceSource::Heuristic;
};
DITTO_API Choice last_choice();
DITTO_API const char* choice_source_name(ChoiceSource s);

// Forces an algorithm by name for a direction (testing and comparisons;
// "" restores the automatic choice). ValueError for an unknown name.
DITTO_API void force_algorithm(
    const std::string& direction,
    const std::string& algorithm);

} // namespace backends::conv

} // namespace ditto
