#pragma once

// The CNN of PyTorch's MNIST examples, written once: `ditto train --model
// cnn` (cnn.cpp registers it), the nn golden tests and the training
// benchmarks build it from here. Built after manual_seed(seed), it has
// PyTorch's initial bits:
//   nn.Sequential(nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
//                 nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
//                 nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(),
//                 nn.Dropout(0.25), nn.Linear(128, 10))

#include "ditto/nn/layers.h"

namespace ditto::models {

nn::Sequential mnist_cnn();

} // namespace ditto::models
