#include "ditto/data/loader.h"

#include "ditto/data/detail/loader_impl.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "ditto/core/parallel.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/streams.h"
#include "ditto/trace/trace.h"

namespace ditto::data {

using loader_detail::generator_bytes;
using loader_detail::set_generator_bytes;

// Hands batches to workers until prefetch_factor per worker are in
// flight (the sampler draws here, in the calling thread, as PyTorch's
// main process does).
void DataLoader::Impl::dispatch() {
  const int64_t limit = opt.max_jobs()
      ? std::max<int64_t>(1, int64_t(*opt.max_jobs()))
      : int64_t(opt.prefetch_factor()) * num_workers;
  while (!sampler_done && dispatched - delivered < limit) {
    std::optional<std::vector<int64_t>> b = batches->next();
    if (!b) {
      sampler_done = true;
      break;
    }
    capture_sampler_state();
    {
      std::lock_guard<std::mutex> lock(mu);
      queues[size_t(dispatched % num_workers)].push_back(
          {dispatched, std::move(*b)});
    }
    ++dispatched;
    work_cv.notify_all();
  }
}

// The sampler's replay state, taken once its epoch has started (a new
// epoch marks it missing with consumed = -1).
void DataLoader::Impl::capture_sampler_state() {
  if (sampler_state.consumed < 0) {
    sampler_state = batches->state();
  }
}

// Abandons the epoch's batches in flight, keeping the workers: queued
// tasks are dropped, running ones finish and their results are dropped.
void DataLoader::Impl::drain() {
  std::unique_lock<std::mutex> lock(mu);
  for (auto& q : queues) {
    q.clear();
  }
  wait_for_workers(lock, [&] { return running == 0; });
  results.clear();
}

void DataLoader::Impl::begin_epoch() {
  if (active) {
    // begin() in the middle of an epoch ends it.
    if (opt.persistent_workers()) {
      drain();
    } else {
      stop_workers();
    }
  }
  active = true;
  finished = false;
  sampler_done = false;
  current = Batch{};
  std::vector<std::vector<uint8_t>> resume;
  const bool have_workers = !threads.empty();
  if (pending) {
    LoaderState s = std::move(*pending);
    pending.reset();
    if (have_workers) {
      stop_workers();
    }
    epoch = s.epoch;
    base_seed = s.base_seed;
    if (opt.generator() && !s.generator.empty()) {
      set_generator_bytes(*opt.generator(), s.generator);
    }
    batches->restore(s.sampler);
    // Replay the delivered batches' draws without loading them.
    dispatched = delivered = 0;
    delivered_indices = 0;
    for (int64_t k = 0; k < s.batches; ++k) {
      std::optional<std::vector<int64_t>> b = batches->next();
      if (!b) {
        sampler_done = true;
        break;
      }
      delivered_indices += int64_t(b->size());
      ++dispatched;
      ++delivered;
    }
    sampler_state = s.sampler;
    sampler_state.consumed = delivered_indices;
    worker_generators = s.worker_generators;
    worker_generators.resize(size_t(num_workers));
    if (opt.seed_mode() == SeedMode::PyTorch) {
      resume = worker_generators;
    }
  } else {
    ++epoch;
    // Persistent workers keep the base seed and their generators across
    // epochs, also after load_state_dict at an epoch boundary (the
    // workers then restart from the generators the state holds).
    const bool continuing =
        opt.persistent_workers() && (have_workers || keep_base_seed);
    if (!continuing) {
      base_seed = opt.base_seed()
          ? *opt.base_seed()
          : draw_seed(opt.generator() ? *opt.generator() : default_generator());
      worker_generators.assign(size_t(num_workers), {});
    } else if (!have_workers && opt.seed_mode() == SeedMode::PyTorch) {
      worker_generators.resize(size_t(num_workers));
      resume = worker_generators;
    }
    keep_base_seed = false;
    batches->reset();
    dispatched = delivered = delivered_indices = 0;
    sampler_state = SamplerState{};
    sampler_state.consumed = -1;
  }
  if (num_workers > 0) {
    if (threads.empty()) {
      start_workers(resume);
    }
    dispatch();
  }
}

// Loads the next batch into current; false at the end of the epoch.
bool DataLoader::Impl::next_batch() {
  trace::Suppress untraced; // see DataLoader::begin
  if (!active) {
    return false;
  }
  Result r;
  if (num_workers == 0) {
    if (sampler_done) {
      return finish_epoch();
    }
    std::optional<std::vector<int64_t>> b = batches->next();
    if (!b) {
      sampler_done = true;
      return finish_epoch();
    }
    capture_sampler_state();
    ++dispatched;
    r = run_task({dispatched - 1, std::move(*b)}, -1);
    if (r.error) {
      active = false;
      std::rethrow_exception(r.error);
    }
  } else {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (sampler_done && delivered == dispatched) {
        lock.unlock();
        return finish_epoch();
      }
      wait_for_workers(lock, [&] { return results.count(delivered) > 0; });
      r = std::move(results[delivered]);
      results.erase(delivered);
    }
    if (r.error) {
      // An interrupt in a sample reaches the caller as it is (the epoch
      // stays in flight: the next begin() ends it).
      try {
        std::rethrow_exception(r.error);
      } catch (const Interrupted&) {
        throw;
      } catch (...) {
      }
      active = false;
      stop_workers();
      std::ostringstream msg;
      msg << "[DataLoader] worker " << r.worker;
      if (r.sample >= 0) {
        msg << " failed on sample " << r.sample;
      } else {
        msg << " failed";
      }
      msg << ": " << r.message;
      throw WorkerError(msg.str(), r.worker, r.sample);
    }
    if (r.worker >= 0 && opt.seed_mode() == SeedMode::PyTorch) {
      worker_generators[size_t(r.worker)] = std::move(r.generator);
    }
  }
  ++delivered;
  delivered_indices += r.indices;
  current = std::move(r.batch);
  if (num_workers > 0) {
    dispatch();
  }
  return true;
}

