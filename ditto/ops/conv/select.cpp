// Choosing a convolution algorithm: the heuristic, benchmarking with its
// per-process choices, forced algorithms, and the backends::conv switches.
// The tuning cache file is in tuning_cache.cpp.

#include <chrono>
#include <map>
#include <mutex>
#include <sstream>

#include "ditto/determinism/context.h"
#include "ditto/kernels/device_kernels.h"
#include "ditto/ops/detail/conv/algorithms.h"
#include "ditto/ops/detail/op_util.h"

namespace ditto::detail::conv {

const std::vector<Algo>& algorithms(Dir d) {
  return d == kForward      ? forward_algorithms()
      : d == kBackwardInput ? backward_input_algorithms()
                            : backward_weight_algorithms();
}

const Algo* find_algorithm(Dir d, std::string_view name) {
  for (const Algo& a : algorithms(d)) {
    if (name == a.name) {
      return &a;
    }
  }
  return nullptr;
}

const Algo& algorithm(Dir d, std::string_view name) {
  const Algo* a = find_algorithm(d, name);
  DITTO_ASSERT(a != nullptr);
  return *a;
}

State& state() {
  static State s;
  return s;
}

namespace {

thread_local backends::conv::Choice tls_last;

std::string key_of(Dir d, const Geom& g, bool det) {
  std::ostringstream k;
  k << kDirNames[d] << "|" << dtype_name(g.dtype) << "|in=" << g.n << "x" << g.c
    << "x" << g.h << "x" << g.w << "|w=" << g.o << "x" << g.cg << "x" << g.kh
    << "x" << g.kw << "|s=" << g.sh << "," << g.sw << "|p=" << g.ph << ","
    << g.pw << "|d=" << g.dh << "," << g.dw << "|g=" << g.groups
    << "|t=" << get_num_threads() << "|det=" << (det ? 1 : 0);
  return k.str();
}

// The heuristic: from the shapes and dtype only.
const Algo& heuristic(Dir d, const Geom& g) {
  if (d == kForward) {
    // Tiny reductions gain nothing from packing.
    return algorithm(d, g.kk() <= 4 ? "direct" : "im2col_gemm");
  }
  if (d == kBackwardInput) {
    // The implicit GEMM has cg rows: with a register tile's worth, it beats
    // the column GEMM and its scatter-add (see
    // bench/log/2026-11-22-mm-conv-after-conv-work.md).
    const bool direct = bwi_implicit_applies(g) && g.cg >= 8;
    return algorithm(d, direct ? "direct" : "gemm_col2im");
  }
  return algorithm(d, "gemm_chunked"); // deterministic
}

// Note [Convolutions on a device]
// A Vulkan device runs the algorithm the CPU would choose without timing
// (the heuristic, or the forced one), each output the same chain of fma as
// that algorithm's (the device's conv2d slot), so it gives the CPU's bits.
// Benchmarking has nothing to choose from there yet: it takes the
// heuristic's choice. A forced algorithm the device lacks (winograd)
// raises NotImplementedError; the weight gradient's nondeterministic "fast"
// one alerts first, naming the device op.
std::string device_dispatch(
    Dir d,
    const Geom& g,
    const Tensor& a,
    const Tensor& b,
    Tensor& out,
    const char* op,
    const std::string& forced) {
  const Algo& al = forced.empty() ? heuristic(d, g) : algorithm(d, forced);
  const std::string_view name = al.name;
  using kernels::ConvKernel;
  ConvKernel kernel{};
  bool has = true;
  if (d == kForward) {
    has = name == "direct" || name == "im2col_gemm";
    kernel = ConvKernel::Forward;
  } else if (d == kBackwardInput) {
    kernel =
        name == "direct" ? ConvKernel::InputDirect : ConvKernel::InputCol2im;
  } else {
    has = name == "gemm_chunked" || name == "fast";
    kernel =
        name == "fast" ? ConvKernel::WeightFast : ConvKernel::WeightChunked;
  }
  DITTO_CHECK(
      has,
      NotImplementedError,
      op,
      "the ",
      kDirNames[d],
      " algorithm ",
      name,
      " has no kernel on ",
      out.device(),
      " yet");
  DITTO_CHECK(
      al.applies(g),
      ValueError,
      op,
      "the forced algorithm ",
      name,
      " does not apply to these shapes");
  if (!al.deterministic) {
    // The alert names the device op (raises or warns with determinism on).
    alert_not_deterministic(
        detail::str_cat(op, " (", name, ") on ", out.device()));
  }
  kernels::device_kernels(out, op).conv2d(
      kernel, g, samples_per_chunk(g), out, a, b, op);
  return std::string(name);
}

template <typename T>
void run_algo(const Algo& a, const Geom& g, const T* x, const T* y, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    a.f32(g, x, y, out);
  } else {
    a.f64(g, x, y, out);
  }
}

} // namespace

