// LibTorch 1.13's side of bench_autograd.cpp: the same benchmarks, the same
// names, for C++-to-C++ comparisons (bench/compare_autograd.py); and of
// bench_train.cpp's train_step_det / train_step_fast (bench/compare_train.py).

#include <benchmark/benchmark.h>
#include <torch/torch.h>

namespace {

void autograd_chain(benchmark::State& state) {
  at::set_num_threads(1);
  torch::Tensor x0 = torch::ones({100}).requires_grad_();
  for (auto _ : state) {
    torch::Tensor x = x0;
    for (int i = 0; i < 1000; ++i) {
      x = x * 1.0001 + 0.5;
    }
    x.sum().backward();
    benchmark::DoNotOptimize(x0.grad().data_ptr());
    x0.mutable_grad() = torch::Tensor();
  }
}

void mlp_step(benchmark::State& state) {
  at::set_num_threads(2);
  torch::manual_seed(1);
  torch::Tensor w1 = (torch::randn({512, 784}) * 0.03).requires_grad_();
  torch::Tensor b1 = torch::zeros({512}).requires_grad_();
  torch::Tensor w2 = (torch::randn({10, 512}) * 0.04).requires_grad_();
  torch::Tensor b2 = torch::zeros({10}).requires_grad_();
  torch::Tensor x = torch::randn({128, 784});
  torch::Tensor y = torch::randn({128, 10});
  for (auto _ : state) {
    torch::Tensor h = torch::nn::functional::linear(x, w1, b1).relu();
    torch::Tensor out = torch::nn::functional::linear(h, w2, b2);
    torch::Tensor loss = (out - y).pow(2).mean();
    loss.backward();
    benchmark::DoNotOptimize(w1.grad().data_ptr());
    for (torch::Tensor* p : {&w1, &b1, &w2, &b2}) {
      p->mutable_grad() = torch::Tensor();
    }
  }
}

void cnn_step(benchmark::State& state) {
  at::set_num_threads(2);
  torch::manual_seed(2);
  auto param = [](at::IntArrayRef shape, double scale) {
    return (torch::randn(shape) * scale).requires_grad_();
  };
  torch::Tensor c1 = param({32, 1, 3, 3}, 0.3), c1b = param({32}, 0.1);
  torch::Tensor c2 = param({64, 32, 3, 3}, 0.05), c2b = param({64}, 0.1);
  torch::Tensor fw = param({10, 12544}, 0.01), fb = param({10}, 0.1);
  torch::Tensor x = torch::randn({64, 1, 28, 28});
  torch::Tensor y = torch::randn({64, 10});
  for (auto _ : state) {
    torch::Tensor h = torch::conv2d(x, c1, c1b, {1, 1}, {1, 1}).relu();
    h = torch::conv2d(h, c2, c2b, {2, 2}, {1, 1}).relu();
    torch::Tensor out = torch::nn::functional::linear(h.flatten(1), fw, fb);
    torch::Tensor loss = (out - y).pow(2).mean();
    loss.backward();
    benchmark::DoNotOptimize(c1.grad().data_ptr());
    for (torch::Tensor* p : {&c1, &c1b, &c2, &c2b, &fw, &fb}) {
      p->mutable_grad() = torch::Tensor();
    }
  }
}

// One training step of the CNN of bench/train_cnn.h, built after
// manual_seed(0) one layer per statement (GCC builds a call's arguments
// right to left); gradients set to none (zero_grad(true) in ditto).
void train_step(benchmark::State& state, bool deterministic) {
  namespace nn = torch::nn;
  at::set_num_threads(2);
  at::globalContext().setDeterministicAlgorithms(deterministic, false);
  torch::manual_seed(0);
  nn::Sequential model;
  model->push_back(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)));
  model->push_back(nn::ReLU());
  model->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
  model->push_back(nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)));
  model->push_back(nn::ReLU());
  model->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
  model->push_back(nn::Flatten());
  model->push_back(nn::Linear(3136, 128));
  model->push_back(nn::ReLU());
  model->push_back(nn::Dropout(0.25));
  model->push_back(nn::Linear(128, 10));
  std::vector<torch::Tensor> params = model->parameters();
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.01).momentum(0.9));
  torch::Tensor x = torch::randn({64, 1, 28, 28});
  torch::Tensor y = torch::randint(0, 10, {64}, torch::kLong);
  auto step = [&] {
    for (torch::Tensor& p : params) {
      p.mutable_grad() = torch::Tensor();
    }
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  step(); // warm-up: the momentum buffers are made at the first step
  for (auto _ : state) {
    torch::Tensor loss = step();
    benchmark::DoNotOptimize(loss.data_ptr());
  }
  at::globalContext().setDeterministicAlgorithms(false, false);
}

void train_step_det(benchmark::State& state) {
  train_step(state, true);
}

void train_step_fast(benchmark::State& state) {
  train_step(state, false);
}

} // namespace

BENCHMARK(autograd_chain)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(mlp_step)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(cnn_step)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(train_step_det)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(train_step_fast)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