bool DataLoader::Impl::finish_epoch() {
  active = false;
  finished = true;
  current = Batch{};
  if (!opt.persistent_workers()) {
    stop_workers();
  }
  return false;
}

namespace {

// The options' checks and the batch sampler they describe, for a dataset of
// size samples.
constexpr int kMaxLoaderWorkers = 1024;

std::shared_ptr<BatchSampler> batch_sampler_of(
    int64_t size,
    const DataLoaderOptions& options) {
  const char* name = "DataLoader";
  DITTO_CHECK(
      options.num_workers() >= 0,
      ValueError,
      name,
      "num_workers option should be non-negative, got ",
      options.num_workers());
  // Workers are threads of this process: far more than a machine has
  // cores only costs memory and start-up time (100,000 threads took minutes
  // to start, or failed part-way), so the count is bounded up front.
  DITTO_CHECK(
      options.num_workers() <= kMaxLoaderWorkers,
      ValueError,
      name,
      "num_workers=",
      options.num_workers(),
      " is more worker threads than a loader starts (at most ",
      kMaxLoaderWorkers,
      "); use fewer workers");
  DITTO_CHECK(
      options.prefetch_factor() > 0,
      ValueError,
      name,
      "prefetch_factor option should be positive, got ",
      options.prefetch_factor());
  DITTO_CHECK(
      !options.persistent_workers() || options.num_workers() > 0,
      ValueError,
      name,
      "persistent_workers option needs num_workers > 0");
  if (options.batch_sampler()) {
    DITTO_CHECK(
        options.batch_size() == 1 && !options.shuffle() && !options.sampler() &&
            !options.drop_last(),
        ValueError,
        name,
        "batch_sampler option is mutually exclusive with batch_size, "
        "shuffle, sampler, and drop_last");
    return options.batch_sampler();
  }
  DITTO_CHECK(
      !(options.sampler() && options.shuffle()),
      ValueError,
      name,
      "sampler option is mutually exclusive with shuffle");
  std::shared_ptr<Sampler> sampler = options.sampler();
  if (!sampler) {
    if (options.shuffle()) {
      sampler = std::make_shared<RandomSampler>(
          size, false, std::nullopt, options.generator());
    } else {
      sampler = std::make_shared<SequentialSampler>(size);
    }
  }
  return std::make_shared<BatchSampler>(
      sampler, options.batch_size(), options.drop_last());
}

} // namespace

DataLoader::DataLoader(
    std::shared_ptr<const Dataset> dataset,
    DataLoaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  DITTO_CHECK(dataset != nullptr, ValueError, "DataLoader", "null dataset");
  impl_->batches = batch_sampler_of(dataset->size(), options);
  impl_->collate = options.collate() ? options.collate() : default_collate;
  impl_->num_workers = options.num_workers();
  impl_->dataset = std::move(dataset);
  impl_->opt = std::move(options);
}

DataLoader::DataLoader(
    int64_t dataset_size,
    BatchFetch fetch,
    DataLoaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  const char* name = "DataLoader";
  DITTO_CHECK(fetch != nullptr, ValueError, name, "null batch fetch");
  DITTO_CHECK(
      dataset_size >= 0,
      ValueError,
      name,
      "dataset size should be non-negative, got ",
      dataset_size);
  DITTO_CHECK(
      !options.collate(),
      ValueError,
      name,
      "collate option is not used with a batch fetch (it collates)");
  impl_->batches = batch_sampler_of(dataset_size, options);
  impl_->fetch = std::move(fetch);
  impl_->num_workers = options.num_workers();
  impl_->opt = std::move(options);
}

DataLoader::~DataLoader() = default;

DataLoader::Iterator DataLoader::begin() {
  // Nothing the loader does is traced: the sampler draws when batches are
  // dispatched, which runs ahead of the training by a number of batches
  // that depends on the workers (the trainer records each batch instead).
  trace::Suppress untraced;
  impl_->begin_epoch();
  return Iterator(this, !impl_->next_batch());
}

