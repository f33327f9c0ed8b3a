// `ditto train --model mlp`: a two-layer perceptron on the flattened image.
//   nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
//                 nn.Dropout(0.2), nn.Linear(256, 10))
#include "ditto/ditto.h"
#include "ditto/train/models.h"

namespace nn = ditto::nn;

DITTO_REGISTER_MODEL(
    mlp,
    "flatten, linear 784->256, relu, dropout 0.2, linear 256->10",
    [] {
      return ditto::train::Model::of(nn::Sequential(
          nn::Flatten(),
          nn::Linear(784, 256),
          nn::ReLU(),
          nn::Dropout(0.2),
          nn::Linear(256, 10)));
    });
