// One training step of the Fashion-MNIST CNN (bench/train_cnn.h): zero_grad,
// forward, cross_entropy, backward, SGD step, batch 64, 2 threads.
//   train_step_det: use_deterministic_algorithms on (and with it the NaN
//     fill of empty tensors, determinism::fill_uninitialized_memory()).
//   train_step_fast: the mode off.
// Their ratio is the cost of determinism. bench/compare_train.py times
// the same step in PyTorch 1.13 (and, when built, LibTorch's
// train_step_det / train_step_fast in libtorch_autograd.cpp) and runs
// ditto_train_rss (train_rss.cpp) for the peak memory.

#include <benchmark/benchmark.h>

#include "train_cnn.h"

namespace {

void train_step(benchmark::State& state, bool deterministic) {
  ditto::set_num_threads(2);
  ditto::DeterministicGuard guard(deterministic);
  ditto_bench::TrainCnn cnn;
  cnn.step(); // warm-up: the momentum buffers are made at the first step
  for (auto _ : state) {
    ditto::Tensor loss = cnn.step();
    benchmark::DoNotOptimize(loss.raw_data());
  }
}

} // namespace

void register_train_benchmarks() {
  benchmark::RegisterBenchmark(
      "train_step_det", [](benchmark::State& s) { train_step(s, true); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark(
      "train_step_fast", [](benchmark::State& s) { train_step(s, false); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}
