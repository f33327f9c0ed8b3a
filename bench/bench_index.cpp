// index_add_ and scatter_add_ of 1M x 64 float32 source values into n
// destination rows (n = 100000: low contention; n = 100: high),
// deterministic variant against the fast one. scatter_add_'s index is the
// index_add_ one repeated along the 64 columns (a contiguous [1M, 64] int64
// tensor, as PyTorch gets it). The "differ" counter is how many output
// elements two runs of the fast variant disagree on: what determinism buys.

#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "ditto/ditto.h"

namespace {

using ditto::Tensor;

struct Inputs {
  Tensor src, index, index2d;
};

const Inputs& inputs(int64_t dest_rows) {
  static std::map<int64_t, Inputs> cache;
  auto it = cache.find(dest_rows);
  if (it == cache.end()) {
    ditto::Generator g = ditto::Generator::philox(1);
    Inputs in;
    in.src = ditto::randn({1 << 20, 64}, ditto::kFloat32, g);
    in.index = ditto::randint(0, dest_rows, {1 << 20}, ditto::kInt64, g);
    in.index2d = in.index.view({1 << 20, 1}).expand({1 << 20, 64}).contiguous();
    it = cache.emplace(dest_rows, in).first;
  }
  return it->second;
}

void run(benchmark::State& state, bool scatter, bool deterministic) {
  const int64_t rows = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  const Inputs& in = inputs(rows);
  auto op = [&](Tensor& out) {
    if (scatter) {
      out.scatter_add_(0, in.index2d, in.src);
    } else {
      out.index_add_(0, in.index, in.src);
    }
  };
  ditto::use_deterministic_algorithms(deterministic);
  if (!deterministic) {
    Tensor a = ditto::zeros({rows, 64});
    Tensor b = ditto::zeros({rows, 64});
    op(a);
    op(b);
    state.counters["differ"] =
        double(ditto::sum(ditto::ne(a, b)).item<int64_t>());
  }
  for (auto _ : state) {
    Tensor out = ditto::zeros({rows, 64});
    op(out);
    benchmark::DoNotOptimize(out);
  }
  ditto::use_deterministic_algorithms(false);
  state.SetBytesProcessed(state.iterations() * (int64_t(1) << 20) * 64 * 4);
}

// empty(n) float32 with the deterministic mode off (no fill) and on (filled
// with NaN, determinism::fill_uninitialized_memory()): the difference is
// what the fill costs.
void run_empty(benchmark::State& state, bool filled) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::use_deterministic_algorithms(filled);
  for (auto _ : state) {
    Tensor t = ditto::empty({n});
    benchmark::DoNotOptimize(t.raw_data());
  }
  ditto::use_deterministic_algorithms(false);
  state.SetBytesProcessed(state.iterations() * n * 4);
}

} // namespace

void register_index_benchmarks() {
  for (bool filled : {false, true}) {
    auto* b = benchmark::RegisterBenchmark(
        filled ? "empty_filled" : "empty",
        [filled](benchmark::State& state) { run_empty(state, filled); });
    b->ArgNames({"n", "threads"});
    for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
      b->Args({n, 1})->Args({n, 2});
    }
    b->UseRealTime()->Unit(benchmark::kMicrosecond);
  }
  for (bool scatter : {false, true}) {
    for (bool det : {true, false}) {
      std::string name = std::string(scatter ? "scatter_add" : "index_add") +
          (det ? "_det" : "_fast");
      auto* b = benchmark::RegisterBenchmark(
          name.c_str(), [scatter, det](benchmark::State& state) {
            run(state, scatter, det);
          });
      b->ArgNames({"n", "threads"});
      b->Args({100000, 2})->Args({100, 2});
      b->UseRealTime()->Unit(benchmark::kMillisecond);
    }
  }
}
