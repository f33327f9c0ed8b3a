#pragma once
// A step's gradient from k micro-batches, with the same bits for any number
// of processes (R6, docs/distributed.md): each micro-batch's values are
// summed in the balanced binary tree over the micro-batch index, and with
// several processes each computes a contiguous block (a subtree) whose
// partial sum meets the others' in the tree's top levels. The processes are
// reached through ProcessGroup::all_gather (ditto::distributed gives one on
// Open MPI; this library does not link MPI).

#include <cstdint>
#include <functional>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/tensor.h"

namespace ditto::train {

struct ProcessGroup {
  int rank = 0;
  int world_size = 1;
  // Every rank's tensor in rank order (collective); unused with one
  // process.
  std::function<std::vector<Tensor>(const Tensor&)> all_gather;
};

class DITTO_API MicroBatchSum {
 public:
  // ValueError unless micro_batches is a power of two and the world size a
  // power of two dividing it.
  explicit MicroBatchSum(int64_t micro_batches, ProcessGroup group = {});
  // This rank's micro-batches: [begin(), end()).
  int64_t begin() const {
    return begin_;
  }
  int64_t end() const {
    return end_;
  }
  int64_t micro_batches() const {
    return k_;
  }
  // Micro-batch j's values (the same count and shapes for every j), in
  // order from begin().
  void add(int64_t j, std::vector<Tensor> values);
  // After this rank's last add(): the tree sums over all k micro-batches,
  // the same on every rank. Collective. Starts the next step.
  std::vector<Tensor> reduce();

 private:
  struct Partial {
    int64_t leaves = 0;
    std::vector<Tensor> values;
  };
  int64_t k_, begin_, end_, next_;
  ProcessGroup group_;
  std::vector<Partial> stack_;
};

// Takes the parameters' gradients (zeros for an undefined one) and clears
// them: what MicroBatchSum::add needs after a micro-batch's backward.
DITTO_API std::vector<Tensor> take_gradients(const std::vector<Tensor>& params);

// One training step's gradient from micro-batches (for the trainer): this
// rank's micro-batches of the batch (rows [j m, (j + 1) m) for micro-batch
// j, m = rows / k), each run forward with the cross entropy and backward
// with the default generator set to a Philox stream derived from
// (seed, "train.micro_batch:<step>:<j>"), so that dropout depends on the
// micro-batch and not on the rank; then every parameter's grad becomes the
// tree sum over k divided by k. Returns the mean of the k micro-batch
// losses (also a tree sum). Call after zero_grad(), before the optimizer's
// step. Collective with several processes.
DITTO_API double micro_batch_step(
    MicroBatchSum& sum,
    const std::vector<Tensor>& params,
    const std::function<Tensor(const Tensor&)>& forward,
    const Tensor& data,
    const Tensor& target,
    uint64_t seed,
    int64_t step);

} // namespace ditto::train
