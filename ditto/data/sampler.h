#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/random/generator.h"

namespace ditto::data {

// What a sampler needs to replay an epoch (see DataLoader::state_dict()).
struct SamplerState {
  int64_t consumed = 0; // indices handed out in the epoch
  // RandomSampler without a generator: the epoch's seed (drawn from the
  // default generator at the epoch's first index).
  bool has_seed = false;
  uint64_t seed = 0;
  // RandomSampler with a generator: its state before the epoch's first
  // draw.
  std::vector<uint8_t> generator_state;
  int64_t epoch = 0; // DistributedSampler
};

// Yields dataset indices, epoch after epoch. Random draws happen lazily in
// next(), in PyTorch's order, so a loader that draws its base seed first
// consumes its generator exactly as PyTorch does.
class DITTO_API Sampler {
 public:
  virtual ~Sampler() = default;
  // Starts a new epoch.
  virtual void reset() = 0;
  // The next index, or nullopt at the end of the epoch.
  virtual std::optional<int64_t> next() = 0;
  // Indices per epoch.
  virtual int64_t size() const = 0;
  // The current epoch's state, and a restart of the epoch it describes
  // (next() then replays the same indices from the first; the caller skips
  // `consumed` of them).
  virtual SamplerState state() const = 0;
  virtual void restore(const SamplerState& state) = 0;
};

// 0, 1, ..., n - 1.
class DITTO_API SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  void reset() override;
  std::optional<int64_t> next() override;
  int64_t size() const override;
  SamplerState state() const override;
  void restore(const SamplerState& state) override;

 private:
  int64_t n_, pos_ = 0;
};

// torch.utils.data.RandomSampler, draw for draw: without replacement,
// num_samples / n permutations (randperm) and one more cut to
// num_samples % n, drawn even when that is 0 (as PyTorch does at the end
// of every epoch); with replacement, randint in blocks of 32. Without a
// generator, each epoch seeds a fresh one from a 63-bit draw of the
// default generator.
class DITTO_API RandomSampler : public Sampler {
 public:
  RandomSampler(
      int64_t n,
      bool replacement = false,
      std::optional<int64_t> num_samples = std::nullopt,
      std::optional<Generator> generator = std::nullopt);
  void reset() override;
  std::optional<int64_t> next() override;
  int64_t size() const override;
  SamplerState state() const override;
  void restore(const SamplerState& state) override;

 private:
  void start();
  int64_t n_, num_samples_;
  bool replacement_;
  std::optional<Generator> generator_;
  // The epoch:
  Generator current_;
  bool started_ = false, final_drawn_ = false;
  int64_t blocks_drawn_ = 0, pos_ = 0;
  std::vector<int64_t> block_;
  SamplerState state_;
};

// torch.utils.data.DistributedSampler: the indices (a permutation from a
// generator seeded seed + epoch when shuffling) padded by repetition (or
// cut with drop_last) to a multiple of num_replicas, every num_replicas-th
// from rank.
class DITTO_API DistributedSampler : public Sampler {
 public:
  DistributedSampler(
      int64_t n,
      int64_t num_replicas,
      int64_t rank,
      bool shuffle = true,
      uint64_t seed = 0,
      bool drop_last = false);
  void set_epoch(int64_t epoch);
  void reset() override;
  std::optional<int64_t> next() override;
  int64_t size() const override;
  SamplerState state() const override;
  void restore(const SamplerState& state) override;

 private:
  int64_t n_, replicas_, rank_, num_samples_, epoch_ = 0, pos_ = 0;
  bool shuffle_, drop_last_;
  uint64_t seed_;
  std::vector<int64_t> indices_;
};

// Groups a sampler's indices into batches of batch_size; the last one is
// shorter unless drop_last. The sampler is exhausted at the end of every
// epoch either way, as in PyTorch.
class DITTO_API BatchSampler {
 public:
  BatchSampler(
      std::shared_ptr<Sampler> sampler,
      int64_t batch_size,
      bool drop_last);
  void reset();
  std::optional<std::vector<int64_t>> next();
  // Batches per epoch.
  int64_t size() const;
  SamplerState state() const;
  void restore(const SamplerState& state);
  int64_t batch_size() const {
    return batch_size_;
  }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_, done_ = false;
};

// A 63-bit seed drawn from g as PyTorch's
// torch.empty((), dtype=torch.int64).random_(generator=g): two words, the
// top bit cleared.
DITTO_API uint64_t draw_seed(const Generator& g);

} // namespace ditto::data
