// ditto.utils.data's engine: the C++ DataLoader (ditto/data/loader.h)
// driving Python datasets, samplers, collate functions and worker_init_fn.
// Workers are the loader's C++ threads; they take the GIL only to call
// Python code, and a C++ dataset (FashionMNIST) with the default collate
// takes no GIL at all. The Python objects travel through the loader as
// Payloads whose deleter takes the GIL. The Python side
// (python/ditto/utils/data/) wraps each call so that exceptions come back
// as values, with their traceback, and re-raises them in the caller.

#include <chrono>
#include <pybind11/functional.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "python/src/common.h"

namespace ditto::python {
namespace {

// The GIL's manners in a loader. The caller's thread waits for a batch with
// the GIL released and must take it back to hand the batch to Python; the
// workers, taking the GIL sample after sample, would win most of those races
// (a waiting thread gets the GIL by force only after the 5 ms switch
// interval: a batch every 5 ms). So while the caller waits for the GIL, the
// workers hold back before taking it.
//
// Workers also run their Python one at a time (python_turn): the ops a
// dataset calls release the GIL, and a second worker taking it in that
// window makes the first wait for the switch interval to get it back (a
// convoy: 2 workers gave a third of 1 worker's throughput). With the turn,
// a worker's op still lets the caller's thread run.
struct GilGate {
  std::atomic<int> caller_waiting{0};
  std::mutex python_turn;
};

// The caller's side: marks the wait for the GIL at the end of a released
// section (constructed inside it, destroyed after the GIL is back).
class CallerWaits {
 public:
  explicit CallerWaits(GilGate& gate) : gate_(gate) {
    gate_.caller_waiting.fetch_add(1, std::memory_order_acq_rel);
  }
  ~CallerWaits() {
    gate_.caller_waiting.fetch_sub(1, std::memory_order_acq_rel);
  }
  CallerWaits(const CallerWaits&) = delete;
  CallerWaits& operator=(const CallerWaits&) = delete;

 private:
  GilGate& gate_;
};

// A worker thread's Python thread state, kept from one GIL acquisition to
// the next (made at the first, freed when the thread ends).
struct KeptThreadState {
  bool kept = false;
  ~KeptThreadState() {
    if (kept && Py_IsInitialized() && !_Py_IsFinalizing()) {
      py::gil_scoped_acquire gil;
      gil.dec_ref();
    }
  }
};
thread_local KeptThreadState tls_thread_state;

// Takes the GIL for Python code called by the loader (in a worker, or in
// the caller's thread with num_workers=0).
class LoaderGil {
 public:
  explicit LoaderGil(GilGate& gate) {
    const bool worker = data::get_worker_info().has_value();
    if (worker) {
      turn_ = std::unique_lock<std::mutex>(gate.python_turn);
      while (gate.caller_waiting.load(std::memory_order_acquire) > 0) {
        std::this_thread::yield();
      }
    }
    // At interpreter exit a thread that takes the GIL is ended by
    // pthread_exit, which C++ frames cannot unwind through: refuse instead.
    DITTO_CHECK(
        !_Py_IsFinalizing(), Error, "DataLoader", "the interpreter is exiting");
    gil_.emplace();
    if (worker && !tls_thread_state.kept) {
      gil_->inc_ref();
      tls_thread_state.kept = true;
    }
  }

