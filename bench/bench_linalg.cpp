// mm of n x n float32 (mm) or float64 (mm_f64) matrices, "threads"
// threads (GFLOP/s counter).

#include <benchmark/benchmark.h>

#include <map>
#include <utility>

#include "ditto/ditto.h"

namespace {

void run_mm(benchmark::State& state, ditto::Dtype dtype) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::Generator g = ditto::Generator::philox(3);
  ditto::Tensor a = ditto::randn({n, n}, dtype, g);
  ditto::Tensor b = ditto::randn({n, n}, dtype, g);
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
  for (auto [name, dtype] :
       {std::pair{"mm", ditto::kFloat32},
        std::pair{"mm_f64", ditto::kFloat64}}) {
    auto* b = benchmark::RegisterBenchmark(name, run_mm, dtype);
    b->ArgNames({"n", "threads"});
    for (int64_t n : {512, 1024, 2048}) {
      for (int64_t threads : {1, 2}) {
        b->Args({n, threads});
      }
    }
    b->UseRealTime()->Unit(benchmark::kMillisecond);
  }
}
