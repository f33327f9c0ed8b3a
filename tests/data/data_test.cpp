// The data pipeline: PyTorch's draws (golden fixtures from
// gen_data_golden.py), PerSample invariance across worker counts, resume,
// in-order delivery, failures, IDX files.

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "ditto/ditto.h"
#include "tests/error_of.h"

using namespace ditto;
using namespace ditto::data;
using nlohmann::json;

namespace {

// Runs the loader through one epoch, ignoring the batches.
void drain(DataLoader& loader) {
  for (const Batch& b : loader) {
    (void)b;
  }
}

const json& golden() {
  static const json g = [] {
    std::ifstream f(DITTO_TEST_DATA_DIR "/data/data_golden.json");
    EXPECT_TRUE(f.good());
    return json::parse(f).at("golden");
  }();
  return g;
}

uint64_t u64(const json& j) {
  return std::stoull(j.get<std::string>());
}

// As the Python Probe: data = one rand(1) draw (as float64) from the
// sample's generator, target = [index, initial_seed()].
class Probe : public Dataset {
 public:
  explicit Probe(int64_t n) : n_(n) {}
  int64_t size() const override {
    return n_;
  }
  Example<> get(int64_t i) const override {
    Tensor draw = rand({1}, kFloat32, sample_generator()).to(kFloat64);
    return {draw, tensor<int64_t>({i, int64_t(initial_seed())}, {2})};
  }

 private:
  int64_t n_;
};

std::vector<int64_t> column(const Tensor& t, int64_t c) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < t.size(0); ++r) {
    out.push_back(t.data_ptr<int64_t>()[r * t.size(1) + c]);
  }
  return out;
}

} // namespace

TEST(DataGolden, DrawSeedIsPyTorchsInt64Draw) {
  Generator g;
  g.manual_seed(0);
  EXPECT_EQ(draw_seed(g), u64(golden()["draw_seed"][0]));
  EXPECT_EQ(draw_seed(g), u64(golden()["draw_seed"][1]));
}

// Index order, worker seeds and the draws inside the workers equal
// PyTorch's, for several seeds, batch sizes, worker counts, with and
// without a loader generator, drop_last, persistent workers; and the
// generators end in the same state.
TEST(DataGolden, PyTorchModeLoaderMatchesPyTorch) {
  for (const json& c : golden()["loaders"]) {
    SCOPED_TRACE(c.dump().substr(0, 160));
    manual_seed(c["seed"].get<uint64_t>());
    DataLoaderOptions o;
    o.batch_size(c["batch"]);
    o.shuffle(c["shuffle"]);
    o.num_workers(c["workers"]);
    o.drop_last(c["drop_last"]);
    o.persistent_workers(c["persistent"]);
    o.seed_mode(SeedMode::PyTorch);
    std::optional<Generator> gen;
    if (c["use_gen"].get<bool>()) {
      gen = Generator();
      gen->manual_seed(c["seed"].get<uint64_t>() + 1000);
      o.generator(gen);
    }
    DataLoader loader(std::make_shared<Probe>(c["n"].get<int64_t>()), o);
    size_t b = 0;
    for (int e = 0; e < c["epochs"].get<int>(); ++e) {
      for (const Batch& batch : loader) {
        ASSERT_LT(b, c["batches"].size());
        const json& want = c["batches"][b++];
        EXPECT_EQ(
            column(batch.target, 0),
            want["indices"].get<std::vector<int64_t>>());
        std::vector<int64_t> seeds = column(batch.target, 1);
        for (size_t k = 0; k < seeds.size(); ++k) {
          EXPECT_EQ(uint64_t(seeds[k]), u64(want["seeds"][k]));
          EXPECT_EQ(
              batch.data.data_ptr<double>()[k], want["draws"][k].get<double>());
        }
      }
    }
    EXPECT_EQ(b, c["batches"].size());
    Tensor after = rand({2}).to(kFloat64);
    EXPECT_EQ(after.data_ptr<double>()[0], c["after"][0].get<double>());
    EXPECT_EQ(after.data_ptr<double>()[1], c["after"][1].get<double>());
    if (gen) {
      Tensor ga = rand({2}, kFloat32, gen).to(kFloat64);
      EXPECT_EQ(ga.data_ptr<double>()[0], c["gen_after"][0].get<double>());
    }
  }
}

