// LibTorch's data API (torch_datasets.h, torch_samplers.h, torch_loader.h):
// the parts that are not templates.

#include <algorithm>

#include "ditto/data/mnist.h"
#include "ditto/data/torch_loader.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/streams.h"

namespace ditto::data {

uint64_t state_seed(const Generator& g) {
  Tensor state = g.get_state();
  const uint8_t* p = state.data_ptr<uint8_t>();
  // FNV-1a over the state's bytes, then a named derivation.
  uint64_t h = 14695981039346656037ull;
  for (int64_t i = 0; i < state.numel(); ++i) {
    h = (h ^ p[i]) * 1099511628211ull;
  }
  return random::derive_seed(h, "data.torch_loader");
}

namespace datasets {

MNIST::MNIST(const std::string& root, Mode mode) {
  data::MNIST files(root, mode == Mode::kTrain);
  // LibTorch: the bytes as float32, divided by 255 in place.
  images_ = files.images().to(kFloat32).unsqueeze(1);
  images_.div_(255);
  targets_ = files.labels();
}

Example<> MNIST::get(size_t index) {
  DITTO_CHECK(
      index < size_t(images_.size(0)),
      IndexError,
      "MNIST",
      "index ",
      index,
      " is out of range for a dataset of ",
      images_.size(0),
      " samples");
  return {
      images_.select(0, int64_t(index)), targets_.select(0, int64_t(index))};
}

optional<size_t> MNIST::size() const {
  return size_t(images_.size(0));
}

bool MNIST::is_train() const noexcept {
  return images_.size(0) == 60000;
}

const Tensor& MNIST::images() const {
  return images_;
}

const Tensor& MNIST::targets() const {
  return targets_;
}

TensorDataset::TensorDataset(const std::vector<Tensor>& tensors)
    : TensorDataset(ditto::stack(tensors)) {}

TensorDataset::TensorDataset(Tensor t) : tensor(std::move(t)) {
  DITTO_CHECK(
      tensor.defined() && tensor.dim() > 0,
      ValueError,
      "TensorDataset",
      "expected a tensor of at least one dim");
}

TensorExample TensorDataset::get(size_t index) {
  DITTO_CHECK(
      index < size_t(tensor.size(0)),
      IndexError,
      "TensorDataset",
      "index ",
      index,
      " is out of range for a dataset of ",
      tensor.size(0),
      " samples");
  return tensor.select(0, int64_t(index));
}

optional<size_t> TensorDataset::size() const {
  return size_t(tensor.size(0));
}

} // namespace datasets

namespace samplers {
namespace {

// The archive's "index" entry as a count (LibTorch writes a 0-dim int64).
size_t read_index(serialize::InputArchive& archive, const char* op) {
  Tensor t = empty({}, kInt64);
  archive.read("index", t, true);
  const int64_t v = t.item<int64_t>();
  DITTO_CHECK(v >= 0, ValueError, op, "negative index ", v, " in the archive");
  return size_t(v);
}

} // namespace

SequentialSampler::SequentialSampler(size_t size) : size_(size) {}

void SequentialSampler::reset(optional<size_t> new_size) {
  if (new_size) {
    size_ = *new_size;
  }
  index_ = 0;
}

optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  const size_t end = std::min(size_, index_ + batch_size);
  if (end <= index_) {
    return nullopt;
  }
  std::vector<size_t> batch(end - index_);
  for (size_t& i : batch) {
    i = index_++;
  }
  return batch;
}

void SequentialSampler::save(serialize::OutputArchive& archive) const {
  archive.write("index", tensor(int64_t(index_)), true);
}

void SequentialSampler::load(serialize::InputArchive& archive) {
  index_ = read_index(archive, "SequentialSampler::load");
}

size_t SequentialSampler::index() const noexcept {
  return index_;
}

RandomSampler::RandomSampler(int64_t size, Dtype index_dtype)
    : indices_(randperm(size, index_dtype)) {}

void RandomSampler::reset(optional<size_t> new_size) {
  const int64_t size = new_size ? int64_t(*new_size) : indices_.numel();
  indices_ = randperm(size, indices_.dtype());
  index_ = 0;
}

optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  const int64_t remaining = indices_.numel() - index_;
  if (remaining <= 0) {
    return nullopt;
  }
  const int64_t n = std::min<int64_t>(int64_t(batch_size), remaining);
  Tensor slice = indices_.slice(0, index_, index_ + n).to(kInt64).contiguous();
  const int64_t* p = slice.data_ptr<int64_t>();
  std::vector<size_t> batch(p, p + n);
  index_ += n;
  return batch;
}

void RandomSampler::save(serialize::OutputArchive& archive) const {
  archive.write("index", tensor(int64_t(index_)), true);
  archive.write("indices", indices_, true);
}

void RandomSampler::load(serialize::InputArchive& archive) {
  const char* op = "RandomSampler::load";
  const size_t index = read_index(archive, op);
  Tensor indices = empty({0}, kInt64);
  archive.read("indices", indices, true);
  DITTO_CHECK(
      indices.dim() == 1 && index <= size_t(indices.numel()),
      ValueError,
      op,
      "index ",
      index,
      " past the ",
      indices.numel(),
      " indices in the archive");
  indices_ = indices;
  index_ = int64_t(index);
}

size_t RandomSampler::index() const noexcept {
  return size_t(index_);
}

} // namespace samplers
} // namespace ditto::data
