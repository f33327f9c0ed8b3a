// LibTorch's data API on ditto's loader (ditto/data/torch_loader.h): the
// batches and draws of LibTorch 1.13 (tests/libtorch/data.json, written by
// tests/libtorch/gen_data.cpp against libtorch-dev), ditto's worker
// invariance for random draws in get(), and the failures.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ditto/ditto.h"
#include "tests/error_of.h"

namespace torch = ditto;
using ditto::test::error_of;
using nlohmann::json;

namespace {

json fixture() {
  std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/libtorch/data.json");
  return json::parse(in);
}

std::vector<int64_t> ints(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kInt64).contiguous();
  return std::vector<int64_t>(
      c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::vector<double> floats(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(
      c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// Sample i is (i as a float, i), as the fixture's generator has it.
struct Indices : torch::data::datasets::Dataset<Indices> {
  explicit Indices(size_t n) : n(n) {}
  torch::data::Example<> get(size_t index) override {
    return {torch::full({1}, double(index)), torch::tensor(int64_t(index))};
  }
  torch::optional<size_t> size() const override {
    return n;
  }
  size_t n;
};

template <typename Sampler>
json epochs(size_t workers, bool drop_last) {
  torch::manual_seed(7);
  auto loader = torch::data::make_data_loader<Sampler>(
      Indices(10).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(4).workers(workers).drop_last(
          drop_last));
  json batches = json::array();
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (auto& batch : *loader) {
      batches.push_back(ints(batch.target));
    }
  }
  return {{"batches", batches}, {"rand_after", floats(torch::rand({3}))}};
}

TEST(LibTorchData, SamplersDrawAsLibTorchsAndLoadingDrawsNothingElse) {
  const json want = fixture();
  using torch::data::samplers::RandomSampler;
  using torch::data::samplers::SequentialSampler;
  EXPECT_EQ(epochs<RandomSampler>(0, false), want["random"]);
  EXPECT_EQ(epochs<RandomSampler>(2, false), want["random_workers"]);
  EXPECT_EQ(epochs<RandomSampler>(3, false), want["random_workers"]);
  json seq = epochs<SequentialSampler>(0, true);
  EXPECT_EQ(seq["batches"], want["sequential_drop_last"]["batches"]);
}

TEST(LibTorchData, MnistNormalizedAndStackedIsLibTorchs) {
  const json want = fixture()["mnist_test"];
  auto test = torch::data::datasets::MNIST(
                  torch::data::kFashionMNISTRoot,
                  torch::data::datasets::MNIST::Mode::kTest)
                  .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                  .map(torch::data::transforms::Stack<>());
  EXPECT_EQ(test.size().value(), want["size"].get<size_t>());
  EXPECT_FALSE(test.dataset().dataset().is_train());
  auto loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          std::move(test), 64);
  EXPECT_EQ(loader->size(), (10000 + 63) / 64);
  auto& first = *loader->begin();
  EXPECT_EQ(
      first.data.sizes(), want["batch_sizes"].get<std::vector<int64_t>>());
  EXPECT_EQ(first.data.dtype(), torch::kFloat32);
  EXPECT_EQ(ints(first.target), want["targets"].get<std::vector<int64_t>>());
  // Bit for bit: the same float32 arithmetic as LibTorch's.
  EXPECT_EQ(
      floats(first.data.select(0, 5).select(0, 0).select(0, 14)),
      want["row"].get<std::vector<double>>());
  auto train = torch::data::datasets::MNIST(torch::data::kFashionMNISTRoot);
  EXPECT_TRUE(train.is_train());
  EXPECT_EQ(train.images().sizes(), (torch::IntList{60000, 1, 28, 28}));
  EXPECT_EQ(train.targets().dtype(), torch::kInt64);
}

// Draws in get() come from the sample's own generator under ditto's loader:
// the same batches for any number of workers, and for another batch size.
struct Noisy : torch::data::datasets::Dataset<Noisy> {
  torch::data::Example<> get(size_t index) override {
    return {torch::rand({2}), torch::tensor(int64_t(index))};
  }
  torch::optional<size_t> size() const override {
    return 13;
  }
};

std::vector<double> noisy_epoch(size_t workers, int64_t batch) {
  torch::manual_seed(3);
  auto loader = torch::data::make_data_loader(
      Noisy().map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(batch).workers(workers));
  std::vector<double> out;
  for (auto& b : *loader) {
    for (int64_t i = 0; i < b.data.size(0); ++i) {
      // Keyed by the sample, whatever the shuffle put where.
      out.push_back(double(b.target[i].item<int64_t>()));
      for (double v : floats(b.data[i])) {
        out.push_back(v);
      }
    }
  }
  return out;
}

TEST(LibTorchData, RandomDrawsInGetDoNotDependOnWorkersOrBatchSize) {
  const std::vector<double> want = noisy_epoch(0, 4);
  EXPECT_EQ(want.size(), 13u * 3);
  EXPECT_EQ(noisy_epoch(1, 4), want);
  EXPECT_EQ(noisy_epoch(2, 4), want);
  EXPECT_EQ(noisy_epoch(3, 4), want);
  // Another batch size: the same samples, each with the same draws (the
  // shuffle is the same randperm; only the grouping differs).
  EXPECT_EQ(noisy_epoch(2, 5), want);
}

// Issue 61, item 1: a model built after a loader whose sampler draws
// nothing at reset starts from the weights its seed and construction order
// give, whatever loads the first batch: its deferred initial draws run
// under the generator in force where it was built, never under a batch's
// per-sample generator (pytorch/examples' cpp/distributed and custom
// dataset started from run-dependent weights).
std::vector<double> weights(size_t workers, bool load_first) {
  torch::manual_seed(11);
  auto loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          Indices(6).map(torch::data::transforms::Stack<>()),
          torch::data::DataLoaderOptions().batch_size(2).workers(workers));
  torch::nn::Sequential model(torch::nn::Linear(1, 3), torch::nn::Linear(3, 2));
  if (load_first) {
    // The model's first op runs inside the loop, after the loader has
    // fetched a batch under its per-sample generators.
    for (auto& batch : *loader) {
      model->forward(batch.data);
    }
  }
  std::vector<double> out;
  for (const auto& p : model->parameters()) {
    for (double v : floats(p)) {
      out.push_back(v);
    }
  }
  return out;
}

TEST(LibTorchData, InitialWeightsDoNotDependOnTheLoaderThatRunsFirst) {
  const std::vector<double> want = weights(0, false);
  ASSERT_EQ(want.size(), 3u + 3u + 6u + 2u);
  EXPECT_EQ(weights(0, true), want);
  EXPECT_EQ(weights(2, true), want);
}

TEST(LibTorchData, UnstackedBatchesAndTheTransforms) {
  using namespace torch::data;
  // Without Stack a batch is a vector of examples.
  auto plain = make_data_loader<samplers::SequentialSampler>(Indices(5), 2);
  std::vector<size_t> sizes;
  for (std::vector<Example<>>& batch : *plain) {
    sizes.push_back(batch.size());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 1}));
  // Lambda per example, TensorLambda on the data, BatchLambda on the batch.
  auto mapped =
      Indices(4)
          .map(transforms::Lambda<Example<>>([](Example<> e) {
            e.target = e.target * 10;
            return e;
          }))
          .map(
              transforms::TensorLambda<>([](torch::Tensor x) { return x + 1; }))
          .map(transforms::Stack<>())
          .map(transforms::BatchLambda<Example<>, torch::Tensor>(
              [](Example<> b) {
                return b.data.squeeze(1) + b.target.to(torch::kFloat32);
              }));
  auto loader = make_data_loader<samplers::SequentialSampler>(
      std::move(mapped), DataLoaderOptions().batch_size(4));
  for (torch::Tensor& t : *loader) {
    EXPECT_EQ(floats(t), (std::vector<double>{1, 12, 23, 34}));
  }
  // A Collate function instead of Stack; a TensorDataset of rows.
  auto rows = datasets::TensorDataset(torch::arange(6).reshape({3, 2}))
                  .map(transforms::Collate<TensorExample>(
                      [](std::vector<TensorExample> b) {
                        return TensorExample(torch::stack({b[0].data}).sum());
                      }));
  auto first =
      make_data_loader<samplers::SequentialSampler>(std::move(rows), 2);
  EXPECT_EQ(first->begin()->data.item<int64_t>(), 1);
}

