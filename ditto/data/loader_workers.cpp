// DataLoader's batches as they are loaded: the workers, the generator
// each sample runs under (docs/data.md), and SampleContext. The epochs and
// the loader's state are loader.cpp's.

#include "ditto/data/detail/loader_impl.h"

#include <chrono>
#include <exception>
#include <sstream>
#include <system_error>

#include "ditto/core/parallel.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/streams.h"
#include "ditto/trace/trace.h"

namespace ditto::data {
namespace {

thread_local std::optional<WorkerInfo> tls_worker_info;
thread_local std::optional<Generator> tls_sample_generator;

// The batch a BatchFetch is loading in this thread (for SampleContext).
struct FetchContext {
  SeedMode mode = SeedMode::PerSample;
  uint64_t base_seed = 0;
  int64_t epoch = 0;
  int64_t sample = -1; // the innermost SampleContext's index
};
thread_local FetchContext* tls_fetch = nullptr;

// Sets the current sample's generator for the scope.
class SampleScope {
 public:
  explicit SampleScope(Generator g) : previous_(tls_sample_generator) {
    tls_sample_generator = std::move(g);
  }
  ~SampleScope() {
    tls_sample_generator = previous_;
  }

 private:
  std::optional<Generator> previous_;
};

} // namespace

namespace loader_detail {

std::vector<uint8_t> generator_bytes(const Generator& g) {
  Tensor s = g.get_state();
  const uint8_t* p = s.data_ptr<uint8_t>();
  return std::vector<uint8_t>(p, p + s.numel());
}

void set_generator_bytes(Generator g, const std::vector<uint8_t>& bytes) {
  g.set_state(tensor<uint8_t>(bytes, {int64_t(bytes.size())}));
}

} // namespace loader_detail

using loader_detail::generator_bytes;
using loader_detail::set_generator_bytes;

WorkerError::WorkerError(const std::string& message, int worker, int64_t sample)
    : Error(message), worker_(worker), sample_(sample) {}

Batch default_collate(std::vector<Example<>> examples) {
  DITTO_CHECK(!examples.empty(), ValueError, "default_collate", "no examples");
  std::vector<Tensor> data, target;
  data.reserve(examples.size());
  target.reserve(examples.size());
  for (Example<>& e : examples) {
    data.push_back(std::move(e.data));
    target.push_back(std::move(e.target));
  }
  return {stack(data), stack(target)};
}

std::optional<WorkerInfo> get_worker_info() {
  return tls_worker_info;
}

Generator sample_generator() {
  return tls_sample_generator ? *tls_sample_generator : default_generator();
}

uint64_t sample_seed(uint64_t base_seed, int64_t epoch, int64_t index) {
  std::string name =
      "data.sample:" + std::to_string(epoch) + ":" + std::to_string(index);
  return random::derive_seed(base_seed, name);
}

struct SampleContext::State {
  FetchContext* fetch;
  int64_t previous_sample;
  std::optional<Generator> sample_generator;
  std::optional<GeneratorGuard> guard;
  bool swapped = false; // the sample generator was set
  std::optional<Generator> previous_generator;
};

SampleContext::SampleContext(int64_t index) {
  if (tls_fetch == nullptr) {
    return;
  }
  state_ = std::make_unique<State>();
  state_->fetch = tls_fetch;
  state_->previous_sample = tls_fetch->sample;
  tls_fetch->sample = index;
  if (tls_fetch->mode == SeedMode::PerSample) {
    Generator g = Generator::philox(
        sample_seed(tls_fetch->base_seed, tls_fetch->epoch, index));
    state_->guard.emplace(g);
    state_->previous_generator = tls_sample_generator;
    state_->swapped = true;
    tls_sample_generator = g;
  }
}

SampleContext::~SampleContext() {
  if (state_) {
    // The scope and guard restore in reverse order of their making.
    if (state_->swapped) {
      tls_sample_generator = state_->previous_generator;
    }
    state_->guard.reset();
    // A failure inside the scope keeps its sample for the report.
    if (std::uncaught_exceptions() == 0) {
      state_->fetch->sample = state_->previous_sample;
    }
  }
}

DataLoader::Impl::~Impl() {
  stop_workers();
}

// Loads one batch in this thread. In PerSample mode each sample runs
// under its own generator (also as the default generator, so code that
// draws from it is covered too).
DataLoader::Impl::Result DataLoader::Impl::run_task(
    const Task& task,
    int worker) {
  // Loading is not traced: workers run it in any order (the trainer
  // records each batch as it enters a step instead).
  trace::Suppress untraced;
  Result r;
  r.worker = worker;
  r.indices = int64_t(task.indices.size());
  std::vector<Example<>> examples;
  examples.reserve(task.indices.size());
  int64_t current_index = -1;
  if (fetch) {
    return run_fetch(task, std::move(r));
  }
  try {
    for (int64_t i : task.indices) {
      current_index = i;
      if (opt.seed_mode() == SeedMode::PerSample) {
        Generator g = Generator::philox(sample_seed(base_seed, epoch, i));
        GeneratorGuard guard(g);
        SampleScope scope(g);
        examples.push_back(dataset->get(i));
      } else {
        SampleScope scope(default_generator());
        examples.push_back(dataset->get(i));
      }
    }
    current_index = -1;
    r.batch = collate(std::move(examples));
  } catch (const std::exception& e) {
    r.error = std::current_exception();
    r.message = e.what();
    r.sample = current_index;
  } catch (...) {
    r.error = std::current_exception();
    r.message = "unknown exception";
    r.sample = current_index;
  }
  return r;
}

// Loads one batch through fetch: PerSample mode runs it under the
// batch's generator, and each SampleContext inside under its sample's.
DataLoader::Impl::Result DataLoader::Impl::run_fetch(
    const Task& task,
    Result r) {
  FetchContext context{opt.seed_mode(), base_seed, epoch, -1};
  FetchContext* previous = tls_fetch;
  tls_fetch = &context;
  try {
    if (opt.seed_mode() == SeedMode::PerSample) {
      const std::string name =
          "data.batch:" + std::to_string(epoch) + ":" + std::to_string(task.k);
      Generator g = Generator::philox(random::derive_seed(base_seed, name));
      GeneratorGuard guard(g);
      SampleScope scope(g);
      r.batch = fetch(task.indices);
    } else {
      SampleScope scope(default_generator());
      r.batch = fetch(task.indices);
    }
  } catch (const std::exception& e) {
    r.error = std::current_exception();
    r.message = e.what();
    r.sample = context.sample;
  } catch (...) {
    r.error = std::current_exception();
    r.message = "unknown exception";
    r.sample = context.sample;
  }
  tls_fetch = previous;
  return r;
}

void DataLoader::Impl::worker_main(
    int w,
    uint64_t seed,
    std::vector<uint8_t> resume_state) {
  SerialScope serial;
  Generator gen;
  gen.manual_seed(seed);
  GeneratorGuard guard(gen);
  tls_worker_info = WorkerInfo{w, num_workers, seed, dataset};
  std::exception_ptr init_error;
  std::string init_message;
  try {
    if (opt.worker_init_fn()) {
      opt.worker_init_fn()(w);
    }
    if (!resume_state.empty()) {
      set_generator_bytes(gen, resume_state);
    }
  } catch (const std::exception& e) {
    init_error = std::current_exception();
    init_message = std::string("worker_init_fn: ") + e.what();
  } catch (...) {
    init_error = std::current_exception();
    init_message = "worker_init_fn: unknown exception";
  }
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu);
      work_cv.wait(lock, [&] { return stop || !queues[size_t(w)].empty(); });
      if (stop) {
        break;
      }
      task = std::move(queues[size_t(w)].front());
      queues[size_t(w)].pop_front();
      ++running;
    }
    Result r;
    if (init_error) {
      r.worker = w;
      r.error = init_error;
      r.message = init_message;
    } else {
      r = run_task(task, w);
      if (opt.seed_mode() == SeedMode::PyTorch) {
        r.generator = generator_bytes(gen);
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    results[task.k] = std::move(r);
    --running;
    done_cv.notify_all();
  }
  tls_worker_info.reset();
}

void DataLoader::Impl::start_workers(
    const std::vector<std::vector<uint8_t>>& resume) {
  stop = false;
  queues.assign(size_t(num_workers), {});
  for (int w = 0; w < num_workers; ++w) {
    std::vector<uint8_t> state =
        size_t(w) < resume.size() ? resume[size_t(w)] : std::vector<uint8_t>{};
    try {
      threads.emplace_back(
          [this, w, state] { worker_main(w, base_seed + uint64_t(w), state); });
    } catch (const std::system_error& e) {
      // The system has no more threads to give: the workers started so
      // far are stopped and joined, so nothing is left running and a
      // later loader can start (they used to stay, and exit waited on
      // them).
      stop_workers();
      detail::throw_error<ValueError>(
          "DataLoader",
          "could not start worker ",
          w,
          " of num_workers=",
          num_workers,
          " (",
          e.what(),
          "); use fewer workers");
    }
  }
}

void DataLoader::Impl::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  work_cv.notify_all();
  for (auto& t : threads) {
    t.join();
  }
  threads.clear();
  std::lock_guard<std::mutex> lock(mu);
  queues.clear();
  results.clear();
}

} // namespace ditto::data
