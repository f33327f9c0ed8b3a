#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/core/options.h"
#include "ditto/data/dataset.h"
#include "ditto/data/sampler.h"
#include "ditto/random/generator.h"

namespace ditto::data {

// Where a sample's randomness comes from (see docs/data.md).
enum class SeedMode {
  // PyTorch's exact scheme: worker i runs with seed base_seed + i (its
  // default generator seeded with it); with 0 workers, samples draw from
  // the calling thread's default generator. Augmentation then depends on
  // the number of workers, as in PyTorch.
  PyTorch,
  // Each sample draws from its own Philox generator, seeded
  // sample_seed(base_seed, epoch, index): the data, augmentation included,
  // is the same for any number of workers, batch size or resume point.
  PerSample,
};

using Collate = std::function<Batch(std::vector<Example<>>)>;

// Stacks the examples' data and targets along a new first dim.
DITTO_API Batch default_collate(std::vector<Example<>> examples);

// The loader's options, LibTorch's way (DataLoaderOptions().batch_size(64)
// .workers(2)): each option is a setter returning the options and a getter
// of the same name. LibTorch's names (workers, max_jobs, timeout,
// enforce_ordering) sit beside PyTorch's (num_workers, shuffle, sampler...).
struct DITTO_API DataLoaderOptions {
  DataLoaderOptions() = default;
  // LibTorch: make_data_loader(dataset, 64) means a batch size.
  /* implicit */ DataLoaderOptions(size_t batch_size)
      : batch_size_(int64_t(batch_size)) {}

  DITTO_NN_ARG(int64_t, batch_size) = 1;
  DITTO_NN_ARG(bool, shuffle) = false;
  // A sampler of indices (exclusive with shuffle), or a batch sampler
  // (exclusive with batch_size, shuffle, sampler and drop_last).
  DITTO_NN_ARG(std::shared_ptr<Sampler>, sampler);
  DITTO_NN_ARG(std::shared_ptr<BatchSampler>, batch_sampler);
  // Worker threads; 0 loads in the calling thread (the reference).
  DITTO_NN_ARG(int, num_workers) = 0;
  DITTO_NN_ARG(Collate, collate); // default_collate when empty
  DITTO_NN_ARG(bool, drop_last) = false;
  // Draws the base seed (and shuffles); the default generator when empty.
  DITTO_NN_ARG(std::optional<Generator>, generator);
  DITTO_NN_ARG(std::function<void(int)>, worker_init_fn);
  // Batches in flight per worker.
  DITTO_NN_ARG(int, prefetch_factor) = 2;
  // Keep the workers (and their generators) from one epoch to the next; no
  // new base seed is drawn after the first epoch, as in PyTorch.
  DITTO_NN_ARG(bool, persistent_workers) = false;
  DITTO_NN_ARG(SeedMode, seed_mode) = SeedMode::PerSample;
  // A base seed for every epoch instead of a draw from the generator (the
  // epochs' samples still differ: the sample seeds name the epoch). The
  // LibTorch-style loader uses it so that loading draws nothing, as
  // LibTorch's loader draws nothing.
  DITTO_NN_ARG(std::optional<uint64_t>, base_seed);
  // LibTorch's names. workers is num_workers. max_jobs bounds the batches
  // in flight (default: prefetch_factor per worker, LibTorch's 2 x
  // workers). Batches always come out in the sampler's order, so
  // enforce_ordering(false) changes nothing, and a timeout is accepted and
  // not used (a worker's failure is re-raised instead of waited for).
  DITTO_NN_ARG(std::optional<size_t>, max_jobs);
  DITTO_NN_ARG(std::optional<std::chrono::milliseconds>, timeout);
  DITTO_NN_ARG(bool, enforce_ordering) = true;

