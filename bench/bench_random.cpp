// Random fills, at the sizes and thread counts bench/compare.py times in
// PyTorch: rand, randn and bernoulli_(0.5) on 10M float32 and randperm(1M)
// on the PyTorch-compatible mt19937 path (serial, as PyTorch's), and rand /
// randn on the counter-based Philox path (parallel).

#include <benchmark/benchmark.h>

#include <functional>

#include "ditto/ditto.h"

namespace {

using ditto::Tensor;

void run(
    benchmark::State& state,
    const std::function<Tensor(int64_t, Tensor&)>& fn,
    int64_t bytes_per_element) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::manual_seed(0);
  Tensor buffer = ditto::zeros({n});
  for (auto _ : state) {
    Tensor out = fn(n, buffer);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * n * bytes_per_element);
}

void add(
    const char* name,
    std::function<Tensor(int64_t, Tensor&)> fn,
    int64_t n,
    std::initializer_list<int> threads,
    int64_t bytes_per_element = 4) {
  auto* b = benchmark::RegisterBenchmark(
      name, [fn, bytes_per_element](benchmark::State& state) {
        run(state, fn, bytes_per_element);
      });
  b->ArgNames({"n", "threads"});
  for (int t : threads) {
    b->Args({n, t});
  }
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

} // namespace

void register_random_benchmarks() {
  const int64_t n = 10'000'000;
  add("rand", [](int64_t m, Tensor&) { return ditto::rand({m}); }, n, {1, 2});
  add("randn", [](int64_t m, Tensor&) { return ditto::randn({m}); }, n, {1, 2});
  add("bernoulli",
      [](int64_t, Tensor& buf) { return buf.bernoulli_(0.5); },
      n,
      {1, 2});
  add(
      "randperm",
      [](int64_t m, Tensor&) { return ditto::randperm(m); },
      int64_t(1) << 20,
      {1},
      8);
  static ditto::Generator philox = ditto::Generator::philox(0);
  add("rand_philox",
      [](int64_t m, Tensor&) {
        return ditto::rand({m}, ditto::kFloat32, philox);
      },
      n,
      {1, 2});
  add("randn_philox",
      [](int64_t m, Tensor&) {
        return ditto::randn({m}, ditto::kFloat32, philox);
      },
      n,
      {1, 2});
}
