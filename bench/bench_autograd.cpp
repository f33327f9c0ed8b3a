// Autograd overhead and a small training step, ditto's side. The same
// benchmarks, with the same names, are in libtorch_autograd.cpp for
// LibTorch 1.13 (C++ against C++); bench/compare_autograd.py runs both.
//   autograd_chain: x = x * 1.0001 + 0.5, 1000 times on 100 floats, then
//     backward (2000 recorded ops and their backward).
//   mlp_step: a 784-512-10 MLP (relu), batch 128, forward, mean squared
//     error, backward; 2 threads.
//   cnn_step: conv 1->32 (3x3, pad 1), relu, conv 32->64 (3x3, stride 2,
//     pad 1), relu, linear 12544->10 on a batch of 64 28x28 images, mean
//     squared error, backward; 2 threads.

#include <benchmark/benchmark.h>

#include "ditto/ditto.h"

namespace {

void autograd_chain(benchmark::State& state) {
  ditto::set_num_threads(1);
  ditto::Tensor x0 = ditto::ones({100}).requires_grad_();
  for (auto _ : state) {
    ditto::Tensor x = x0;
    for (int i = 0; i < 1000; ++i) {
      x = x * 1.0001 + 0.5;
    }
    x.sum().backward();
    benchmark::DoNotOptimize(x0.grad().raw_data());
    x0.mutable_grad() = ditto::Tensor();
  }
}

void mlp_step(benchmark::State& state) {
  ditto::set_num_threads(2);
  ditto::Generator g = ditto::Generator::philox(1);
  ditto::Tensor w1 =
      (ditto::randn({512, 784}, ditto::kFloat32, g) * 0.03).requires_grad_();
  ditto::Tensor b1 = ditto::zeros({512}).requires_grad_();
  ditto::Tensor w2 =
      (ditto::randn({10, 512}, ditto::kFloat32, g) * 0.04).requires_grad_();
  ditto::Tensor b2 = ditto::zeros({10}).requires_grad_();
  ditto::Tensor x = ditto::randn({128, 784}, ditto::kFloat32, g);
  ditto::Tensor y = ditto::randn({128, 10}, ditto::kFloat32, g);
  for (auto _ : state) {
    ditto::Tensor h = ditto::linear(x, w1, b1).relu();
    ditto::Tensor out = ditto::linear(h, w2, b2);
    ditto::Tensor loss = (out - y).pow(2).mean();
    loss.backward();
    benchmark::DoNotOptimize(w1.grad().raw_data());
    for (ditto::Tensor* p : {&w1, &b1, &w2, &b2}) {
      p->mutable_grad() = ditto::Tensor();
    }
  }
}

void cnn_step(benchmark::State& state) {
  ditto::set_num_threads(2);
  ditto::Generator g = ditto::Generator::philox(2);
  auto param = [&](const ditto::Shape& shape, double scale) {
    return (ditto::randn(shape, ditto::kFloat32, g) * scale).requires_grad_();
  };
  ditto::Tensor c1 = param({32, 1, 3, 3}, 0.3), c1b = param({32}, 0.1);
  ditto::Tensor c2 = param({64, 32, 3, 3}, 0.05), c2b = param({64}, 0.1);
  ditto::Tensor fw = param({10, 12544}, 0.01), fb = param({10}, 0.1);
  ditto::Tensor x = ditto::randn({64, 1, 28, 28}, ditto::kFloat32, g);
  ditto::Tensor y = ditto::randn({64, 10}, ditto::kFloat32, g);
  for (auto _ : state) {
    ditto::Tensor h = ditto::conv2d(x, c1, c1b, {1, 1}, {1, 1}).relu();
    h = ditto::conv2d(h, c2, c2b, {2, 2}, {1, 1}).relu();
    ditto::Tensor out = ditto::linear(h.flatten(1), fw, fb);
    ditto::Tensor loss = (out - y).pow(2).mean();
    loss.backward();
    benchmark::DoNotOptimize(c1.grad().raw_data());
    for (ditto::Tensor* p : {&c1, &c1b, &c2, &c2b, &fw, &fb}) {
      p->mutable_grad() = ditto::Tensor();
    }
  }
}

} // namespace

void register_autograd_benchmarks() {
  benchmark::RegisterBenchmark("autograd_chain", autograd_chain)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("mlp_step", mlp_step)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RegisterBenchmark("cnn_step", cnn_step)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
}