struct Throws : torch::data::datasets::Dataset<Throws> {
  torch::data::Example<> get(size_t index) override {
    if (index == 6) {
      throw std::runtime_error("bad sample");
    }
    return {torch::zeros({1}), torch::tensor(int64_t(index))};
  }
  torch::optional<size_t> size() const override {
    return 8;
  }
};

struct Unsized : torch::data::datasets::Dataset<Unsized> {
  torch::data::Example<> get(size_t) override {
    return {};
  }
  torch::optional<size_t> size() const override {
    return torch::nullopt;
  }
};

TEST(LibTorchData, FailuresNameTheirCause) {
  using namespace torch::data;
  auto loader = make_data_loader<samplers::SequentialSampler>(
      Throws(), DataLoaderOptions().batch_size(4).workers(2));
  try {
    for (auto& b : *loader) {
      (void)b;
    }
    ADD_FAILURE() << "no WorkerError";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.sample(), 6);
    EXPECT_NE(std::string(e.what()).find("bad sample"), std::string::npos);
  }
  // The loader starts over after the failure, and after join().
  int batches = 0;
  auto fine = make_data_loader<samplers::SequentialSampler>(
      Indices(8), DataLoaderOptions().batch_size(4).workers(2));
  for (auto it = fine->begin(); it != fine->end(); ++it) {
    ++batches;
    fine->join();
    break;
  }
  for (auto& b : *fine) {
    (void)b;
    ++batches;
  }
  EXPECT_EQ(batches, 3);
  EXPECT_NE(
      error_of([] { make_data_loader(Unsized()); }).find("sized"),
      std::string::npos);
  EXPECT_NE(
      error_of([] {
        datasets::MNIST("/nonexistent/mnist");
      }).find("/nonexistent/mnist"),
      std::string::npos);
  datasets::MNIST test(kFashionMNISTRoot, datasets::MNIST::Mode::kTest);
  EXPECT_THROW(test.get(10000), torch::IndexError);
}

