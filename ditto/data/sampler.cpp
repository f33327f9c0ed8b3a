#include "ditto/data/sampler.h"

#include <cstring>
#include <mutex>

#include "ditto/core/error.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/random/generator_impl.h"

namespace ditto::data {
namespace {

std::vector<int64_t> to_vector(const Tensor& t, int64_t count) {
  const int64_t* p = t.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + count);
}

std::vector<uint8_t> state_bytes(const Generator& g) {
  Tensor s = g.get_state();
  const uint8_t* p = s.data_ptr<uint8_t>();
  return std::vector<uint8_t>(p, p + s.numel());
}

Tensor state_tensor(const std::vector<uint8_t>& bytes) {
  return tensor<uint8_t>(bytes, {int64_t(bytes.size())});
}

} // namespace

uint64_t draw_seed(const Generator& g) {
  GeneratorImpl* impl = g.impl();
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->random64() & ((uint64_t(1) << 63) - 1);
}

// ---- SequentialSampler

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  DITTO_CHECK(n >= 0, ValueError, "SequentialSampler", "negative size ", n);
}

void SequentialSampler::reset() {
  pos_ = 0;
}

std::optional<int64_t> SequentialSampler::next() {
  if (pos_ >= n_) {
    return std::nullopt;
  }
  return pos_++;
}

int64_t SequentialSampler::size() const {
  return n_;
}

SamplerState SequentialSampler::state() const {
  SamplerState s;
  s.consumed = pos_;
  return s;
}

void SequentialSampler::restore(const SamplerState&) {
  reset();
}

// ---- RandomSampler

RandomSampler::RandomSampler(
    int64_t n,
    bool replacement,
    std::optional<int64_t> num_samples,
    std::optional<Generator> generator)
    : n_(n),
      num_samples_(num_samples.value_or(n)),
      replacement_(replacement),
      generator_(std::move(generator)) {
  DITTO_CHECK(
      n > 0,
      ValueError,
      "RandomSampler",
      "the dataset is empty (size ",
      n,
      ")");
  DITTO_CHECK(
      num_samples_ > 0,
      ValueError,
      "RandomSampler",
      "num_samples should be a positive integer, got ",
      num_samples_);
}

void RandomSampler::reset() {
  started_ = false;
  final_drawn_ = false;
  blocks_drawn_ = 0;
  pos_ = 0;
  block_.clear();
  state_ = SamplerState{};
}

// The epoch's first draw: its generator, remembered for a replay.
void RandomSampler::start() {
  started_ = true;
  if (generator_) {
    state_.generator_state = state_bytes(*generator_);
    current_ = *generator_;
  } else {
    state_.has_seed = true;
    state_.seed = draw_seed(default_generator());
    current_ = Generator();
    current_.manual_seed(state_.seed);
  }
}

std::optional<int64_t> RandomSampler::next() {
  if (!started_) {
    start();
  }
  while (pos_ >= int64_t(block_.size())) {
    const int64_t per = replacement_ ? 32 : n_;
    const int64_t full = num_samples_ / per, rest = num_samples_ % per;
    if (blocks_drawn_ < full) {
      block_ = replacement_
          ? to_vector(randint(0, n_, {32}, kInt64, current_), 32)
          : to_vector(randperm(n_, kInt64, current_), n_);
      ++blocks_drawn_;
    } else if (!final_drawn_) {
      // PyTorch draws this one even when rest is 0 (a whole permutation
      // without replacement, nothing with).
      final_drawn_ = true;
      if (replacement_) {
        block_ = rest > 0
            ? to_vector(randint(0, n_, {rest}, kInt64, current_), rest)
            : std::vector<int64_t>{};
      } else {
        block_ = to_vector(randperm(n_, kInt64, current_), rest);
      }
    } else {
      return std::nullopt;
    }
    pos_ = 0;
  }
  ++state_.consumed;
  return block_[size_t(pos_++)];
}

int64_t RandomSampler::size() const {
  return num_samples_;
}

SamplerState RandomSampler::state() const {
  return state_;
}