DataLoader::Iterator DataLoader::end() {
  return Iterator(this, true);
}

int64_t DataLoader::size() const {
  return impl_->batches->size();
}

void DataLoader::join() {
  impl_->stop_workers();
  impl_->active = false;
  impl_->current = Batch{};
}

void DataLoader::set_interrupt_check(std::function<void()> check) {
  impl_->interrupt_check = std::move(check);
}

bool DataLoader::stop_workers_within(std::chrono::milliseconds patience) {
  if (!impl_) {
    return true;
  }
  Impl& m = *impl_;
  {
    std::unique_lock<std::mutex> lock(m.mu);
    m.stop = true;
    for (auto& q : m.queues) {
      q.clear();
    }
    m.work_cv.notify_all();
    if (!m.done_cv.wait_for(lock, patience, [&] { return m.running == 0; })) {
      lock.unlock();
      // A worker stuck in a sample still uses the state: it is left to it.
      for (auto& t : m.threads) {
        t.detach();
      }
      m.threads.clear();
      (void)impl_.release();
      return false;
    }
  }
  m.stop_workers();
  return true;
}

const Batch& DataLoader::Iterator::operator*() const {
  return loader_->impl_->current;
}

const Batch* DataLoader::Iterator::operator->() const {
  return &loader_->impl_->current;
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  done_ = !loader_->impl_->next_batch();
  return *this;
}

LoaderState DataLoader::state_dict() const {
  const Impl& m = *impl_;
  if (m.pending) {
    return *m.pending; // loaded and not yet continued
  }
  LoaderState s;
  s.epoch = m.epoch;
  s.batches = m.delivered;
  s.epoch_done = m.finished;
  s.base_seed = m.base_seed;
  s.seed_mode = m.opt.seed_mode();
  s.num_workers = m.num_workers;
  s.sampler = m.sampler_state;
  s.sampler.consumed = m.delivered_indices;
  if (m.opt.generator()) {
    s.generator = generator_bytes(*m.opt.generator());
  }
  s.worker_generators = m.worker_generators;
  return s;
}

void DataLoader::load_state_dict(const LoaderState& state) {
  const char* name = "DataLoader.load_state_dict";
  DITTO_CHECK(
      state.seed_mode == impl_->opt.seed_mode(),
      ValueError,
      name,
      "the state is of a loader in another seed_mode");
  DITTO_CHECK(
      state.seed_mode == SeedMode::PerSample ||
          state.num_workers == impl_->num_workers,
      ValueError,
      name,
      "a PyTorch-mode loader resumes only with the same num_workers (state ",
      state.num_workers,
      ", loader ",
      impl_->num_workers,
      "); PerSample mode resumes with any");
  DITTO_CHECK(
      state.batches >= 0 && state.epoch >= 0 && state.num_workers >= 0 &&
          state.sampler.consumed >= 0 && state.sampler.epoch >= 0,
      ValueError,
      name,
      "negative counts in the state");
  Impl& m = *impl_;
  // Every generator blob is checked now, on scratch generators, so that a
  // bad state fails here and leaves the loader as it was (not at the next
  // begin(), after the resume position is gone).
  auto check_blob = [&](const std::vector<uint8_t>& blob,
                        Generator scratch,
                        const char* what) {
    try {
      set_generator_bytes(std::move(scratch), blob);
    } catch (const ValueError& e) {
      detail::throw_error<ValueError>(
          name, "invalid ", what, " in the state: ", e.what());
    }
  };
  auto kind_of = [](const std::vector<uint8_t>& blob) {
    // A CPU (mt19937) state has PyTorch's 5056 bytes; Philox's are others.
    return blob.size() == 5056 ? Generator() : Generator::philox(0);
  };
  if (m.opt.generator() && !state.generator.empty()) {
    check_blob(state.generator, m.opt.generator()->clone(), "loader generator");
  }
  if (!state.sampler.generator_state.empty()) {
    check_blob(
        state.sampler.generator_state,
        kind_of(state.sampler.generator_state),
        "sampler generator");
  }
  for (const auto& g : state.worker_generators) {
    if (!g.empty()) {
      check_blob(g, Generator(), "worker generator");
    }
  }
  m.active = false;
  m.stop_workers(); // workers restart from the state at the next begin()
  if (state.epoch_done || state.epoch == 0) {
    // Between epochs: the next begin() starts epoch + 1 as usual.
    m.pending.reset();
    m.epoch = state.epoch;
    m.base_seed = state.base_seed;
    m.finished = state.epoch_done;
    m.keep_base_seed = m.opt.persistent_workers() && state.epoch > 0;
    m.worker_generators = state.worker_generators;
    if (m.opt.generator() && !state.generator.empty()) {
      set_generator_bytes(*m.opt.generator(), state.generator);
    }
    return;
  }
  m.pending = state;
}
} // namespace ditto::data
