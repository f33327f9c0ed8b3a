#pragma once

// LibTorch's data loader (torch::data::make_data_loader) on ditto's loader
// (ditto/data/loader.h): the same calls and batches, with ditto's loading
// underneath: batches in the sampler's order, a worker's exception
// re-raised as a WorkerError, and each sample's random draws from its own
// generator (PerSample mode), so they do not depend on the number of
// workers. Where LibTorch differs: docs/libtorch.md ("Data").

#include <cstddef>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/error.h"
#include "ditto/data/loader.h"
#include "ditto/data/torch_datasets.h"
#include "ditto/data/torch_samplers.h"
#include "ditto/data/torch_transforms.h"

namespace ditto::data {

// A seed digested from g's state, drawing nothing from it (the base seed of
// a LibTorch-style loader, whose loading must leave the default generator
// as LibTorch's leaves it).
DITTO_API uint64_t state_seed(const Generator& g);

// The batches of a LibTorch-style loader (LibTorch's Iterator<Batch>): a
// batch stays valid until the iterator moves on.
template <typename Batch>
class Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  explicit Iterator(DataLoader::Iterator it) : it_(it) {}
  Batch& operator*() const {
    return *static_cast<Batch*>(it_->payload.get());
  }
  Batch* operator->() const {
    return &**this;
  }
  Iterator& operator++() {
    ++it_;
    return *this;
  }
  bool operator==(const Iterator& other) const {
    return it_ == other.it_;
  }
  bool operator!=(const Iterator& other) const {
    return !(it_ == other.it_);
  }

 private:
  DataLoader::Iterator it_;
};

namespace torch_detail {

// A LibTorch sampler as ditto's loader's index sampler: the indices of its
// next(batch_size) requests, one at a time.
template <typename S>
class SamplerAdapter : public Sampler {
 public:
  SamplerAdapter(S* sampler, int64_t size, size_t batch_size)
      : sampler_(sampler), size_(size), batch_size_(batch_size) {}
  void reset() override {
    sampler_->reset(nullopt);
    buffer_.clear();
    pos_ = 0;
    consumed_ = 0;
  }
  std::optional<int64_t> next() override {
    if (pos_ == buffer_.size()) {
      optional<std::vector<size_t>> batch = sampler_->next(batch_size_);
      if (!batch || batch->empty()) {
        return std::nullopt;
      }
      buffer_ = std::move(*batch);
      pos_ = 0;
    }
    ++consumed_;
    return int64_t(buffer_[pos_++]);
  }
  int64_t size() const override {
    return size_;
  }
  SamplerState state() const override {
    SamplerState s;
    s.consumed = consumed_;
    return s;
  }
  void restore(const SamplerState&) override {
    DITTO_CHECK(
        false,
        ValueError,
        "make_data_loader",
        "a LibTorch-style loader does not resume from a LoaderState (use "
        "ditto::data::DataLoader)");
  }

 private:
  S* sampler_;
  int64_t size_;
  size_t batch_size_;
  std::vector<size_t> buffer_;
  size_t pos_ = 0;
  int64_t consumed_ = 0;
};

// The dataset's size; ValueError for an unsized one (a loader needs it).
template <typename D>
size_t sized(const D& dataset) {
  const optional<size_t> size = dataset.size();
  DITTO_CHECK(
      size.has_value(),
      ValueError,
      "make_data_loader",
      "expected the dataset to be sized in order to construct the sampler");
  return *size;
}

} // namespace torch_detail

// A loader of a LibTorch-style dataset (get_batch) by a LibTorch-style
// sampler (next(batch_size)). Each worker loads from its own copy of the
// dataset, as in LibTorch.
template <typename DatasetT, typename SamplerT>
class StatelessDataLoader {
 public:
  using BatchType = typename DatasetT::BatchType;
  using BatchRequestType = typename SamplerT::BatchRequestType;
  static_assert(
      std::is_same_v<BatchRequestType, std::vector<size_t>>,
      "ditto's make_data_loader takes samplers of std::vector<size_t> "
      "requests");

  StatelessDataLoader(
      DatasetT dataset,
      SamplerT sampler,
      DataLoaderOptions options)
      : sampler_(std::move(sampler)), options_(std::move(options)) {
    const size_t size = torch_detail::sized(dataset);
    if (!options_.base_seed()) {
      options_.base_seed(state_seed(default_generator()));
    }
    datasets_.assign(size_t(std::max(0, options_.num_workers())) + 1, dataset);
    DataLoaderOptions inner = options_;
    inner.sampler(std::make_shared<torch_detail::SamplerAdapter<SamplerT>>(
        &sampler_,
        int64_t(size),
        size_t(std::max<int64_t>(1, options_.batch_size()))));
    loader_ = std::make_unique<DataLoader>(
        int64_t(size),
        [this](const std::vector<int64_t>& indices) {
          const std::optional<WorkerInfo> worker = get_worker_info();
          DatasetT& d = datasets_[worker ? size_t(worker->id) + 1 : 0];
          BatchRequestType request(indices.begin(), indices.end());
          Batch out;
          out.payload = std::make_shared<BatchType>(d.get_batch(request));
          return out;
        },
        inner);
  }

  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  // Starts an epoch: the sampler's reset(), then the first batch.
  Iterator<BatchType> begin() {
    return Iterator<BatchType>(loader_->begin());
  }
  Iterator<BatchType> end() {
    return Iterator<BatchType>(loader_->end());
  }
  // Ends the epoch in flight and stops its workers.
  void join() {
    loader_->join();
  }
  const DataLoaderOptions& options() const noexcept {
    return options_;
  }
  // Batches per epoch.
  int64_t size() const {
    return loader_->size();
  }

 private:
  SamplerT sampler_;
  DataLoaderOptions options_;
  std::vector<DatasetT> datasets_; // the calling thread's, then the workers'
  std::unique_ptr<DataLoader> loader_; // last: stops before the rest goes
};

// A loader of dataset by sampler (the options are not optional here, as in
// LibTorch: make_data_loader(dataset, 64) is the overload below).
template <typename DatasetT, typename SamplerT>
std::unique_ptr<StatelessDataLoader<DatasetT, SamplerT>> make_data_loader(
    DatasetT dataset,
    SamplerT sampler,
    DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<DatasetT, SamplerT>>(
      std::move(dataset), std::move(sampler), std::move(options));
}

// A loader of dataset by a SamplerT of its size (LibTorch's default: a
// RandomSampler).
template <
    typename SamplerT = samplers::RandomSampler,
    typename DatasetT,
    typename = std::enable_if_t<std::is_constructible_v<SamplerT, size_t>>>
std::unique_ptr<StatelessDataLoader<DatasetT, SamplerT>> make_data_loader(
    DatasetT dataset,
    DataLoaderOptions options = DataLoaderOptions()) {
  SamplerT sampler(torch_detail::sized(dataset));
  return make_data_loader(
      std::move(dataset), std::move(sampler), std::move(options));
}

} // namespace ditto::data
