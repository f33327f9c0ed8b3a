#pragma once

// DataLoader's state and its two halves' shared types (internal, never
// installed): loader_workers.cpp runs batches (the workers, and the calling
// thread when num_workers=0), loader.cpp drives epochs and states.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ditto/data/loader.h"

namespace ditto::data {
namespace loader_detail {

struct Task {
  int64_t k = 0; // batch number in the epoch
  std::vector<int64_t> indices;
};

struct Result {
  Batch batch;
  int64_t indices = 0;
  int worker = -1;
  // The failure, if any: the exception, its message and the sample.
  std::exception_ptr error;
  std::string message;
  int64_t sample = -1;
  std::vector<uint8_t> generator; // PyTorch mode: the worker's, after
};

// A generator's state as bytes, and back.
std::vector<uint8_t> generator_bytes(const Generator& g);
void set_generator_bytes(Generator g, const std::vector<uint8_t>& bytes);

} // namespace loader_detail

struct DataLoader::Impl {
  using Task = loader_detail::Task;
  using Result = loader_detail::Result;

  std::shared_ptr<const Dataset> dataset;
  BatchFetch fetch; // instead of dataset (the LibTorch-style loader)
  DataLoaderOptions opt;
  std::shared_ptr<BatchSampler> batches;
  Collate collate;
  int num_workers = 0;

  // The epoch.
  int64_t epoch = 0;
  uint64_t base_seed = 0;
  bool active = false; // an epoch is being iterated
  bool finished = false; // the current epoch delivered all its batches
  // After load_state_dict at an epoch boundary with persistent workers: the
  // next epoch keeps the base seed (as the uninterrupted loader would).
  bool keep_base_seed = false;
  bool sampler_done = false;
  int64_t dispatched = 0, delivered = 0, delivered_indices = 0;
  SamplerState sampler_state; // captured at the epoch's first batch
  std::vector<std::vector<uint8_t>> worker_generators;
  std::optional<LoaderState> pending; // from load_state_dict()
  Batch current;

  // The workers.
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::vector<std::thread> threads;
  std::vector<std::deque<Task>> queues;
  std::map<int64_t, Result> results;
  int running = 0; // tasks a worker has taken and not yet posted
  bool stop = false;
  std::function<void()> interrupt_check; // set_interrupt_check

  // Waits (lock held on entry and on exit) until ready(), calling the
  // interrupt check every 100 ms with the lock released; its exception
  // propagates.
  template <typename Ready>
  void wait_for_workers(std::unique_lock<std::mutex>& lock, Ready ready) {
    while (!done_cv.wait_for(lock, std::chrono::milliseconds(100), ready)) {
      if (interrupt_check) {
        lock.unlock();
        try {
          interrupt_check();
        } catch (...) {
          lock.lock();
          throw;
        }
        lock.lock();
      }
    }
  }

  ~Impl();

  // Loads one batch in this thread. In PerSample mode each sample runs
  // under its own generator (also as the default generator, so code that
  // draws from it is covered too).
  Result run_task(const Task& task, int worker);

  // Loads one batch through fetch: PerSample mode runs it under the
  // batch's generator, and each SampleContext inside under its sample's.
  Result run_fetch(const Task& task, Result r);

  void worker_main(int w, uint64_t seed, std::vector<uint8_t> resume_state);

  void start_workers(const std::vector<std::vector<uint8_t>>& resume);

  void stop_workers();

  // Hands batches to workers until prefetch_factor per worker are in
  // flight (the sampler draws here, in the calling thread, as PyTorch's
  // main process does).
  void dispatch();

  // The sampler's replay state, taken once its epoch has started (a new
  // epoch marks it missing with consumed = -1).
  void capture_sampler_state();

  // Abandons the epoch's batches in flight, keeping the workers: queued
  // tasks are dropped, running ones finish and their results are dropped.
  void drain();

  void begin_epoch();

  // Loads the next batch into current; false at the end of the epoch.
  bool next_batch();

  bool finish_epoch();
};

} // namespace ditto::data