TEST(DataGolden, Samplers) {
  for (const json& c : golden()["random_samplers"]) {
    Generator g;
    g.manual_seed(11);
    RandomSampler s(
        c["n"], c["replacement"], c["num_samples"].get<int64_t>(), g);
    for (const json& epoch : c["epochs"]) {
      s.reset();
      std::vector<int64_t> got;
      while (auto i = s.next()) {
        got.push_back(*i);
      }
      EXPECT_EQ(got, epoch.get<std::vector<int64_t>>());
    }
    Tensor after = rand({2}, kFloat32, g).to(kFloat64);
    EXPECT_EQ(after.data_ptr<double>()[0], c["gen_after"][0].get<double>());
  }
  for (const json& c : golden()["distributed"]) {
    DistributedSampler s(10, 3, c["rank"], c["shuffle"], 7, c["drop_last"]);
    for (size_t e = 0; e < 2; ++e) {
      s.set_epoch(int64_t(e));
      s.reset();
      std::vector<int64_t> got;
      while (auto i = s.next()) {
        got.push_back(*i);
      }
      EXPECT_EQ(got, c["epochs"][e].get<std::vector<int64_t>>()) << c.dump();
      EXPECT_EQ(int64_t(got.size()), s.size());
    }
  }
  EXPECT_THROW(DistributedSampler(10, 3, 3), ValueError);
  EXPECT_THROW(RandomSampler(0), ValueError);
  EXPECT_THROW(
      BatchSampler(std::make_shared<SequentialSampler>(3), 0, false),
      ValueError);
}

TEST(DataGolden, TransformsDrawAsTorchvision) {
  Transform aug = Compose({RandomCrop(6, 2), RandomHorizontalFlip()});
  Tensor img = arange(0, 64, 1, kFloat32).view({1, 8, 8});
  for (const json& c : golden()["transforms"]) {
    manual_seed(c["seed"].get<uint64_t>());
    Tensor out = aug(img).reshape({-1});
    ASSERT_EQ(out.numel(), int64_t(c["out"].size()));
    for (int64_t k = 0; k < out.numel(); ++k) {
      EXPECT_EQ(
          double(out.data_ptr<float>()[k]), c["out"][size_t(k)].get<double>());
    }
  }
  Tensor n = Normalize({0.2860}, {0.3530})(div(img, 64.0)).reshape({-1});
  for (int64_t k = 0; k < n.numel(); ++k) {
    EXPECT_EQ(
        double(n.data_ptr<float>()[k]),
        golden()["normalize"][size_t(k)].get<double>());
  }
  EXPECT_THROW(Normalize({0.5}, {0.0}), ValueError);
  EXPECT_THROW(RandomCrop(10)(img), ValueError);
}

namespace {

// A small image dataset with random augmentation: the data loaded depends
// on the sample's generator only.
std::shared_ptr<const Dataset> augmented(int64_t n) {
  Generator g;
  g.manual_seed(3);
  auto base = std::make_shared<TensorDataset>(
      rand({n, 1, 8, 8}, kFloat32, g), arange(0, n, 1, kInt64));
  return std::make_shared<MapDataset>(
      base,
      Compose(
          {RandomCrop(8, 2),
           RandomHorizontalFlip(),
           Normalize({0.5}, {0.25})}));
}

std::vector<Batch> run_epochs(DataLoader& loader, int epochs) {
  std::vector<Batch> out;
  for (int e = 0; e < epochs; ++e) {
    for (const Batch& b : loader) {
      out.push_back(b);
    }
  }
  return out;
}

// The samples, in order, as one tensor of data and one of targets.
std::pair<Tensor, Tensor> flatten(const std::vector<Batch>& batches) {
  std::vector<Tensor> d, t;
  for (const Batch& b : batches) {
    d.push_back(b.data);
    t.push_back(b.target);
  }
  return {cat(d), cat(t)};
}

DataLoaderOptions per_sample(int workers, int64_t batch = 5) {
  DataLoaderOptions o;
  o.batch_size(batch);
  o.shuffle(true);
  o.num_workers(workers);
  Generator g;
  g.manual_seed(42);
  o.generator(g);
  return o;
}

} // namespace

