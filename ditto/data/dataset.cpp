#include "ditto/data/dataset.h"

#include <algorithm>

#include "ditto/core/error.h"

namespace ditto::data {
namespace {

void check_index(int64_t index, int64_t size, const char* op) {
  DITTO_CHECK(
      index >= 0 && index < size,
      IndexError,
      op,
      "index ",
      index,
      " is out of range for a dataset of ",
      size,
      " samples");
}

} // namespace

TensorDataset::TensorDataset(Tensor data, Tensor target)
    : data_(std::move(data)), target_(std::move(target)) {
  DITTO_CHECK(
      data_.defined() && target_.defined() && data_.dim() >= 1 &&
          target_.dim() >= 1,
      ValueError,
      "TensorDataset",
      "data and target must be defined tensors of at least one dim");
  DITTO_CHECK(
      data_.size(0) == target_.size(0),
      ValueError,
      "TensorDataset",
      "data has ",
      data_.size(0),
      " samples but target has ",
      target_.size(0));
}

int64_t TensorDataset::size() const {
  return data_.size(0);
}

Example<> TensorDataset::get(int64_t index) const {
  check_index(index, size(), "TensorDataset");
  return {data_.select(0, index), target_.select(0, index)};
}

Subset::Subset(
    std::shared_ptr<const Dataset> dataset,
    std::vector<int64_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  DITTO_CHECK(dataset_ != nullptr, ValueError, "Subset", "null dataset");
  for (int64_t i : indices_) {
    check_index(i, dataset_->size(), "Subset");
  }
}

int64_t Subset::size() const {
  return int64_t(indices_.size());
}

Example<> Subset::get(int64_t index) const {
  check_index(index, size(), "Subset");
  return dataset_->get(indices_[size_t(index)]);
}

ConcatDataset::ConcatDataset(
    std::vector<std::shared_ptr<const Dataset>> datasets)
    : datasets_(std::move(datasets)) {
  int64_t total = 0;
  for (const auto& d : datasets_) {
    DITTO_CHECK(d != nullptr, ValueError, "ConcatDataset", "null dataset");
    total += d->size();
    ends_.push_back(total);
  }
}

int64_t ConcatDataset::size() const {
  return ends_.empty() ? 0 : ends_.back();
}

Example<> ConcatDataset::get(int64_t index) const {
  check_index(index, size(), "ConcatDataset");
  const size_t k = size_t(
      std::upper_bound(ends_.begin(), ends_.end(), index) - ends_.begin());
  const int64_t start = k == 0 ? 0 : ends_[k - 1];
  return datasets_[k]->get(index - start);
}

MapDataset::MapDataset(
    std::shared_ptr<const Dataset> dataset,
    Transform transform,
    Transform target_transform)
    : dataset_(std::move(dataset)),
      transform_(std::move(transform)),
      target_transform_(std::move(target_transform)) {
  DITTO_CHECK(dataset_ != nullptr, ValueError, "MapDataset", "null dataset");
}

int64_t MapDataset::size() const {
  return dataset_->size();
}

Example<> MapDataset::get(int64_t index) const {
  Example<> e = dataset_->get(index);
  if (transform_) {
    e.data = transform_(e.data);
  }
  if (target_transform_) {
    e.target = target_transform_(e.target);
  }
  return e;
}

} // namespace ditto::data
