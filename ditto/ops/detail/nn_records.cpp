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

NdInputs nd_inputs(const SampleSpec& spec, int n) {
  const Dtype dt = spec.dtype;
  if (n == 2) {
    PoolInputs p = pool_inputs(spec);
    return {p.x, p.x3, p.plane};
  }
  if (n == 1) {
    return {
        s::varied(
            {s::size(spec, 4, 1), s::size(spec, 8, 2), s::size(spec, 301, 9)},
            dt,
            8.0,
            1),
        s::varied({s::size(spec, 6, 2), s::size(spec, 97, 7)}, dt, 8.0, 2),
        s::varied({1, 1, s::size(spec, 40001, 11)}, dt, 8.0, 3),
    };
  }
  return {
      s::varied(
          {s::size(spec, 2, 1),
           s::size(spec, 3, 2),
           s::size(spec, 9, 3),
           s::size(spec, 10, 4),
           s::size(spec, 11, 5)},
          dt,
          8.0,
          1),
      s::varied(
          {s::size(spec, 2, 1),
           s::size(spec, 7, 3),
           s::size(spec, 6, 4),
           s::size(spec, 8, 3)},
          dt,
          8.0,
          2),
      s::varied(
          {1,
           1,
           s::size(spec, 12, 4),
           s::size(spec, 13, 4),
           s::size(spec, 14, 3)},
          dt,
          8.0,
          3),
  };
}

// The bad calls of an n-d pooling op: pool_bad_samples' with inputs of its
// rank.
std::vector<Sample> nd_bad_samples(int n, s::Fn1 fn) {
  Shape ok(size_t(n + 2), 4), empty(size_t(n + 2), 4), flat(size_t(n), 5);
  empty.back() = 0;
  return {
      s::undefined_input(s::call1(fn), 1),
      {"too_few_dims", {s::varied(flat, kFloat32, 2.0, 1)}, s::call1(fn)},
      {"integer_input", {s::varied(ok, kInt64, 20.0, 1)}, s::call1(fn)},
      {"empty_plane", {s::varied(empty, kFloat32, 1.0, 1)}, s::call1(fn)},
  };
}

NondeterministicPath max_pool_backward_path(int n) {
  return n == 3 ? plane_path("max_pool3d_backward")
                : plane_path(
                      "max_pool2d_backward",
                      "1.06x the fast variant's time (32 x 64 x 56 x 56, 2 "
                      "threads)");
}

} // namespace ditto::detail