// R3: the same samples, augmentation included, for 0, 1, 2 and 3 workers
// and for another batch size.
TEST(DataLoaderTest, PerSampleIsTheSameForAnyWorkerCountAndBatchSize) {
  auto ds = augmented(37);
  DataLoader ref_loader(ds, per_sample(0));
  auto ref = flatten(run_epochs(ref_loader, 2));
  for (int workers : {1, 2, 3}) {
    for (int64_t batch : {5, 8}) {
      DataLoader loader(ds, per_sample(workers, batch));
      auto got = flatten(run_epochs(loader, 2));
      EXPECT_TRUE(equal(got.first, ref.first)) << workers << " workers";
      EXPECT_TRUE(equal(got.second, ref.second)) << workers << " workers";
    }
  }
  // Epochs differ (a new base seed, a new order).
  EXPECT_FALSE(
      equal(ref.second.narrow(0, 0, 37), ref.second.narrow(0, 37, 37)));
}

// Resume mid-epoch, through JSON, with another number of workers, gives
// exactly the remaining batches and then the next epoch.
TEST(DataLoaderTest, ResumeMidEpochEqualsTheUninterruptedRun) {
  auto ds = augmented(23);
  DataLoader full(ds, per_sample(2));
  std::vector<Batch> want = run_epochs(full, 2);
  for (int64_t stop_after : {0, 1, 3, 5}) {
    DataLoader first(ds, per_sample(2));
    std::vector<Batch> got;
    // The state after the batches used so far (a training step's
    // checkpoint), or of a loader never iterated.
    std::string saved = first.state_dict().to_json();
    for (const Batch& b : first) {
      if (stop_after == 0) {
        break;
      }
      got.push_back(b);
      if (int64_t(got.size()) == stop_after) {
        saved = first.state_dict().to_json();
        break;
      }
    }
    DataLoader second(ds, per_sample(3));
    second.load_state_dict(LoaderState::from_json(saved));
    auto rest = run_epochs(second, 2);
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_EQ(got.size(), want.size()) << stop_after;
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_TRUE(equal(got[k].data, want[k].data)) << stop_after << " " << k;
      EXPECT_TRUE(equal(got[k].target, want[k].target));
    }
  }
}

TEST(DataLoaderTest, ResumePyTorchModeWithTheSameWorkers) {
  auto ds = std::make_shared<Probe>(19);
  auto opts = [] {
    DataLoaderOptions o = per_sample(2, 3);
    o.seed_mode(SeedMode::PyTorch);
    return o;
  };
  DataLoader full(ds, opts());
  std::vector<Batch> want = run_epochs(full, 2);
  DataLoader first(ds, opts());
  std::vector<Batch> got;
  for (const Batch& b : first) {
    got.push_back(b);
    if (got.size() == 4) {
      break;
    }
  }
  LoaderState s = LoaderState::from_json(first.state_dict().to_json());
  DataLoader second(ds, opts());
  second.load_state_dict(s);
  auto rest = run_epochs(second, 2);
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_TRUE(equal(got[k].data, want[k].data)) << k;
    EXPECT_TRUE(equal(got[k].target, want[k].target)) << k;
  }
  DataLoaderOptions three = opts();
  three.num_workers(3);
  DataLoader other(ds, three);
  EXPECT_THROW(other.load_state_dict(s), ValueError);
  EXPECT_THROW(LoaderState::from_json("{\"format\": 1}"), ValueError);
  EXPECT_THROW(LoaderState::from_json("not json"), ValueError);
  // Integer fields that are floats or out of range are refused (a cast of
  // such a value would be undefined), and a good state still parses.
  const std::string text = first.state_dict().to_json();
  auto with = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    std::string t = text;
    return t.replace(at, from.size(), to);
  };
  const std::string workers =
      "\"num_workers\": " + std::to_string(first.state_dict().num_workers);
  for (const std::string bad :
       {"8.9e79", "1e300", "2.5", "18446744073709551615"}) {
    EXPECT_THROW(
        LoaderState::from_json(with(workers, "\"num_workers\": " + bad)),
        ValueError)
        << bad;
    EXPECT_THROW(
        LoaderState::from_json(
            with("\"consumed\": ", "\"consumed\": " + bad + ",\"x\":")),
        ValueError)
        << bad;
  }
  // num_workers must also fit an int and not be negative.
  for (const std::string bad : {"4294967296", "-1"}) {
    EXPECT_THROW(
        LoaderState::from_json(with(workers, "\"num_workers\": " + bad)),
        ValueError)
        << bad;
  }
  EXPECT_NO_THROW(LoaderState::from_json(text));
}

