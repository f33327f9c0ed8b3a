// float32 mm of n x n matrices, "threads" threads (GFLOP/s counter).

#include <benchmark/benchmark.h>

#include <map>

#include "ditto/ditto.h"

namespace {

void run_mm(benchmark::State& state) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::Generator g = ditto::Generator::philox(3);
  ditto::Tensor a = ditto::randn({n, n}, ditto::kFloat32, g);
  ditto::Tensor b = ditto::randn({n, n}, ditto::kFloat32, g);
  for (auto _ : state) {
    ditto::Tensor c = ditto::mm(a, b);
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      double(state.iterations()) * 2.0 * double(n) * double(n) * double(n) /
          1e9,
      benchmark::Counter::kIsRate);
}

} // namespace

void register_linalg_benchmarks() {
  auto* b = benchmark::RegisterBenchmark("mm", run_mm);
  b->ArgNames({"n", "threads"});
  for (int64_t n : {512, 1024, 2048}) {
    b->Args({n, 2});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