 public:
  DataLoaderOptions& workers(size_t n) {
    num_workers_ = int(n);
    return *this;
  }
  size_t workers() const {
    return size_t(num_workers_);
  }
};

// Inside a worker: its id, the number of workers, its seed (base_seed + id)
// and the dataset (torch.utils.data.get_worker_info()); nullopt elsewhere.
struct WorkerInfo {
  int id = 0;
  int num_workers = 0;
  uint64_t seed = 0;
  std::shared_ptr<const Dataset> dataset;
};
DITTO_API std::optional<WorkerInfo> get_worker_info();

// Inside Dataset::get() run by a loader: the generator of the current sample
// (PerSample: its own; PyTorch mode: the worker's default generator). The
// current default generator elsewhere.
DITTO_API Generator sample_generator();

// Inside a BatchFetch (below), the scope of sample `index`: in PerSample
// mode its draws come from the sample's own generator (as get() has under a
// loader, also as the default generator); in PyTorch mode, and outside a
// loader's fetch, nothing changes. A failure inside the scope is reported
// as that sample's (WorkerError::sample()).
class DITTO_API SampleContext {
 public:
  explicit SampleContext(int64_t index);
  ~SampleContext();
  SampleContext(const SampleContext&) = delete;
  SampleContext& operator=(const SampleContext&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Loads a whole batch from its indices, in place of get() per index and the
// collate (the LibTorch-style loader's get_batch, ditto/data/torch_loader.h):
// it runs where they would (a worker, or the calling thread), in PerSample
// mode under the batch's own generator (seeded
// derive_seed(base_seed, "data.batch:<epoch>:<batch>")), with
// SampleContext for the draws of each sample.
using BatchFetch = std::function<Batch(const std::vector<int64_t>& indices)>;

// The seed of a sample's generator in PerSample mode:
// random::derive_seed(base_seed, "data.sample:<epoch>:<index>").
DITTO_API uint64_t
sample_seed(uint64_t base_seed, int64_t epoch, int64_t index);

// Where a loader is within its epochs, for checkpoints.
struct DITTO_API LoaderState {
  int64_t epoch = 0; // epochs started (the current one counts)
  int64_t batches = 0; // batches delivered in the current epoch
  bool epoch_done = false; // the current epoch delivered all its batches
  uint64_t base_seed = 0;
  SeedMode seed_mode = SeedMode::PerSample;
  int num_workers = 0;
  SamplerState sampler; // consumed = indices of the delivered batches
  // The loader generator's current state (when the options have one).
  std::vector<uint8_t> generator;
  // PyTorch mode: each worker's generator after its last delivered batch
  // (empty: it delivered none this epoch).
  std::vector<std::vector<uint8_t>> worker_generators;

  std::string to_json() const;
  // ValueError for malformed text or an unknown version.
  static LoaderState from_json(const std::string& text);
};

// An exception raised in a worker, re-raised in the caller: names the
// worker and the sample index; what() includes the original message.
class DITTO_API WorkerError : public Error {
 public:
  WorkerError(const std::string& message, int worker, int64_t sample);
  int worker() const {
    return worker_;
  }
  int64_t sample() const {
    return sample_;
  }

 private:
  int worker_;
  int64_t sample_;
};

// An interrupt (Python's KeyboardInterrupt in a worker's sample, or the
// caller's interrupt check while it waits for a batch): passed through to
// the caller as it is, never wrapped as a sample's WorkerError.
class DITTO_API Interrupted : public Error {
 public:
  using Error::Error;
};

// torch.utils.data.DataLoader for map-style datasets, with worker threads.
// Iterating it runs one epoch: `for (const data::Batch& b : loader)`.
// Batches come out in sampler order whatever the workers' timing; batch k
// of an epoch is loaded by worker k % num_workers, as in PyTorch. Only one
// epoch is in flight at a time: begin() ends the previous one.
class DITTO_API DataLoader {
 public:
  DataLoader(
      std::shared_ptr<const Dataset> dataset,
      DataLoaderOptions options = {});
  // Batches of a dataset of dataset_size samples loaded by fetch (worker
  // infos then carry no dataset).
  DataLoader(int64_t dataset_size, BatchFetch fetch, DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  class DITTO_API Iterator {
   public:
    const Batch& operator*() const;
    const Batch* operator->() const;
    Iterator& operator++();
    bool operator==(const Iterator& other) const {
      return done_ == other.done_;
    }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, bool done) : loader_(loader), done_(done) {}
    DataLoader* loader_;
    bool done_;
  };

  // Starts an epoch (or continues the one load_state_dict() described) and
  // loads its first batch.
  Iterator begin();
  Iterator end();
  // Batches per epoch.
  int64_t size() const;
  // Ends the epoch in flight (its remaining batches are dropped) and stops
  // the workers, persistent ones too; the next begin() starts the next
  // epoch.
  void join();

  // Called every 100 ms while the caller waits for a batch (with no lock
  // held); it may throw to stop waiting (the Python binding raises a
  // pending KeyboardInterrupt). The epoch in flight then ends.
  void set_interrupt_check(std::function<void()> check);
  // Stops the workers, waiting at most patience for the ones running a
  // sample. Returns false when some are still stuck in one: their threads
  // are detached and this loader's state is left to them (never freed),
  // and the loader is unusable. For interpreter exit, where a stuck
  // dataset must not hang the process.
  bool stop_workers_within(std::chrono::milliseconds patience);

  // At any point, also mid-epoch. A loader given the state (same dataset
  // and options; in PerSample mode any number of workers) continues with
  // exactly the remaining batches, augmentation included, at its next
  // begin().
  LoaderState state_dict() const;
  void load_state_dict(const LoaderState& state);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ditto::data