// Issue 17, defect 5: a state with an invalid generator blob is refused by
// load_state_dict itself, and the loader keeps its own position.
TEST(DataLoaderTest, CorruptStateIsRefusedAtLoadAndChangesNothing) {
  auto ds = std::make_shared<Probe>(19);
  auto opts = [] {
    DataLoaderOptions o = per_sample(2, 2);
    o.seed_mode(SeedMode::PyTorch);
    return o;
  };
  DataLoader full(ds, opts());
  std::vector<Batch> want = run_epochs(full, 1);
  DataLoader loader(ds, opts());
  std::vector<Batch> got;
  for (const Batch& b : loader) {
    got.push_back(b);
    if (got.size() == 3) {
      break;
    }
  }
  LoaderState good = loader.state_dict();
  ASSERT_FALSE(good.worker_generators.empty());
  for (int which = 0; which < 2; ++which) {
    LoaderState bad = good;
    // An mt19937 blob whose left/next are inconsistent.
    std::vector<uint8_t>& blob =
        which == 0 ? bad.worker_generators[0] : bad.sampler.generator_state;
    if (blob.empty()) {
      blob = good.worker_generators[0];
    }
    blob[8] = 0x70; // left = 624 + ...
    blob[9] = 0x02;
    blob[16] = 0x70;
    blob[17] = 0x02;
    try {
      loader.load_state_dict(LoaderState::from_json(bad.to_json()));
      ADD_FAILURE() << "accepted a corrupt state";
    } catch (const ValueError& e) {
      EXPECT_NE(
          std::string(e.what()).find("[DataLoader.load_state_dict] "
                                     "invalid"),
          std::string::npos)
          << e.what();
    }
  }
  // Nothing changed: the loader's state is the one before the attempts,
  // and a good state still resumes exactly.
  EXPECT_EQ(loader.state_dict().to_json(), good.to_json());
  DataLoader second(ds, opts());
  second.load_state_dict(LoaderState::from_json(good.to_json()));
  for (const Batch& b : second) {
    got.push_back(b);
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_TRUE(equal(got[k].data, want[k].data)) << k;
  }
}

namespace {

// Sleeps a random time before returning, so workers finish out of order.
class Slow : public Dataset {
 public:
  explicit Slow(int64_t n, int64_t fail_at = -1) : n_(n), fail_at_(fail_at) {}
  int64_t size() const override {
    return n_;
  }
  Example<> get(int64_t i) const override {
    int us;
    {
      std::lock_guard<std::mutex> lock(mu_);
      us = std::uniform_int_distribution<int>(0, 2000)(rng_);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(us));
    if (i == fail_at_) {
      throw std::runtime_error("bad sample");
    }
    return {scalar_tensor(double(i), kFloat32), scalar_tensor(i, kInt64)};
  }

 private:
  int64_t n_, fail_at_;
  mutable std::mutex mu_;
  mutable std::mt19937 rng_{std::random_device{}()};
};

} // namespace

TEST(DataLoaderTest, DeliversInSamplerOrderWhateverTheTiming) {
  DataLoaderOptions o;
  o.batch_size(2);
  o.num_workers(3);
  o.prefetch_factor(3);
  DataLoader loader(std::make_shared<Slow>(61), o);
  for (int e = 0; e < 2; ++e) {
    int64_t next = 0;
    for (const Batch& b : loader) {
      for (int64_t k = 0; k < b.target.numel(); ++k) {
        EXPECT_EQ(b.target.data_ptr<int64_t>()[k], next++);
      }
    }
    EXPECT_EQ(next, 61);
  }
}

