#pragma once

// LibTorch's samplers (torch::data::samplers): next(batch_size) returns the
// next batch's indices, reset() starts an epoch. make_data_loader
// (ditto/data/torch_loader.h) calls them as LibTorch's loader does, so their
// draws are LibTorch's: RandomSampler draws randperm(size) from the default
// generator when it is made and at every reset (the start of each epoch).
// ditto's own samplers (ditto/data/sampler.h) draw as Python's
// torch.utils.data does.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/array_ref.h"
#include "ditto/core/tensor.h"
#include "ditto/io/archive.h"

namespace ditto::data::samplers {

template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  // Starts over (with new_size indices when given).
  virtual void reset(optional<size_t> new_size) = 0;
  // The next batch of at most batch_size indices; nullopt when none is left.
  virtual optional<BatchRequest> next(size_t batch_size) = 0;
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

// 0, 1, ..., size - 1.
class DITTO_API SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size);
  void reset(optional<size_t> new_size = nullopt) override;
  optional<std::vector<size_t>> next(size_t batch_size) override;
  // Writes (and reads) "index", as LibTorch's does.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept;

 private:
  size_t size_, index_ = 0;
};

// A permutation of 0 .. size - 1 per epoch: randperm(size, index_dtype) from
// the default generator when made and at every reset, as LibTorch's.
class DITTO_API RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size, Dtype index_dtype = kInt64);
  void reset(optional<size_t> new_size = nullopt) override;
  optional<std::vector<size_t>> next(size_t batch_size) override;
  // Writes (and reads) "index" and "indices", as LibTorch's does.
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;
  size_t index() const noexcept;

 private:
  Tensor indices_;
  int64_t index_ = 0;
};

} // namespace ditto::data::samplers