 private:
  std::unique_lock<std::mutex> turn_; // released after the GIL
  std::optional<py::gil_scoped_acquire> gil_;
};

// A Python object kept by C++ code that may drop it in any thread: the
// reference is released with the GIL held.
data::Payload hold(py::object obj) {
  return data::Payload(new py::object(std::move(obj)), [](void* p) {
    if (!Py_IsInitialized()) {
      return; // at exit: the interpreter took its objects with it
    }
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

const py::object& held(const data::Payload& p) {
  return *static_cast<const py::object*>(p.get());
}

// A C++ transform as a Python object.
struct NativeTransform {
  data::Transform fn;
};

// Runs Python code for the loader (the GIL held): a KeyboardInterrupt it
// raises becomes data::Interrupted, which the loader passes to the caller
// as it is (Python sees KeyboardInterrupt again), not a sample's failure.
template <typename F>
py::object passing_interrupts(F&& f) {
  try {
    return f();
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt)) {
      throw data::Interrupted(
          std::string("KeyboardInterrupt in the dataset: ") + e.what());
    }
    throw;
  }
}

// A map-style Python dataset: fetch(index) returns the sample (the Python
// side's wrapper around dataset[index]).
class PyDataset : public data::Dataset {
 public:
  PyDataset(
      py::object dataset,
      py::object fetch,
      int64_t size,
      std::shared_ptr<GilGate> gate)
      : dataset_(hold(std::move(dataset))),
        fetch_(hold(std::move(fetch))),
        size_(size),
        gate_(std::move(gate)) {}
  int64_t size() const override {
    return size_;
  }
  data::Example<> get(int64_t index) const override {
    LoaderGil gil(*gate_);
    data::Example<> e;
    e.payload = hold(passing_interrupts([&] { return held(fetch_)(index); }));
    return e;
  }
  const py::object& dataset() const {
    return held(dataset_);
  }

 private:
  data::Payload dataset_, fetch_;
  int64_t size_;
  std::shared_ptr<GilGate> gate_;
};

// Any Python iterable of indices with a length, as a sampler. Its state is
// the number of indices handed out: restoring re-iterates and skips them
// (exact for a sampler whose order its own state fixes).
class PySampler : public data::Sampler {
 public:
  explicit PySampler(py::object sampler) : sampler_(hold(std::move(sampler))) {}
  void reset() override {
    py::gil_scoped_acquire gil;
    iterator_ = hold(py::iter(held(sampler_)));
    consumed_ = 0;
  }
  std::optional<int64_t> next() override {
    py::gil_scoped_acquire gil;
    if (!iterator_) {
      iterator_ = hold(py::iter(held(sampler_)));
    }
    PyObject* item = PyIter_Next(held(iterator_).ptr());
    if (item == nullptr) {
      if (PyErr_Occurred()) {
        throw py::error_already_set();
      }
      return std::nullopt;
    }
    py::object index = py::reinterpret_steal<py::object>(item);
    ++consumed_;
    return index.cast<int64_t>();
  }
  int64_t size() const override {
    py::gil_scoped_acquire gil;
    return int64_t(py::len(held(sampler_)));
  }
  data::SamplerState state() const override {
    data::SamplerState s;
    s.consumed = consumed_;
    return s;
  }
  void restore(const data::SamplerState& state) override {
    reset();
    for (int64_t i = 0; i < state.consumed; ++i) {
      if (!next()) {
        break;
      }
    }
  }

 private:
  data::Payload sampler_, iterator_;
  int64_t consumed_ = 0;
};

std::shared_ptr<data::Sampler> as_sampler(const py::object& obj) {
  if (py::isinstance<data::Sampler>(obj)) {
    return obj.cast<std::shared_ptr<data::Sampler>>();
  }
  return std::make_shared<PySampler>(obj);
}

data::SeedMode seed_mode_of(const std::string& name) {
  if (name == "per_sample") {
    return data::SeedMode::PerSample;
  }
  if (name == "pytorch") {
    return data::SeedMode::PyTorch;
  }
  throw ValueError(
      "[DataLoader] seed_mode must be 'per_sample' or 'pytorch', got '" + name +
      "'");
}

// One DataLoader and its epoch in progress, as the Python iterator sees it.
class LoaderCore {
 public:
  LoaderCore(
      std::shared_ptr<const data::Dataset> dataset,
      data::DataLoaderOptions options,
      bool python_batches,
      std::shared_ptr<GilGate> gate)
      : python_batches_(python_batches),
        keep_gil_(python_batches && options.num_workers() == 0),
        gate_(std::move(gate)) {
    py::gil_scoped_release nogil;
    loader_ = std::make_unique<data::DataLoader>(
        std::move(dataset), std::move(options));
    // Ctrl-C while this thread waits for a worker's batch: Python's signal
    // handler only sets a flag, so the wait looks at it every 100 ms.
    loader_->set_interrupt_check([] {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        throw py::error_already_set();
      }
    });
  }
  ~LoaderCore() {
    // Joining the workers waits for Python code they run.
    py::gil_scoped_release nogil;
    loader_.reset();
  }
  // Starts an epoch (and its workers' prefetching); the first next()
  // returns its first batch.
  void begin() {
    data::DataLoader& l = live();
    loading([&] {
      started_ = false;
      it_ = l.begin();
      active_ = true;
    });
  }
  // The next batch, or None at the end of the epoch.
  py::object next() {
    if (!active_) {
      return py::none();
    }
    loading([&] {
      try {
        if (started_) {
          ++*it_;
        }
      } catch (...) {
        active_ = false;
        throw;
      }
      started_ = true;
      if (*it_ == loader_->end()) {
        active_ = false;
      }
    });
    if (!active_) {
      return py::none();
    }
    const data::Batch& b = **it_;
    if (python_batches_) {
      return held(b.payload);
    }
    return py::make_tuple(b.data, b.target);
  }
  int64_t size() const {
    return live().size();
  }
  // Stops the workers and frees the loader (at interpreter exit, before
  // threads can no longer take the GIL).
  void shutdown() {
    py::gil_scoped_release nogil;
    // A worker stuck in a sample (2 s, torch's grace) is left running: the
    // process ends without it instead of hanging (issue 61 item 10).
    if (loader_) {
      loader_->stop_workers_within(std::chrono::milliseconds(2000));
    }
    loader_.reset();
    active_ = false;
  }
  std::string state_dict() const {
    return live().state_dict().to_json();
  }
  void load_state_dict(const std::string& json) {
    data::LoaderState s = data::LoaderState::from_json(json);
    data::DataLoader& l = live();
    py::gil_scoped_release nogil;
    l.load_state_dict(s);
    active_ = false;
  }

 private:
  std::unique_ptr<data::DataLoader> loader_;
  std::optional<data::DataLoader::Iterator> it_;
  data::DataLoader& live() const {
    DITTO_CHECK(
        loader_ != nullptr,
        Error,
        "DataLoader",
        "shut down (the interpreter is exiting)");
    return *loader_;
  }

  // Runs the loader's part of begin()/next(). Workers (or C++ code alone)
  // load with the GIL released, and the caller goes first when it wants it
  // back; a Python dataset loaded in this thread keeps the GIL throughout
  // (as torch's loop does), instead of taking it sample by sample.
  template <typename F>
  void loading(F&& f) {
    if (keep_gil_) {
      f();
      return;
    }
    std::optional<CallerWaits> waits;
    py::gil_scoped_release nogil;
    try {
      f();
    } catch (...) {
      waits.emplace(*gate_);
      throw;
    }
    waits.emplace(*gate_);
  }

  bool python_batches_;
  bool keep_gil_;
  std::shared_ptr<GilGate> gate_;
  bool started_ = false, active_ = false;
};

std::unique_ptr<LoaderCore> make_loader(
    const py::object& dataset,
    int64_t size,
    const py::object& fetch,
    const py::object& collate,
    int64_t batch_size,
    bool shuffle,
    const py::object& sampler,
    int num_workers,
    bool drop_last,
    std::optional<Generator> generator,
    const py::object& worker_init_fn,
    int prefetch_factor,
    bool persistent_workers,
    const std::string& seed_mode) {
  data::DataLoaderOptions o;
  o.batch_size(batch_size);
  o.shuffle(shuffle);
  o.num_workers(num_workers);
  o.drop_last(drop_last);
  o.generator(std::move(generator));
  o.prefetch_factor(prefetch_factor);
  o.persistent_workers(persistent_workers);
  o.seed_mode(seed_mode_of(seed_mode));
  if (!sampler.is_none()) {
    o.sampler(as_sampler(sampler));
  }
  auto gate = std::make_shared<GilGate>();
  if (!worker_init_fn.is_none()) {
    data::Payload fn = hold(worker_init_fn);
    o.worker_init_fn([fn, gate](int worker) {
      LoaderGil gil(*gate);
      held(fn)(worker);
    });
  }
  // A C++ dataset with the default collate runs without the GIL.
  if (py::isinstance<data::Dataset>(dataset) && collate.is_none()) {
    return std::make_unique<LoaderCore>(
        dataset.cast<std::shared_ptr<data::Dataset>>(),
        std::move(o),
        false,
        gate);
  }
  data::Payload fn = hold(collate);
  o.collate([fn, gate](std::vector<data::Example<>> examples) {
    LoaderGil gil(*gate);
    py::list samples(examples.size());
    for (size_t i = 0; i < examples.size(); ++i) {
      samples[i] = held(examples[i].payload);
    }
    examples.clear(); // their references go with the GIL held
    data::Batch b;
    b.payload = hold(passing_interrupts([&] { return held(fn)(samples); }));
    return b;
  });
  return std::make_unique<LoaderCore>(
      std::make_shared<PyDataset>(dataset, fetch, size, gate),
      std::move(o),
      true,
      gate);
}

// Iterating a C++ sampler from Python (list(RandomSampler(...))).
py::list sampler_indices(data::Sampler& s) {
  std::vector<int64_t> out;
  {
    py::gil_scoped_release nogil;
    s.reset();
    while (std::optional<int64_t> i = s.next()) {
      out.push_back(*i);
    }
  }
  py::list l;
  for (int64_t i : out) {
    l.append(i);
  }
  return l;
}

} // namespace

void init_data(py::module_& m) {
  py::module_ d = m.def_submodule("data", "ditto.utils.data's engine");
  py::class_<data::Dataset, std::shared_ptr<data::Dataset>>(d, "Dataset")
      .def("__len__", &data::Dataset::size)
      .def(
          "__getitem__",
          [](const data::Dataset& ds, int64_t i) {
            int64_t n = ds.size();
            if (i < -n || i >= n) {
              throw IndexError(
                  "[Dataset] index " + std::to_string(i) +
                  " is out of range for a dataset of " + std::to_string(n) +
                  " samples");
            }
            data::Example<> e = ds.get(i < 0 ? i + n : i);
            return std::make_pair(e.data, e.target); // cast with the GIL
          },
          ReleaseGil());
  py::class_<data::MNIST, data::Dataset, std::shared_ptr<data::MNIST>>(
      d, "MNIST")
      .def(py::init<std::string, bool>(), py::arg("root"), py::arg("train"))
      .def_property_readonly("data", &data::MNIST::images)
      .def_property_readonly("targets", &data::MNIST::labels);
  py::class_<
      data::FashionMNIST,
      data::MNIST,
      std::shared_ptr<data::FashionMNIST>>(d, "FashionMNIST")
      .def(py::init<std::string, bool>(), py::arg("root"), py::arg("train"));
  d.attr("FASHION_MNIST_ROOT") = data::kFashionMNISTRoot;

  // The C++ transforms (ditto/data/transforms.h): applied by a MapDataset,
  // they keep a C++ dataset's loading free of the GIL.
  py::class_<NativeTransform>(d, "Transform")
      .def(
          "__call__",
          [](const NativeTransform& t, const Tensor& x) { return t.fn(x); },
          ReleaseGil());
  d.def("Normalize", [](std::vector<double> mean, std::vector<double> std) {
    return NativeTransform{data::Normalize(std::move(mean), std::move(std))};
  });
  d.def("RandomCrop", [](int64_t size, int64_t padding) {
    return NativeTransform{data::RandomCrop(size, padding)};
  });
  d.def("RandomHorizontalFlip", [](double p) {
    return NativeTransform{data::RandomHorizontalFlip(p)};
  });
  d.def("Compose", [](const std::vector<NativeTransform>& ts) {
    std::vector<data::Transform> fns;
    for (const NativeTransform& t : ts) {
      fns.push_back(t.fn);
    }
    return NativeTransform{data::Compose(std::move(fns))};
  });
  py::class_<
      data::MapDataset,
      data::Dataset,
      std::shared_ptr<data::MapDataset>>(d, "MapDataset")
      .def(py::init([](std::shared_ptr<data::Dataset> ds,
                       const std::optional<NativeTransform>& t,
                       const std::optional<NativeTransform>& target_t) {
        return std::make_shared<data::MapDataset>(
            std::move(ds),
            t ? t->fn : data::Transform(),
            target_t ? target_t->fn : data::Transform());
      }));

  py::class_<data::Sampler, std::shared_ptr<data::Sampler>>(d, "Sampler")
      .def("__len__", &data::Sampler::size)
      .def("indices", &sampler_indices);
  py::class_<
      data::SequentialSampler,
      data::Sampler,
      std::shared_ptr<data::SequentialSampler>>(d, "SequentialSampler")
      .def(py::init<int64_t>());
  py::class_<
      data::RandomSampler,
      data::Sampler,
      std::shared_ptr<data::RandomSampler>>(d, "RandomSampler")
      .def(py::init<
           int64_t,
           bool,
           std::optional<int64_t>,
           std::optional<Generator>>());
  py::class_<
      data::DistributedSampler,
      data::Sampler,
      std::shared_ptr<data::DistributedSampler>>(d, "DistributedSampler")
      .def(py::init<int64_t, int64_t, int64_t, bool, uint64_t, bool>())
      .def("set_epoch", &data::DistributedSampler::set_epoch);

  py::class_<LoaderCore>(d, "LoaderCore")
      .def(py::init(&make_loader))
      .def("begin", &LoaderCore::begin)
      .def("next", &LoaderCore::next)
      .def("__len__", &LoaderCore::size)
      .def("shutdown", &LoaderCore::shutdown)
      .def("state_dict", &LoaderCore::state_dict)
      .def("load_state_dict", &LoaderCore::load_state_dict);

  // Inside a loader's worker: (id, num_workers, seed, dataset); else None.
  d.def("worker_info", []() -> py::object {
    std::optional<data::WorkerInfo> w = data::get_worker_info();
    if (!w) {
      return py::none();
    }
    py::object ds = py::none();
    if (auto p = std::dynamic_pointer_cast<const PyDataset>(w->dataset)) {
      ds = p->dataset();
    } else if (w->dataset) {
      ds = py::cast(std::const_pointer_cast<data::Dataset>(w->dataset));
    }
    return py::make_tuple(w->id, w->num_workers, w->seed, ds);
  });
  // The seed of the generator the current sample draws from (its own in
  // per-sample mode, the worker's default generator in pytorch mode).
  d.def(
      "sample_seed", []() { return data::sample_generator().initial_seed(); });
}

} // namespace ditto::python
