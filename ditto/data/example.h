#pragma once

#include <utility>

#include "ditto/core/tensor.h"

namespace ditto::data {

// What a binding carries through the loader besides tensors (the Python
// package's samples and batches are Python objects). The loader only moves
// it; its deleter is the binding's (which takes the GIL).
using Payload = std::shared_ptr<void>;

namespace example {
// The target type of an example without a target (LibTorch's).
using NoTarget = void;
} // namespace example

// One sample: its data and its target (LibTorch's torch::data::Example<>;
// ditto's map-style datasets return Example<>, LibTorch-style datasets any
// Example<Data, Target>).
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target)
      : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
  Payload payload = {};
};

// An example of data alone (LibTorch's TensorExample).
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  /* implicit */ Example(Data data) : data(std::move(data)) {}

  operator Data&() {
    return data;
  }
  operator const Data&() const {
    return data;
  }

  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

} // namespace ditto::data