void RandomSampler::restore(const SamplerState& state) {
  reset();
  started_ = true;
  if (generator_) {
    DITTO_CHECK(
        !state.generator_state.empty(),
        ValueError,
        "RandomSampler",
        "the state has no generator state, but this sampler has a generator");
    generator_->set_state(state_tensor(state.generator_state));
    current_ = *generator_;
    state_.generator_state = state.generator_state;
  } else {
    DITTO_CHECK(
        state.has_seed,
        ValueError,
        "RandomSampler",
        "the state has no seed, but this sampler has no generator");
    current_ = Generator();
    current_.manual_seed(state.seed);
    state_.has_seed = true;
    state_.seed = state.seed;
  }
}

// ---- DistributedSampler

DistributedSampler::DistributedSampler(
    int64_t n,
    int64_t num_replicas,
    int64_t rank,
    bool shuffle,
    uint64_t seed,
    bool drop_last)
    : n_(n),
      replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      drop_last_(drop_last),
      seed_(seed) {
  DITTO_CHECK(
      num_replicas > 0 && rank >= 0 && rank < num_replicas,
      ValueError,
      "DistributedSampler",
      "invalid rank ",
      rank,
      ", rank should be in the interval [0, ",
      num_replicas - 1,
      "]");
  DITTO_CHECK(n >= 0, ValueError, "DistributedSampler", "negative size ", n);
  // ceil((n - replicas) / replicas) with drop_last and a remainder (0 when
  // n < replicas), else ceil(n / replicas), as PyTorch.
  if (drop_last && n % num_replicas != 0) {
    const int64_t a = n - num_replicas;
    num_samples_ = a >= 0 ? (a + num_replicas - 1) / num_replicas : 0;
  } else {
    num_samples_ = (n + num_replicas - 1) / num_replicas;
  }
}

void DistributedSampler::set_epoch(int64_t epoch) {
  epoch_ = epoch;
}

void DistributedSampler::reset() {
  std::vector<int64_t> all;
  if (shuffle_ && n_ > 0) {
    Generator g;
    g.manual_seed(seed_ + uint64_t(epoch_));
    all = to_vector(randperm(n_, kInt64, g), n_);
  } else {
    for (int64_t i = 0; i < n_; ++i) {
      all.push_back(i);
    }
  }
  const int64_t total = num_samples_ * replicas_;
  if (!drop_last_) {
    const size_t base = all.size();
    for (size_t k = 0; base > 0 && int64_t(all.size()) < total; ++k) {
      all.push_back(all[k % base]);
    }
  } else {
    all.resize(size_t(total));
  }
  indices_.clear();
  for (int64_t k = rank_; k < total; k += replicas_) {
    indices_.push_back(all[size_t(k)]);
  }
  pos_ = 0;
}

std::optional<int64_t> DistributedSampler::next() {
  if (pos_ >= int64_t(indices_.size())) {
    return std::nullopt;
  }
  return indices_[size_t(pos_++)];
}

int64_t DistributedSampler::size() const {
  return num_samples_;
}

SamplerState DistributedSampler::state() const {
  SamplerState s;
  s.consumed = pos_;
  s.epoch = epoch_;
  return s;
}

void DistributedSampler::restore(const SamplerState& state) {
  epoch_ = state.epoch;
  reset();
}

// ---- BatchSampler

BatchSampler::BatchSampler(
    std::shared_ptr<Sampler> sampler,
    int64_t batch_size,
    bool drop_last)
    : sampler_(std::move(sampler)),
      batch_size_(batch_size),
      drop_last_(drop_last) {
  DITTO_CHECK(sampler_ != nullptr, ValueError, "BatchSampler", "null sampler");
  DITTO_CHECK(
      batch_size > 0,
      ValueError,
      "BatchSampler",
      "batch_size should be a positive integer, got ",
      batch_size);
}

void BatchSampler::reset() {
  sampler_->reset();
  done_ = false;
}

std::optional<std::vector<int64_t>> BatchSampler::next() {
  if (done_) {
    return std::nullopt;
  }
  std::vector<int64_t> batch;
  while (int64_t(batch.size()) < batch_size_) {
    std::optional<int64_t> i = sampler_->next();
    if (!i) {
      done_ = true;
      break;
    }
    batch.push_back(*i);
  }
  if (batch.empty() || (done_ && drop_last_)) {
    return std::nullopt;
  }
  return batch;
}

int64_t BatchSampler::size() const {
  const int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

SamplerState BatchSampler::state() const {
  return sampler_->state();
}

void BatchSampler::restore(const SamplerState& state) {
  sampler_->restore(state);
  done_ = false;
}

} // namespace ditto::data
