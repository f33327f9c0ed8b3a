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

} // namespace ditto::train
