#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/tensor.h"
#include "ditto/data/example.h"

namespace ditto::data {

// A batch as the loader delivers it (the default collate stacks the
// samples' data and targets along a new first dim).
struct Batch {
  Tensor data;
  Tensor target;
  Payload payload = {};
};

// A map-style dataset. get() may be called from several loader workers at
// once: implementations must be safe for that (the built-in ones are).
// Random choices inside get() should draw from data::sample_generator()
// (or the default generator, which the loader points at the same place),
// never from a generator of their own.
class DITTO_API Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example<> get(int64_t index) const = 0;
};

// Sample i is (data[i], target[i]) (views along the first dim).
class DITTO_API TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor target);
  int64_t size() const override;
  Example<> get(int64_t index) const override;

 private:
  Tensor data_, target_;
};

// The samples of dataset at the given indices, in that order.
class DITTO_API Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices);
  int64_t size() const override;
  Example<> get(int64_t index) const override;

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<int64_t> indices_;
};

// The datasets one after the other.
class DITTO_API ConcatDataset : public Dataset {
 public:
  explicit ConcatDataset(std::vector<std::shared_ptr<const Dataset>> datasets);
  int64_t size() const override;
  Example<> get(int64_t index) const override;

 private:
  std::vector<std::shared_ptr<const Dataset>> datasets_;
  std::vector<int64_t> ends_; // cumulative sizes
};

// A function of a sample's data (or target) tensor; see transforms.h.
using Transform = std::function<Tensor(const Tensor&)>;

// dataset's samples with transform applied to the data (and
// target_transform, if given, to the target) at every get().
class DITTO_API MapDataset : public Dataset {
 public:
  MapDataset(
      std::shared_ptr<const Dataset> dataset,
      Transform transform,
      Transform target_transform = {});
  int64_t size() const override;
  Example<> get(int64_t index) const override;

 private:
  std::shared_ptr<const Dataset> dataset_;
  Transform transform_, target_transform_;
};

} // namespace ditto::data
