#pragma once

// LibTorch's transforms (torch::data::transforms), applied by
// dataset.map(...): per-example Transform<In, Out>, per-batch
// BatchTransform<In, Out>, Lambda, BatchLambda, TensorTransform (the data of
// an Example), TensorLambda, Normalize<> and the Stack<> collation.

#include <functional>
#include <utility>
#include <vector>

#include "ditto/core/array_ref.h"
#include "ditto/core/tensor.h"
#include "ditto/data/example.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::data::transforms {

// Maps a whole batch.
template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;

  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

// Maps each example of a batch.
template <typename Input, typename Output>
class Transform
    : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;

  virtual OutputType apply(InputType input) = 0;

  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output;
    output.reserve(input_batch.size());
    for (auto& input : input_batch) {
      output.push_back(apply(std::move(input)));
    }
    return output;
  }
};

// A BatchTransform of a function.
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function)
      : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override {
    return function_(std::move(input_batch));
  }

 private:
  FunctionType function_;
};

// A Transform of a function.
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override {
    return function_(std::move(input));
  }

 private:
  FunctionType function_;
};

// A batch of examples into one example (LibTorch's Collation).
template <typename BatchType, typename RawBatchType = std::vector<BatchType>>
using Collation = BatchTransform<RawBatchType, BatchType>;

// A collation of a function.
template <typename BatchType, typename RawBatchType = std::vector<BatchType>>
using Collate = BatchLambda<RawBatchType, BatchType>;

// Maps the data tensor of each example, keeping its target.
template <typename Target = Tensor>
class TensorTransform
    : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

// A TensorTransform of a function.
template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<Tensor(Tensor)>;
  explicit TensorLambda(FunctionType function)
      : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override {
    return function_(std::move(input));
  }

 private:
  FunctionType function_;
};

// (data - mean) / stddev, per channel (mean and stddev hold one value per
// channel, or one for all), in float32 as LibTorch computes it.
template <typename Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(channels(mean)), stddev(channels(stddev)) {}
  Tensor operator()(Tensor input) override {
    return input.sub(mean).div(stddev);
  }

  Tensor mean, stddev;

 private:
  static Tensor channels(ArrayRef<double> values) {
    return tensor(values.vec()).to(kFloat32).unsqueeze(1).unsqueeze(2);
  }
};

// Stacks a batch's examples into one example: data and targets along a new
// first dim (LibTorch's Stack<>).
template <typename T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {ditto::stack(data), ditto::stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
    }
    return ditto::stack(data);
  }
};

} // namespace ditto::data::transforms
