// The Fashion-MNIST CNN of docs/nn.md and one training step of it, shared
// by bench_train.cpp (timed, ditto_bench) and train_rss.cpp (peak memory,
// ditto_train_rss). compare_train.py builds the same model in PyTorch 1.13.
//
// Built after manual_seed(0) in PyTorch's construction order, so the
// initial weights, x, y and the dropout masks are PyTorch's bits:
//   Sequential(Conv2d(1, 32, 3, 1, 1), ReLU(), MaxPool2d(2),
//              Conv2d(32, 64, 3, 1, 1), ReLU(), MaxPool2d(2), Flatten(),
//              Linear(3136, 128), ReLU(), Dropout(0.25), Linear(128, 10))
//   SGD(lr 0.01, momentum 0.9); x = randn(64, 1, 28, 28),
//   y = randint(0, 10, (64,)), made once.
// One step: zero_grad (gradients set to none, as PyTorch 2.0's default;
// compare_train.py passes set_to_none=True to 1.13's), forward,
// cross_entropy, backward, SGD step.

#pragma once

#include "ditto/ditto.h"
#include "examples/models/cnn.h"

namespace ditto_bench {

struct TrainCnn {
  ditto::nn::Sequential model;
  ditto::optim::SGD opt;
  ditto::Tensor x, y;

  TrainCnn()
      : model(make_model()),
        opt(model->parameters(), ditto::optim::SGDOptions(0.01).momentum(0.9)),
        x(ditto::randn({64, 1, 28, 28})),
        y(ditto::randint(0, 10, {64})) {}

  // One training step; returns the loss (computed before the update).
  ditto::Tensor step() {
    opt.zero_grad();
    ditto::Tensor loss =
        ditto::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  }

  static ditto::nn::Sequential make_model() {
    ditto::manual_seed(0);
    return ditto::models::mnist_cnn();
  }
};

} // namespace ditto_bench
