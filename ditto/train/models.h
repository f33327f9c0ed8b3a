#pragma once

// Models by name, for `ditto train --model NAME`. A model file registers a
// factory at start-up (examples/models/*.cpp, compiled into the `ditto`
// tool; add a file there and `--model` knows it, without touching the
// tool's code):
//
//   DITTO_REGISTER_MODEL(mlp, "784-256-10 perceptron", [] {
//     return ditto::train::Model::of(nn::Sequential(
//         nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Linear(256,
//         10)));
//   });
//
// The trainer calls the factory right after manual_seed(seed), so a model
// built as in PyTorch gets PyTorch's initial bits.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ditto/nn/module.h"

namespace ditto::train {

// A module and its forward: images [N, 1, 28, 28] to logits [N, classes],
// or, for a language model (text_block > 0), byte tokens [N, text_block]
// to logits [N, text_block, 256] for the next byte at each position. The
// trainer's loss is the cross entropy over the logits' last dim, averaged
// over every other (samples and positions).
struct Model {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;
  // > 0: the model reads windows of this many bytes of text
  // (data::ByteWindows of TrainOptions::text), not MNIST images.
  int64_t text_block = 0;

  // Wraps any module with a `Tensor forward(const Tensor&)` method.
  template <typename M>
  static Model of(std::shared_ptr<M> m) {
    return Model{m, [m](const Tensor& x) { return m->forward(x); }};
  }
  // A holder: Model::of(nn::Sequential(...)).
  template <typename M>
  static Model of(const nn::ModuleHolder<M>& m) {
    return of(m.ptr());
  }
};

using ModelFactory = std::function<Model()>;

struct ModelEntry {
  std::string name;
  std::string description;
  ModelFactory factory;
};

// Registers (or replaces) a model under name.
DITTO_API void register_model(
    std::string name,
    std::string description,
    ModelFactory f);
// Every registered model, sorted by name.
DITTO_API std::vector<ModelEntry> registered_models();
// ValueError naming the known models when name is not registered.
DITTO_API Model make_model(const std::string& name);

} // namespace ditto::train

#define DITTO_REGISTER_MODEL(name, description, ...)                 \
  static const bool ditto_model_registered_##name = [] {             \
    ::ditto::train::register_model(#name, description, __VA_ARGS__); \
    return true;                                                     \
  }()
