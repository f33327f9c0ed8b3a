// mm of n x n float32 (mm) or float64 (mm_f64) matrices, "threads"
// threads (GFLOP/s counter).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <utility>
#include <vector>

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

// nn.Linear(768, 768)'s forward and backward on a [n / 256, 256, 768]
// float32 input (a GPT block's projection at batch n / 256, sequence 256):
// with the batch folded into the product's rows (Note [matmul folds a
// batch into rows]) the weight's gradient is one product.
void run_linear3d_bwd(benchmark::State& state) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::Generator g = ditto::Generator::philox(4);
  ditto::Tensor x = ditto::randn({n / 256, 256, 768}, ditto::kFloat32, g);
  ditto::Tensor w = ditto::randn({768, 768}, ditto::kFloat32, g);
  ditto::Tensor bias = ditto::randn({768}, ditto::kFloat32, g);
  ditto::Tensor gy = ditto::randn({n / 256, 256, 768}, ditto::kFloat32, g);
  x.requires_grad_();
  w.requires_grad_();
  bias.requires_grad_();
  for (auto _ : state) {
    ditto::Tensor y = ditto::nn::functional::linear(x, w, bias);
    y.backward(gy);
    x.mutable_grad() = ditto::Tensor();
    w.mutable_grad() = ditto::Tensor();
    bias.mutable_grad() = ditto::Tensor();
  }
}

// The core clock in GHz from one thread: a chain of dependent integer
// additions runs at one addition per cycle on every x86-64 and AArch64
// core, so additions per second is the clock the core runs at, boost
// included (what a hypervisor's "cpu MHz" does not say). 0 elsewhere.
double chain_ghz() {
#if defined(__x86_64__) || defined(__aarch64__)
  constexpr uint64_t kAdds = 100'000'000;
  uint64_t x = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kAdds; i += 8) {
#if defined(__x86_64__)
    asm volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(x));
#else
    asm volatile(
        "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
        "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
        "add %0, %0, #1\n\tadd %0, %0, #1"
        : "+r"(x));
#endif
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  benchmark::DoNotOptimize(x);
  return double(kAdds) / s / 1e9;
#else
  return 0.0;
#endif
}

// The clock with "threads" threads running the chain at once (the slowest
// of them: the clock of all cores busy, as in a product on all of them),
// for the fraction of the FMA peak that bench/compare.py prints.
void run_clock(benchmark::State& state) {
  const int threads = int(state.range(0));
  double total = 0;
  for (auto _ : state) {
    std::vector<double> ghz(size_t(threads), 0.0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&ghz, t] { ghz[size_t(t)] = chain_ghz(); });
    }
    for (auto& th : pool) {
      th.join();
    }
    total += *std::min_element(ghz.begin(), ghz.end());
  }
  state.counters["GHz"] =
      benchmark::Counter(total, benchmark::Counter::kAvgIterations);
}

} // namespace

void register_linalg_benchmarks() {
  auto* clock = benchmark::RegisterBenchmark("cpu_clock", run_clock);
  clock->ArgNames({"threads"})->Arg(1)->Arg(2)->Iterations(5);
  clock->UseRealTime()->Unit(benchmark::kMillisecond);
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
  auto* lin = benchmark::RegisterBenchmark("linear3d_bwd", run_linear3d_bwd);
  lin->ArgNames({"n", "threads"})->Args({2048, 1})->Args({2048, 2});
  lin->UseRealTime()->Unit(benchmark::kMillisecond);
}