TEST(DataLoaderTest, AWorkerFailureNamesTheWorkerAndSample) {
  DataLoaderOptions o;
  o.batch_size(4);
  o.num_workers(2);
  DataLoader loader(std::make_shared<Slow>(40, 13), o);
  try {
    drain(loader);
    FAIL() << "no error";
  } catch (const WorkerError& e) {
    // Sample 13 is in batch 3, which worker 3 % 2 loads.
    EXPECT_EQ(e.worker(), 1);
    EXPECT_EQ(e.sample(), 13);
    EXPECT_STREQ(
        e.what(), "[DataLoader] worker 1 failed on sample 13: bad sample");
  }
  // The loader is usable again: a new epoch fails the same way.
  EXPECT_THROW(drain(loader), WorkerError);
  // With no workers, the dataset's own exception.
  o.num_workers(0);
  DataLoader serial(std::make_shared<Slow>(40, 13), o);
  EXPECT_THROW(drain(serial), std::runtime_error);
  // worker_init_fn failures too.
  o.num_workers(2);
  o.worker_init_fn([](int id) {
    if (id == 1) {
      throw std::runtime_error("init");
    }
  });
  DataLoader init_fails(std::make_shared<Slow>(40), o);
  EXPECT_THROW(drain(init_fails), WorkerError);
}

TEST(DataLoaderTest, DestroyingMidEpochDoesNotHang) {
  for (bool persistent : {false, true}) {
    DataLoaderOptions o;
    o.batch_size(2);
    o.num_workers(3);
    o.persistent_workers(persistent);
    auto loader = std::make_unique<DataLoader>(std::make_shared<Slow>(100), o);
    auto it = loader->begin();
    ++it;
    // A new epoch in the middle of one ends it.
    int64_t count = 0;
    for (const Batch& b : *loader) {
      count += b.target.numel();
      if (count > 10) {
        break;
      }
    }
    loader.reset();
  }
}

TEST(DataLoaderTest, WorkersSeeTheirInfoAndRunInitFirst) {
  std::mutex mu;
  std::set<int> inits;
  DataLoaderOptions o;
  o.num_workers(2);
  o.seed_mode(SeedMode::PyTorch);
  o.worker_init_fn([&](int id) {
    auto info = get_worker_info();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->id, id);
    EXPECT_EQ(info->num_workers, 2);
    EXPECT_EQ(info->seed, initial_seed());
    EXPECT_EQ(get_num_threads(), 1);
    std::lock_guard<std::mutex> lock(mu);
    inits.insert(id);
  });
  DataLoader loader(std::make_shared<Probe>(6), o);
  drain(loader);
  EXPECT_EQ(inits, (std::set<int>{0, 1}));
  EXPECT_FALSE(get_worker_info().has_value());
  EXPECT_EQ(loader.size(), 6);
  DataLoaderOptions bad;
  bad.shuffle(true);
  bad.sampler(std::make_shared<SequentialSampler>(6));
  EXPECT_THROW(DataLoader(std::make_shared<Probe>(6), bad), ValueError);
  bad = DataLoaderOptions{};
  bad.num_workers(-1);
  EXPECT_THROW(DataLoader(std::make_shared<Probe>(6), bad), ValueError);
}

// ---- IDX files

