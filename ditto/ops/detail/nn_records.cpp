#include "ditto/ops/detail/nn_records.h"

namespace ditto::detail {

std::vector<NondeterministicPath> pad_backward_paths() {
  const char* reason =
      "adds the output gradient into the input gradient with index_add_ "
      "(see its entry)";
  std::vector<NondeterministicPath> out;
  for (const char* kind : {"reflection", "replication"}) {
    for (const char* d : {"1d", "2d", "3d"}) {
      out.push_back(
          {.entry = std::string(kind) + "_pad" + d + "_backward",
           .reason = reason});
    }
  }
  return out;
}

namespace {

namespace s = detail::samples;

// Note [Plane scatters] in scatter_engine.h.
const char* kPlanes =
    "with fewer N x C planes than threads, the fast variant splits each "
    "plane's output positions between threads, which add into the input "
    "gradient with atomic adds in whatever order they get there (with as "
    "many planes as threads or more it runs the deterministic loop)";

} // namespace

NondeterministicPath plane_path(const char* entry, std::string cost) {
  return {.entry = entry, .reason = kPlanes, .cost = std::move(cost)};
}

PoolInputs pool_inputs(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  return {
      s::varied(
          {s::size(spec, 4, 1),
           s::size(spec, 8, 2),
           s::size(spec, 61, 5),
           s::size(spec, 53, 5)},
          dt,
          8.0,
          1),
      s::varied(
          {s::size(spec, 6, 2), s::size(spec, 37, 4), s::size(spec, 43, 5)},
          dt,
          8.0,
          2),
      s::varied(
          {1, 1, s::size(spec, 151, 6), s::size(spec, 149, 5)}, dt, 8.0, 3),
  };
}

std::vector<Sample> pool_bad_samples(s::Fn1 fn) {
  return {
      s::undefined_input(s::call1(fn), 1),
      {"2d_input", {s::varied({5, 5}, kFloat32, 2.0, 1)}, s::call1(fn)},
      {"integer_input",
       {s::varied({1, 2, 5, 5}, kInt64, 20.0, 1)},
       s::call1(fn)},
      {"empty_plane",
       {s::varied({1, 2, 0, 5}, kFloat32, 1.0, 1)},
       s::call1(fn)},
  };
}

} // namespace ditto::detail
