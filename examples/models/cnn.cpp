// `ditto train --model cnn` (the default): two convolutions and two linear
// layers for 28x28 images, the model of PyTorch's MNIST examples. Built
// after manual_seed(seed), it has PyTorch's initial bits:
//   nn.Sequential(nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
//                 nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
//                 nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(),
//                 nn.Dropout(0.25), nn.Linear(128, 10))
#include "ditto/ditto.h"
#include "ditto/train/models.h"

namespace nn = ditto::nn;

DITTO_REGISTER_MODEL(
    cnn,
    "conv 1->32, pool, conv 32->64, pool, linear 3136->128, dropout 0.25, linear 128->10",
    [] {
      return ditto::train::Model::of(std::make_shared<nn::Sequential>(
          nn::Conv2d(1, 32, 3, 1, 1),
          nn::ReLU(),
          nn::MaxPool2d(2),
          nn::Conv2d(32, 64, 3, 1, 1),
          nn::ReLU(),
          nn::MaxPool2d(2),
          nn::Flatten(),
          nn::Linear(3136, 128),
          nn::ReLU(),
          nn::Dropout(0.25),
          nn::Linear(128, 10)));
    });