TEST(LibTorchData, SamplersSaveAndLoadTheirPlace) {
  namespace smp = torch::data::samplers;
  torch::manual_seed(1);
  smp::RandomSampler a(10);
  a.next(3);
  torch::serialize::OutputArchive out;
  a.save(out);
  smp::RandomSampler b(10);
  torch::serialize::InputArchive in;
  const std::string path = ::testing::TempDir() + "/sampler.pt";
  out.save_to(path);
  in.load_from(path);
  b.load(in);
  EXPECT_EQ(b.index(), 3u);
  EXPECT_EQ(b.next(7), a.next(7));
  // An archive without "indices" is refused and changes nothing.
  smp::SequentialSampler s(5);
  s.next(2);
  torch::serialize::OutputArchive only_index;
  s.save(only_index);
  only_index.save_to(path);
  torch::serialize::InputArchive partial;
  partial.load_from(path);
  smp::RandomSampler c(4);
  c.next(1);
  EXPECT_THROW(c.load(partial), torch::KeyError);
  EXPECT_EQ(c.index(), 1u);
  smp::SequentialSampler t(5);
  t.load(partial);
  EXPECT_EQ(t.index(), 2u);
  EXPECT_EQ(*t.next(9), (std::vector<size_t>{2, 3, 4}));
  EXPECT_FALSE(t.next(1).has_value());
}

} // namespace
