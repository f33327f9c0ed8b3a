// index_add_ of 1M x 64 float32 source rows into n destination rows
// (n = 100000: low contention; n = 100: high), deterministic variant against
// the fast (atomic) one. The "differ" counter is how many output elements
// two runs of the fast variant disagree on: what determinism buys.

#include <benchmark/benchmark.h>

#include <map>

#include "ditto/ditto.h"

namespace {

using ditto::Tensor;

struct Inputs {
  Tensor src, index;
};

const Inputs& inputs(int64_t dest_rows) {
  static std::map<int64_t, Inputs> cache;
  auto it = cache.find(dest_rows);
  if (it == cache.end()) {
    ditto::Generator g = ditto::Generator::philox(1);
    Inputs in;
    in.src = ditto::randn({1 << 20, 64}, ditto::kFloat32, g);
    in.index = ditto::randint(0, dest_rows, {1 << 20}, ditto::kInt64, g);
    it = cache.emplace(dest_rows, in).first;
  }
  return it->second;
}

void run(benchmark::State& state, bool deterministic) {
  const int64_t rows = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  const Inputs& in = inputs(rows);
  ditto::use_deterministic_algorithms(deterministic);
  if (!deterministic) {
    Tensor a = ditto::zeros({rows, 64});
    Tensor b = ditto::zeros({rows, 64});
    ditto::index_add_(a, 0, in.index, in.src);
    ditto::index_add_(b, 0, in.index, in.src);
    state.counters["differ"] =
        double(ditto::sum(ditto::ne(a, b)).item<int64_t>());
  }
  for (auto _ : state) {
    Tensor out = ditto::zeros({rows, 64});
    ditto::index_add_(out, 0, in.index, in.src);
    benchmark::DoNotOptimize(out);
  }
  ditto::use_deterministic_algorithms(false);
  state.SetBytesProcessed(state.iterations() * (int64_t(1) << 20) * 64 * 4);
}

} // namespace

void register_index_benchmarks() {
  for (bool det : {true, false}) {
    auto* b = benchmark::RegisterBenchmark(
        det ? "index_add_det" : "index_add_fast",
        [det](benchmark::State& state) { run(state, det); });
    b->ArgNames({"n", "threads"});
    b->Args({100000, 2})->Args({100, 2});
    b->UseRealTime()->Unit(benchmark::kMillisecond);
  }
}
