// `ditto train --model cnn` (the default): two convolutions and two linear
// layers for 28x28 images (cnn.h).
#include "examples/models/cnn.h"

#include "ditto/ditto.h"
#include "ditto/train/models.h"

namespace ditto::models {

nn::Sequential mnist_cnn() {
  return nn::Sequential(
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
      nn::Linear(128, 10));
}

} // namespace ditto::models

DITTO_REGISTER_MODEL(
    cnn,
    "conv 1->32, pool, conv 32->64, pool, linear 3136->128, dropout 0.25, linear 128->10",
    [] { return ditto::train::Model::of(ditto::models::mnist_cnn()); });
