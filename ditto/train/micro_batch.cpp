// MicroBatchSum (micro_batch.h, docs/distributed.md).

#include "ditto/train/micro_batch.h"

#include <string>

#include "ditto/core/error.h"
#include "ditto/nn/functional/loss.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/random/generator.h"
#include "ditto/random/streams.h"

namespace ditto::train {
namespace {

constexpr const char* kOp = "MicroBatchSum";

bool power_of_two(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

std::vector<Tensor> sum_pair(
    const std::vector<Tensor>& a,
    const std::vector<Tensor>& b) {
  std::vector<Tensor> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    out.push_back(add(a[i], b[i]));
  }
  return out;
}

} // namespace

MicroBatchSum::MicroBatchSum(int64_t micro_batches, ProcessGroup group)
    : k_(micro_batches), group_(std::move(group)) {
  DITTO_CHECK(
      power_of_two(k_),
      ValueError,
      kOp,
      "the number of micro-batches per step must be a power of two, got ",
      k_);
  const int64_t p = group_.world_size;
  DITTO_CHECK(
      power_of_two(p) && k_ % p == 0,
      ValueError,
      kOp,
      "the world size must be a power of two dividing the ",
      k_,
      " micro-batches of a step, got ",
      p,
      " processes");
  DITTO_CHECK(
      p == 1 || group_.all_gather,
      ValueError,
      kOp,
      "a group of ",
      p,
      " processes needs all_gather");
  begin_ = k_ / p * group_.rank;
  end_ = begin_ + k_ / p;
  next_ = begin_;
}

void MicroBatchSum::add(int64_t j, std::vector<Tensor> values) {
  DITTO_CHECK(
      j == next_ && j < end_,
      ValueError,
      kOp,
      "expected micro-batch ",
      next_,
      " of this rank's [",
      begin_,
      ", ",
      end_,
      "), got ",
      j);
  // A binary counter: two subtrees of equal size merge, left + right.
  stack_.push_back(Partial{1, std::move(values)});
  while (stack_.size() >= 2 &&
         stack_[stack_.size() - 1].leaves == stack_[stack_.size() - 2].leaves) {
    Partial right = std::move(stack_.back());
    stack_.pop_back();
    Partial& left = stack_.back();
    left.values = sum_pair(left.values, right.values);
    left.leaves += right.leaves;
  }
  ++next_;
}

std::vector<Tensor> MicroBatchSum::reduce() {
  DITTO_CHECK(
      next_ == end_ && stack_.size() == 1,
      ValueError,
      kOp,
      "reduce() after ",
      next_ - begin_,
      " of this rank's ",
      end_ - begin_,
      " micro-batches");
  std::vector<Tensor> mine = std::move(stack_.back().values);
  stack_.clear();
  next_ = begin_;
  if (group_.world_size == 1) {
    return mine;
  }
  std::vector<Tensor> out;
  out.reserve(mine.size());
  for (const Tensor& t : mine) {
    // The P partial sums, then the tree's top levels in index order.
    std::vector<Tensor> level = group_.all_gather(t);
    while (level.size() > 1) {
      std::vector<Tensor> up;
      for (size_t q = 0; q + 1 < level.size(); q += 2) {
        up.push_back(ditto::add(level[q], level[q + 1]));
      }
      level = std::move(up);
    }
    out.push_back(std::move(level[0]));
  }
  return out;
}

std::vector<Tensor> take_gradients(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  grads.reserve(params.size());
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    grads.push_back(g.defined() ? g : zeros_like(p));
    Tensor handle = p; // shares p's grad slot
    handle.mutable_grad() = Tensor();
  }
  return grads;
}

double micro_batch_step(
    MicroBatchSum& sum,
    const std::vector<Tensor>& params,
    const std::function<Tensor(const Tensor&)>& forward,
    const Tensor& data,
    const Tensor& target,
    uint64_t seed,
    int64_t step) {
  const int64_t k = sum.micro_batches();
  const int64_t rows = data.size(0);
  DITTO_CHECK(
      rows % k == 0,
      ValueError,
      "micro_batch_step",
      "a batch of ",
      rows,
      " rows does not split into ",
      k,
      " micro-batches");
  const int64_t m = rows / k;
  for (int64_t j = sum.begin(); j < sum.end(); ++j) {
    Generator g = Generator::philox(random::derive_seed(
        seed,
        "train.micro_batch:" + std::to_string(step) + ":" + std::to_string(j)));
    GeneratorGuard guard(g);
    Tensor loss = nn::functional::cross_entropy(
        forward(data.narrow(0, j * m, m)), target.narrow(0, j * m, m));
    loss.backward();
    std::vector<Tensor> values = take_gradients(params);
    values.push_back(loss.detach());
    sum.add(j, std::move(values));
  }
  std::vector<Tensor> total = sum.reduce();
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    p.mutable_grad() = div(total[i], double(k));
  }
  return div(total.back(), double(k)).item<double>();
}

} // namespace ditto::train
