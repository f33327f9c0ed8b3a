#pragma once
// A step's gradient from k micro-batches, with the same bits for any number
// of processes (R6, docs/distributed.md): the micro-batches' values are
// summed in the binary tree fixed by the micro-batch index (sibling nodes
// [a, a + s) and [a + s, a + 2s), a a multiple of 2s, add left + right; the
// complete nodes left at the end add left to right). With several processes
// each computes a contiguous block of micro-batches, sums the complete nodes
// inside it, and the nodes of all ranks meet in the tree's upper levels
// through ProcessGroup::reduce_columns (ditto::distributed gives one on Open
// MPI; this library does not link MPI).

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/tensor.h"
#include "ditto/nn/functional/normalization.h"

namespace ditto::train {

struct ProcessGroup {
  int rank = 0;
  int world_size = 1;
  // Collective (unused with one process). Every rank passes a [m_r, n]
  // tensor (m_r = counts[r], n and the dtype alike on every rank); the
  // result, on every rank, is the [n] tensor whose column i is
  // combine(column i of all ranks' rows stacked in rank order). combine maps
  // a contiguous [sum m_r, c] tensor holding the columns [first, first + c)
  // to a [c] one, each column on its own: the columns are cut into one
  // chunk per rank, the chunk's owner combines it, and the results are
  // gathered (about (m_r + 1) n (P - 1) / P values sent per rank).
  using Combine =
      std::function<Tensor(const Tensor& rows, int64_t first_column)>;
  std::function<Tensor(
      const Tensor& rows,
      const std::vector<int64_t>& counts,
      const Combine& combine)>
      reduce_columns;
};

// The complete nodes of the micro-batch tree that lie in [begin, end), as
// (first micro-batch, micro-batches), in order: what a rank computing the
// block [begin, end) holds once it has summed it.
DITTO_API std::vector<std::pair<int64_t, int64_t>> tree_nodes(
    int64_t begin,
    int64_t end);

class DITTO_API MicroBatchSum {
 public:
  // Rank r of P computes the micro-batches [r k / P, (r + 1) k / P).
  // ValueError unless 1 <= P <= micro_batches.
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
  //
  // BatchNorm's running statistics: while a MicroBatchSum lives, batch_norm
  // in training mode on this thread records its batch statistics instead of
  // updating the running buffers (nn::functional::RunningStatsRecorder);
  // add(j) takes micro-batch j's, and reduce() replays every micro-batch's
  // updates in index order on every rank, as one process running the k
  // micro-batches would have made them, whichever rank computed each.
  // (momentum=None, the cumulative average, follows each rank's own count
  // of batches and is not covered.)
  std::vector<Tensor> reduce();

 private:
  struct Node {
    int64_t start = 0, size = 0;
    std::vector<Tensor> values;
  };
  std::vector<Tensor> combine_ranks(std::vector<Node> mine) const;
  void replay_running_stats();
  int64_t k_, begin_, end_, next_;
  ProcessGroup group_;
  std::vector<Node> stack_;
  nn::functional::RunningStatsRecorder recorder_;
  // This rank's micro-batches' statistics, in order.
  std::vector<std::vector<nn::functional::RunningStatsRecorder::Entry>> stats_;
};

// Takes the parameters' gradients (zeros for an undefined one) and clears
// them: what MicroBatchSum::add needs after a micro-batch's backward.
DITTO_API std::vector<Tensor> take_gradients(const std::vector<Tensor>& params);

// The trainer's loss: the mean cross entropy of logits [N, C] against
// class indices [N], or of logits [N, ..., C] against [N, ...] (a language
// model's positions, each one more sample).
DITTO_API Tensor class_loss(const Tensor& logits, const Tensor& target);

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
