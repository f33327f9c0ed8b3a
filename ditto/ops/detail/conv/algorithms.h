#pragma once

// Internal to the convolutions: the algorithms of each direction, found by
// name, and the dispatch that chooses one (backends::conv: heuristic,
// benchmark, tuning cache). Not installed.

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/ops/conv.h"
#include "ditto/ops/detail/conv/geometry.h"

namespace ditto::detail::conv {

// An algorithm: out = f(a, b) with a, b, out contiguous of the direction's
// layout (forward: x, w -> y; backward input: grad_out, w -> grad_in;
// backward weight: grad_out, x -> grad_w).
struct Algo {
  const char* name;
  bool deterministic;
  bool (*applies)(const Geom&);
  void (*f32)(const Geom&, const float*, const float*, float*);
  void (*f64)(const Geom&, const double*, const double*, double*);
};

inline bool always(const Geom&) {
  return true;
}

// Each direction's algorithms (forward.cpp, backward_input.cpp,
// backward_weight.cpp), in the order benchmarking tries them.
const std::vector<Algo>& forward_algorithms();
const std::vector<Algo>& backward_input_algorithms();
const std::vector<Algo>& backward_weight_algorithms();
const std::vector<Algo>& algorithms(Dir d);
// The algorithm of d named name, or null.
const Algo* find_algorithm(Dir d, std::string_view name);
// The algorithm of d named name; InternalError if there is none.
const Algo& algorithm(Dir d, std::string_view name);

// Whether the input gradient's implicit GEMM applies (the heuristic's
// choice between the two input-gradient algorithms).
bool bwi_implicit_applies(const Geom& g);

// Samples per chunk of the weight gradient's deterministic algorithm
// (gemm_chunked), from the shapes only.
int64_t samples_per_chunk(const Geom& g);

// Chooses and runs the algorithm for direction d (select.cpp); out is the
// contiguous result tensor, written by the run.
void dispatch(
    Dir d,
    const Geom& g,
    const Tensor& a,
    const Tensor& b,
    Tensor& out,
    const char* op);

// The selection state behind backends::conv, read and written under mu.
struct State {
  std::mutex mu;
  bool benchmark = false, deterministic = false, replay_only = false;
  int limit = 10;
  std::map<std::string, std::string> timed; // chosen in this process
  std::map<std::string, std::string> loaded; // from a tuning cache file
  std::string forced[3];
  bool warned_benchmark_determinism = false;
};
State& state();

} // namespace ditto::detail::conv