// Chooses and runs the algorithm for direction d; out is the contiguous
// result tensor (written by the run).
void dispatch(
    Dir d,
    const Geom& g,
    const Tensor& a,
    const Tensor& b,
    Tensor& out,
    const char* op) {
  State& s = state();
  const bool det =
      are_deterministic_algorithms_enabled() || backends::conv::deterministic();
  std::string forced;
  bool bench, replay;
  int limit;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    forced = s.forced[d];
    bench = s.benchmark;
    replay = s.replay_only;
    limit = s.limit;
  }
  const auto& list = algorithms(d);
  auto find = [&](const std::string& name) { return find_algorithm(d, name); };
  backends::conv::Choice choice;
  choice.direction = kDirNames[d];
  if (!out.is_cpu()) {
    choice.algorithm = device_dispatch(d, g, a, b, out, op, forced);
    choice.source = backends::conv::ChoiceSource::Heuristic;
    tls_last = choice;
    return;
  }
  dispatch_dtype(g.dtype, op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pa = a.data_ptr<T>();
      const T* pb = b.data_ptr<T>();
      T* po = out.data_ptr<T>();
      if (!forced.empty()) {
        const Algo* al = find(forced);
        DITTO_CHECK(
            al->applies(g),
            ValueError,
            op,
            "the forced algorithm ",
            forced,
            " does not apply to these shapes");
        if (!al->deterministic) {
          alert_not_deterministic(detail::str_cat(op, " (", forced, ")"));
        }
        run_algo<T>(*al, g, pa, pb, po);
        choice.algorithm = al->name;
        choice.source = backends::conv::ChoiceSource::Heuristic;
        return;
      }
      if (!bench) {
        const Algo& al = heuristic(d, g);
        run_algo<T>(al, g, pa, pb, po);
        choice.algorithm = al.name;
        choice.source = backends::conv::ChoiceSource::Heuristic;
        return;
      }
      const std::string key = key_of(d, g, det);
      std::string known;
      backends::conv::ChoiceSource source =
          backends::conv::ChoiceSource::Cached;
      {
        std::lock_guard<std::mutex> lock(s.mu);
        if (det && !s.warned_benchmark_determinism) {
          s.warned_benchmark_determinism = true;
          determinism::warn(
              "conv (benchmark)",
              "backends::conv::benchmark is on with deterministic algorithms: "
              "timing may pick a different deterministic algorithm on the "
              "next run, which rounds differently. Save the choices with "
              "backends::conv::save_tuning_cache and replay them "
              "(load_tuning_cache + replay_only) for the same bits.");
        }
        if (replay && s.loaded.count(key)) {
          known = s.loaded[key];
          source = backends::conv::ChoiceSource::Replayed;
        } else if (s.timed.count(key)) {
          known = s.timed[key];
        }
      }
      const Algo* cached = known.empty() ? nullptr : find(known);
      if (cached && (!cached->applies(g) || (det && !cached->deterministic))) {
        cached = nullptr; // an edited or stale cache entry: time instead
      }
      if (const Algo* al = cached) {
        run_algo<T>(*al, g, pa, pb, po);
        choice.algorithm = al->name;
        choice.source = source;
        return;
      }
      // Time the candidates on this call's data; the fastest's output
      // stays in out.
      std::vector<T> best_out;
      double best = 1e300;
      const Algo* winner = nullptr;
      int timed = 0;
      std::vector<T> scratch(size_t(out.numel()));
      for (const Algo& al : list) {
        if ((det && !al.deterministic) || !al.applies(g) ||
            (limit > 0 && timed >= limit)) {
          continue;
        }
        ++timed;
        auto t0 = std::chrono::steady_clock::now();
        run_algo<T>(al, g, pa, pb, scratch.data());
        const double dt =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count();
        if (dt < best) {
          best = dt;
          winner = &al;
          best_out = scratch;
        }
      }
      std::copy(best_out.begin(), best_out.end(), po);
      {
        std::lock_guard<std::mutex> lock(s.mu);
        s.timed[key] = winner->name;
      }
      choice.algorithm = winner->name;
      choice.source = backends::conv::ChoiceSource::Timed;
    }
  });
  tls_last = choice;
}

} // namespace ditto::detail::conv