namespace {

std::string idx_bytes(
    int dims,
    const std::vector<uint32_t>& sizes,
    size_t data,
    uint8_t fill) {
  std::string s = {0, 0, 8, char(dims)};
  for (uint32_t v : sizes) {
    s += char(v >> 24);
    s += char(v >> 16);
    s += char(v >> 8);
    s += char(v);
  }
  for (size_t i = 0; i < data; ++i) {
    s += char(uint8_t(fill + i));
  }
  return s;
}

void write_file(
    const std::filesystem::path& p,
    const std::string& bytes,
    bool gz) {
  if (gz) {
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, bytes.data(), unsigned(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(p, std::ios::binary) << bytes;
  }
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
        ("ditto_idx_" + std::to_string(::getpid()) + "_" +
         std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::filesystem::remove_all(path);
  }
};

// The ValueError's message (another error type fails the test).
const auto error_of = [](const auto& f) {
  return test::error_of<ValueError>(f);
};

} // namespace

TEST(DataMnist, ReadsGzippedAndPlainIdx) {
  for (bool gz : {true, false}) {
    TempDir d;
    const std::string ext = gz ? ".gz" : "";
    write_file(
        d.path / ("t10k-images-idx3-ubyte" + ext),
        idx_bytes(3, {3, 2, 2}, 12, 250),
        gz);
    write_file(
        d.path / ("t10k-labels-idx1-ubyte" + ext), idx_bytes(1, {3}, 3, 7), gz);
    MNIST m(d.path.string(), false);
    ASSERT_EQ(m.size(), 3);
    Example<> e = m.get(1);
    EXPECT_EQ(e.data.sizes(), (Shape{1, 2, 2}));
    // bytes 250, 251, ... wrap: sample 1 holds 254, 255, 0, 1.
    EXPECT_EQ(e.data.data_ptr<float>()[0], 254.0f / 255.0f);
    EXPECT_EQ(e.data.data_ptr<float>()[2], 0.0f);
    EXPECT_EQ(e.target.item<int64_t>(), 8);
    EXPECT_THROW(m.get(3), IndexError);
  }
}

TEST(DataMnist, BadFilesNameTheFileAndTheProblem) {
  TempDir d;
  auto images = d.path / "train-images-idx3-ubyte";
  auto labels = d.path / "train-labels-idx1-ubyte";
  write_file(labels, idx_bytes(1, {4}, 4, 0), false);
  write_file(images, idx_bytes(3, {4, 2, 2}, 15, 0), false);
  std::string e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(
      e.find(images.string() + ": truncated: the header promises 16 bytes"),
      std::string::npos)
      << e;
  write_file(images, idx_bytes(3, {4, 2, 2}, 17, 0), false);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(e.find("more data than the header's sizes"), std::string::npos)
      << e;
  write_file(images, idx_bytes(1, {4}, 4, 0), false);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(
      e.find("not an IDX file of unsigned bytes with 3 dims"),
      std::string::npos)
      << e;
  write_file(images, idx_bytes(3, {5, 2, 2}, 20, 0), false);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(e.find("has 5 images but"), std::string::npos) << e;
  // A gzip stream cut short.
  std::filesystem::remove(images);
  write_file(
      d.path / "gz.tmp",
      idx_bytes(3, {4, 2, 2}, 16, 0) + std::string(4000, 'x'),
      true);
  std::ifstream in(d.path / "gz.tmp", std::ios::binary);
  std::string gzdata((std::istreambuf_iterator<char>(in)), {});
  write_file(
      images.string() + ".gz", gzdata.substr(0, gzdata.size() / 2), false);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(e.find(images.string() + ".gz"), std::string::npos) << e;
  e = error_of([&] { MNIST((d.path / "nowhere").string()); });
  EXPECT_NE(e.find("cannot find"), std::string::npos) << e;
}

// Issue 17, defect 4: hostile headers and paths are ValueErrors naming the
// file, found before anything large is allocated.
TEST(DataMnist, HostileHeadersAndPathsAreValueErrors) {
  TempDir d;
  auto images = d.path / "train-images-idx3-ubyte";
  write_file(
      d.path / "train-labels-idx1-ubyte", idx_bytes(1, {4}, 4, 0), false);
  // A 16-byte file whose header promises 47 GB: truncated, not allocated.
  write_file(images, idx_bytes(3, {60000000, 28, 28}, 0, 0), false);
  std::string e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(
      e.find(
          images.string() +
          ": truncated: the header promises 47040000000 bytes"),
      std::string::npos)
      << e;
  // Sizes whose product overflows int64.
  write_file(images, idx_bytes(3, {4294967295u, 4294967295u, 4}, 0, 0), false);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(e.find(images.string() + ": implausible sizes"), std::string::npos)
      << e;
  // Found by fuzz/fuzz_idx: an empty dim before sizes whose product
  // overflows (the strides of an empty tensor).
  write_file(images, idx_bytes(3, {0, 4194828290u, 3657564160u}, 0, 0), false);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(e.find(images.string() + ": implausible sizes"), std::string::npos)
      << e;
  // A root path the OS refuses.
  e = error_of([&] { MNIST(std::string(5000, 'a')); });
  EXPECT_NE(e.find("[MNIST] cannot look for"), std::string::npos) << e;
}

// Issue 32: a label outside the 10 classes is refused when the dataset
// opens, naming the file, the label and its index; a directory where an IDX
// file should be is a ValueError naming it, not a read of its reported size.
TEST(DataMnist, OutOfRangeLabelsAndDirectoriesAreRefusedAtOpen) {
  TempDir d;
  auto images = d.path / "train-images-idx3-ubyte";
  auto labels = d.path / "train-labels-idx1-ubyte";
  write_file(images, idx_bytes(3, {4, 2, 2}, 16, 0), false);
  write_file(labels, idx_bytes(1, {4}, 4, 8), false); // 8, 9, 10, 11
  std::string e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(
      e.find(
          labels.string() +
          ": label 10 at index 2 is outside the 10 classes [0, 9]"),
      std::string::npos)
      << e;
  std::filesystem::remove(labels);
  std::filesystem::create_directory(labels);
  e = error_of([&] { MNIST(d.path.string()); });
  EXPECT_NE(
      e.find(labels.string() + ": it is a directory, not a regular file"),
      std::string::npos)
      << e;
}

// The real data from Debian's dataset-fashion-mnist (scripts/setup).
TEST(DataMnist, RealFashionMnist) {
  FashionMNIST train;
  ASSERT_EQ(train.size(), 60000);
  FashionMNIST test(kFashionMNISTRoot, false);
  ASSERT_EQ(test.size(), 10000);
  // The first training image is an ankle boot (class 9), the first test
  // image too.
  EXPECT_EQ(train.get(0).target.item<int64_t>(), 9);
  EXPECT_EQ(test.get(0).target.item<int64_t>(), 9);
  EXPECT_EQ(train.get(0).data.sizes(), (Shape{1, 28, 28}));
  EXPECT_EQ(int64_t(sum(train.labels()).item<int64_t>()), 60000 * 9 / 2);
}

// At an epoch boundary, with persistent workers (which keep the base seed
// and their generators across epochs), in both seed modes.
TEST(DataLoaderTest, ResumeBetweenEpochsWithPersistentWorkers) {
  auto ds = std::make_shared<Probe>(13);
  for (SeedMode mode : {SeedMode::PerSample, SeedMode::PyTorch}) {
    auto opts = [&] {
      DataLoaderOptions o = per_sample(2, 4);
      o.persistent_workers(true);
      o.seed_mode(mode);
      return o;
    };
    DataLoader full(ds, opts());
    std::vector<Batch> want = run_epochs(full, 3);
    DataLoader first(ds, opts());
    std::vector<Batch> got = run_epochs(first, 1);
    LoaderState s = LoaderState::from_json(first.state_dict().to_json());
    EXPECT_TRUE(s.epoch_done);
    DataLoader second(ds, opts());
    second.load_state_dict(s);
    // Saving again before continuing keeps the loaded state.
    EXPECT_EQ(second.state_dict().epoch, 1);
    auto rest = run_epochs(second, 2);
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_TRUE(equal(got[k].data, want[k].data)) << k;
      EXPECT_TRUE(equal(got[k].target, want[k].target)) << k;
    }
  }
}

TEST(DataLoaderTest, AFailedEpochIsNotReportedDone) {
  DataLoaderOptions o;
  o.batch_size(4);
  o.num_workers(2);
  DataLoader loader(std::make_shared<Slow>(40, 13), o);
  EXPECT_THROW(drain(loader), WorkerError);
  LoaderState s = loader.state_dict();
  EXPECT_FALSE(s.epoch_done);
  EXPECT_EQ(s.batches, 3);
  o.worker_init_fn([](int) { throw 42; }); // not a std::exception
  DataLoader odd(std::make_shared<Slow>(8), o);
  EXPECT_THROW(drain(odd), WorkerError);
}
