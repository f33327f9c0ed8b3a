// conv2d on the Fashion-MNIST CNN's shapes, batch 64, 3x3 kernels with
// padding 1: 1 -> 32 channels on 28x28 ("c1") and 32 -> 64 on 14x14
// ("c32"), forward and both gradients, deterministic algorithms unless the
// name says fast; "bench" rows run with backends::conv::benchmark on (the
// choice cached after the first call). conv3d on a 3-d U-Net block: batch
// 2, 32 -> 32 channels, 32^3, 3x3x3 with padding 1, at 1 and 2 threads
// (every conv3d algorithm is deterministic).

#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "ditto/ditto.h"

namespace {

using ditto::Tensor;

struct ConvCase {
  const char* name;
  int64_t cin, cout;
  int dir; // 0 forward, 1 backward input, 2 backward weight
  bool fast, bench;
};

const ConvCase kCases[] = {
    {"conv_fwd_c1", 1, 32, 0, false, false},
    {"conv_fwd_c32", 32, 64, 0, false, false},
    {"conv_fwd_bench_c32", 32, 64, 0, false, true},
    {"conv_bwd_input_c32", 32, 64, 1, false, false},
    {"conv_bwd_weight_c1", 1, 32, 2, false, false},
    {"conv_bwd_weight_c32", 32, 64, 2, false, false},
    {"conv_bwd_weight_fast_c32", 32, 64, 2, true, false},
};

void run(benchmark::State& state, const ConvCase& c) {
  const int64_t hw = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::Generator g = ditto::Generator::philox(5);
  Tensor x = ditto::randn({64, c.cin, hw, hw}, ditto::kFloat32, g);
  Tensor w = ditto::randn({c.cout, c.cin, 3, 3}, ditto::kFloat32, g);
  Tensor go = ditto::randn({64, c.cout, hw, hw}, ditto::kFloat32, g);
  namespace conv = ditto::backends::conv;
  conv::benchmark(c.bench);
  conv::force_algorithm("backward_weight", c.fast ? "fast" : "");
  ditto::use_deterministic_algorithms(!c.fast);
  std::function<Tensor()> op = [&] {
    switch (c.dir) {
      case 0:
        return ditto::conv2d(x, w, {}, {1, 1}, {1, 1});
      case 1:
        return ditto::conv2d_backward_input(go, w, x.sizes(), {1, 1}, {1, 1});
      default:
        return ditto::conv2d_backward_weight(go, x, w.sizes(), {1, 1}, {1, 1});
    }
  };
  op(); // with benchmark on, the timed first call
  for (auto _ : state) {
    Tensor y = op();
    benchmark::DoNotOptimize(y.raw_data());
  }
  state.SetLabel(conv::last_choice().algorithm);
  conv::benchmark(false);
  conv::force_algorithm("backward_weight", "");
  ditto::use_deterministic_algorithms(false);
}

void run_3d(benchmark::State& state, int dir) {
  const int64_t n = state.range(0);
  ditto::set_num_threads(int(state.range(1)));
  ditto::Generator g = ditto::Generator::philox(5);
  Tensor x = ditto::randn({2, 32, n, n, n}, ditto::kFloat32, g);
  Tensor w = ditto::randn({32, 32, 3, 3, 3}, ditto::kFloat32, g);
  Tensor go = ditto::randn({2, 32, n, n, n}, ditto::kFloat32, g);
  std::function<Tensor()> op = [&] {
    switch (dir) {
      case 0:
        return ditto::conv3d(x, w, {}, {1}, {1});
      case 1:
        return ditto::conv3d_backward_input(go, w, x.sizes(), {1}, {1});
      default:
        return ditto::conv3d_backward_weight(go, x, w.sizes(), {1}, {1});
    }
  };
  op();
  for (auto _ : state) {
    Tensor y = op();
    benchmark::DoNotOptimize(y.raw_data());
  }
}

} // namespace

void register_conv_benchmarks() {
  const char* names3d[] = {
      "conv3d_fwd", "conv3d_bwd_input", "conv3d_bwd_weight"};
  for (int dir = 0; dir < 3; ++dir) {
    auto* b = benchmark::RegisterBenchmark(
        names3d[dir], [dir](benchmark::State& state) { run_3d(state, dir); });
    b->ArgNames({"n", "threads"});
    b->Args({32, 1});
    b->Args({32, 2});
    b->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  for (const ConvCase& c : kCases) {
    auto* b = benchmark::RegisterBenchmark(
        c.name, [&c](benchmark::State& state) { run(state, c); });
    b->ArgNames({"n", "threads"});
    b->Args({c.cin == 1 ? 28 : 14, 2});
    b->UseRealTime()->Unit(benchmark::kMillisecond);
  }
}