namespace ditto {

using detail::conv::Algo;
using detail::conv::algorithms;
using detail::conv::Dir;
using detail::conv::kDirNames;
using detail::conv::State;
using detail::conv::state;
using detail::conv::tls_last;

namespace backends::conv {

namespace {

// The flags live in State, read and written under its mutex.
template <typename V>
void set_flag(V State::*field, V value) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().*field = value;
}

template <typename V>
V get_flag(V State::*field) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().*field;
}

} // namespace

void benchmark(bool on) {
  set_flag(&State::benchmark, on);
}
bool benchmark() {
  return get_flag(&State::benchmark);
}
void deterministic(bool on) {
  set_flag(&State::deterministic, on);
}
bool deterministic() {
  return get_flag(&State::deterministic);
}
void benchmark_limit(int limit) {
  DITTO_CHECK(
      limit >= 0,
      ValueError,
      "backends::conv::benchmark_limit",
      "expected a limit >= 0, got ",
      limit);
  set_flag(&State::limit, limit);
}
int benchmark_limit() {
  return get_flag(&State::limit);
}
void replay_only(bool on) {
  set_flag(&State::replay_only, on);
}
bool replay_only() {
  return get_flag(&State::replay_only);
}

Choice last_choice() {
  return tls_last;
}

const char* choice_source_name(ChoiceSource s) {
  switch (s) {
    case ChoiceSource::Heuristic:
      return "heuristic";
    case ChoiceSource::Timed:
      return "timed";
    case ChoiceSource::Cached:
      return "cached";
    case ChoiceSource::Replayed:
      return "replayed";
  }
  return "?";
}

void force_algorithm(
    const std::string& direction,
    const std::string& algorithm) {
  const char* op = "backends::conv::force_algorithm";
  int d = -1;
  for (int k = 0; k < 3; ++k) {
    if (direction == kDirNames[k]) {
      d = k;
    }
  }
  DITTO_CHECK(
      d >= 0,
      ValueError,
      op,
      "unknown direction '",
      direction,
      "' (forward, backward_input, backward_weight)");
  bool known = algorithm.empty();
  std::string names;
  for (const Algo& a : algorithms(Dir(d))) {
    known = known || algorithm == a.name;
    names += std::string(names.empty() ? "" : ", ") + a.name;
  }
  DITTO_CHECK(
      known,
      ValueError,
      op,
      "unknown ",
      direction,
      " algorithm '",
      algorithm,
      "' (",
      names,
      ")");
  std::lock_guard<std::mutex> lock(state().mu);
  state().forced[d] = algorithm;
}

} // namespace backends::conv
} // namespace ditto
