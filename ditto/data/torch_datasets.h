#pragma once

// LibTorch's datasets (torch::data::datasets): BatchDataset, Dataset<Self>,
// MapDataset (dataset.map(transform)), MNIST, TensorDataset. They are
// loaded by make_data_loader (ditto/data/torch_loader.h) on ditto's loader.

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/array_ref.h"
#include "ditto/core/tensor.h"
#include "ditto/data/example.h"
#include "ditto/data/loader.h"

namespace ditto::data::datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset;

template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform);

// A dataset that returns whole batches: get_batch(request) and size()
// (nullopt when unknown). Loaders copy it (one copy per worker), so it
// should be cheap to copy: hold tensors (shallow) or shared_ptrs.
template <
    typename Self,
    typename Batch = std::vector<Example<>>,
    typename BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  constexpr static bool is_stateful = false;

  virtual ~BatchDataset() = default;

  virtual Batch get_batch(BatchRequest request) = 0;
  virtual optional<size_t> size() const = 0;

  // This dataset with transform applied to each batch it returns.
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(
        std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: get(index). Its batches are the examples
// of the requested indices, each loaded in its own SampleContext (so under
// ditto's loader a sample's random draws do not depend on the batch, the
// worker or the number of workers).
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;

  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) {
      SampleContext context{int64_t(i)};
      batch.push_back(get(i));
    }
    return batch;
  }
};

// dataset with transform applied to every batch: get_batch(request) is
// transform.apply_batch(dataset.get_batch(request)).
template <typename SourceDataset, typename AppliedTransform>
class MapDataset : public BatchDataset<
                       MapDataset<SourceDataset, AppliedTransform>,
                       decltype(std::declval<AppliedTransform>().apply_batch(
                           std::declval<typename SourceDataset::BatchType>())),
                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = decltype(std::declval<AppliedTransform>().apply_batch(
      std::declval<typename SourceDataset::BatchType>()));

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType indices) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
  }
  optional<size_t> size() const override {
    return dataset_.size();
  }
  const SourceDataset& dataset() const {
    return dataset_;
  }
  const AppliedTransform& transform() const {
    return transform_;
  }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

template <typename D, typename T>
MapDataset<D, T> map(D dataset, T transform) {
  return MapDataset<D, T>(std::move(dataset), std::move(transform));
}

// MNIST-format files under root (LibTorch's datasets::MNIST): the images as
// float32 [N, 1, 28, 28] in [0, 1] (pixel / 255), the targets as int64 [N].
// The files may be gzipped (Debian's dataset-fashion-mnist ships .gz);
// LibTorch reads them uncompressed only. A missing or corrupt file is a
// ValueError naming it.
class DITTO_API MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;
  optional<size_t> size() const override;
  // True for the 60,000-image training set.
  bool is_train() const noexcept;
  const Tensor& images() const;
  const Tensor& targets() const;

 private:
  Tensor images_, targets_;
};

// The rows of one tensor as examples without targets.
class DITTO_API TensorDataset : public Dataset<TensorDataset, TensorExample> {
 public:
  explicit TensorDataset(const std::vector<Tensor>& tensors);
  explicit TensorDataset(Tensor tensor);

  TensorExample get(size_t index) override;
  optional<size_t> size() const override;

  Tensor tensor;
};

} // namespace ditto::data::datasets
