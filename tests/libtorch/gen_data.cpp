// Writes tests/libtorch/data.json: what LibTorch 1.13's data API (Debian's
// libtorch-dev) gives, for tests/data/torch_data_test.cpp. Its MNIST reads
// uncompressed files, so the Fashion-MNIST test set is unpacked first:
//   mkdir -p /tmp/fmnist && for f in /usr/share/datasets/fashion-mnist/*.gz;
//     do gunzip -c $f > /tmp/fmnist/$(basename $f .gz); done
//   g++ -std=c++17 -I/usr/include/torch/csrc/api/include \
//     tests/libtorch/gen_data.cpp -o /tmp/gen_data -ltorch -ltorch_cpu -lc10
//   /tmp/gen_data /tmp/fmnist > tests/libtorch/data.json

#include <torch/torch.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// Sample i is (i as a float, i).
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

std::string ints(const torch::Tensor& t) {
  auto c = t.to(torch::kInt64).contiguous();
  std::string out = "[";
  for (int64_t i = 0; i < c.numel(); ++i) {
    out += (i ? ", " : "") + std::to_string(c.data_ptr<int64_t>()[i]);
  }
  return out + "]";
}

std::string floats(const torch::Tensor& t) {
  auto c = t.to(torch::kFloat64).contiguous();
  std::string out = "[";
  for (int64_t i = 0; i < c.numel(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", c.data_ptr<double>()[i]);
    out += (i ? ", " : "") + std::string(buf);
  }
  return out + "]";
}

// Two epochs of a loader over Indices(10), batch 4: each batch's targets.
template <typename Sampler>
std::string epochs(size_t workers, bool drop_last) {
  torch::manual_seed(7);
  auto loader = torch::data::make_data_loader<Sampler>(
      Indices(10).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(4).workers(workers).drop_last(
          drop_last));
  std::string out = "[";
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (auto& batch : *loader) {
      out += (out.size() > 1 ? ", " : "") + ints(batch.target);
    }
  }
  // What the default generator gives next: loading drew nothing else.
  return out + "], \"rand_after\": " + floats(torch::rand({3}));
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_data FASHION_MNIST_DIR (unpacked)\n");
    return 2;
  }
  std::printf("{\n");
  std::printf(
      "  \"random\": {\"batches\": %s},\n",
      epochs<torch::data::samplers::RandomSampler>(0, false).c_str());
  std::printf(
      "  \"random_workers\": {\"batches\": %s},\n",
      epochs<torch::data::samplers::RandomSampler>(2, false).c_str());
  std::printf(
      "  \"sequential_drop_last\": {\"batches\": %s},\n",
      epochs<torch::data::samplers::SequentialSampler>(0, true).c_str());

  // The Fashion-MNIST test set, normalized and stacked, in order.
  auto test = torch::data::datasets::MNIST(
                  argv[1], torch::data::datasets::MNIST::Mode::kTest)
                  .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                  .map(torch::data::transforms::Stack<>());
  const size_t n = test.size().value();
  auto loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
          std::move(test), 64);
  auto it = loader->begin();
  auto& first = *it;
  std::printf(
      "  \"mnist_test\": {\"size\": %zu, \"batch_sizes\": %s, "
      "\"targets\": %s, \"row\": %s}\n",
      n,
      ints(torch::tensor(first.data.sizes())).c_str(),
      ints(first.target).c_str(),
      floats(first.data[5][0][14]).c_str());
  std::printf("}\n");
}
