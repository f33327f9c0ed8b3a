#pragma once
// ditto::distributed: processes started by Open MPI's mpirun, and the
// collectives a data-parallel trainer needs, on tensors (issue 34; see
// docs/distributed.md). A separate library, libditto_distributed (target
// ditto::distributed), built when MPI is found: programs that do not use it
// do not load MPI.
//
// Every collective is deterministic: its result does not depend on timing,
// on MPI's choice of algorithm or on the network. all_reduce sums each
// element over the ranks in rank order, ((x0 + x1) + x2) + ..., on every
// rank alike (a reduce-scatter by chunks, each chunk summed in rank order by
// its owner, then an all-gather: the bytes of a ring all-reduce). The
// gradient reductions (MicroBatchGradient, DistributedDataParallel) sum in
// the tree fixed by the micro-batch index instead, on the same exchange.
//
// Every call is collective: all ranks call it, in the same order, with
// tensors of one dtype and shape; a mismatch raises ValueError on every
// rank (naming the ranks and their shapes), never a hang or a corrupt
// buffer. Bad arguments raise before anything is sent, on the rank that
// gave them; the other ranks then wait in the collective, so an uncaught
// exception must end the process: mpirun then ends the whole job.

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/nn/module.h"
#include "ditto/train/micro_batch.h"

namespace ditto::distributed {

// MPI_Init_thread (funneled: ditto's worker threads never call MPI) unless
// MPI is already initialized; idempotent. MPI is finalized at exit.
void init();
bool is_initialized();
// The longest a collective waits for every rank to join it (torch's
// init_process_group(timeout=); 30 minutes unless set). When it passes, the
// job ends (MPI_Abort) with a message naming the collective and the ranks
// that never joined (Note [Collective timeout]). ValueError unless positive.
void set_timeout(std::chrono::milliseconds timeout);
std::chrono::milliseconds timeout();
// This process's rank and the number of processes (0 and 1 before init()).
int rank();
int world_size();
void barrier();

enum class ReduceOp { Sum, Avg };

// In place, on every rank: the elementwise sum over the ranks in rank order
// (Avg: the sum divided by world_size; floating dtypes only). Bool tensors
// are refused (TypeError). Any layout; the result keeps the tensor's.
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum);
// torch.distributed.reduce_scatter: output (on rank r) becomes the sum over
// the ranks, in rank order, of their inputs[r]. Every input has the
// output's dtype and shape, one per rank.
void reduce_scatter(
    Tensor& output,
    const std::vector<Tensor>& inputs,
    ReduceOp op = ReduceOp::Sum);
// In place: root's values on every rank.
void broadcast(Tensor& tensor, int root = 0);
// Every rank's tensor, in rank order (new contiguous tensors).
std::vector<Tensor> all_gather(const Tensor& tensor);

// The text "rank R of N" for messages.
std::string where();

// This process group for train::MicroBatchSum and the trainer.
train::ProcessGroup process_group();

// One step's gradient with the same bits on any number of processes (R6,
// docs/distributed.md): train::MicroBatchSum over the parameters'
// gradients. A step's global batch is k micro-batches (k a power of two);
// rank r of P (a power of two dividing k) computes the micro-batches
// [r k/P, (r + 1) k/P); the gradient is the tree sum over k. One process
// (P = 1) accumulating the k micro-batches gives the same bits.
class MicroBatchGradient {
 public:
  MicroBatchGradient(std::vector<Tensor> params, int64_t micro_batches);
  // This rank's micro-batches of each step: [begin(), end()).
  int64_t begin() const {
    return sum_.begin();
  }
  int64_t end() const {
    return sum_.end();
  }
  // After micro-batch j's backward, in order from begin(): takes the
  // parameters' gradients (an undefined one counts as zeros) and clears
  // them for the next micro-batch. Clear the gradients before a step's
  // first backward (optimizer.zero_grad()), as in any training loop: the
  // previous step's would add into the first micro-batch's.
  void add(int64_t j);
  // After this rank's last add(): every parameter's grad becomes the step's
  // gradient, the same on every rank. Collective.
  void reduce();

 private:
  std::vector<Tensor> params_;
  train::MicroBatchSum sum_;
};

// torch.nn.parallel.DistributedDataParallel's contract on a module: its
// parameters and buffers are broadcast from rank 0 when it is built, and
// the buffers again before every forward (torch's broadcast_buffers=True;
// false keeps each rank's); each forward through it (in grad mode, outside
// no_sync) makes the next
// backward on this thread end by reducing the parameters' gradients, so
// that after backward every rank holds the same average gradient and the
// optimizer's step is identical everywhere. The average is the tree sum
// over the ranks in rank order (rank r's gradient is micro-batch r) divided
// by P: the same bits as one process with MicroBatchGradient over P
// micro-batches of the per-rank batch. A parameter without a gradient on a
// rank counts as zeros. Build one on every rank, in the same order.
class DataParallelState {
 public:
  explicit DataParallelState(nn::Module& module, bool broadcast_buffers = true);
  // The same for parameters and buffers held elsewhere (the Python
  // binding's modules).
  DataParallelState(
      std::vector<Tensor> params,
      std::vector<Tensor> buffers,
      bool broadcast_buffers = true);
  // What a forward does before calling the module: the buffers from rank 0
  // (collective, when broadcast_buffers), and the reduction queued for the
  // next backward (in grad mode, outside no_sync).
  void before_forward();
  void prepare_backward();
  // Reduces the gradients now (what the end of backward does). Collective.
  void reduce_gradients();
  // Whether forwards arrange the reduction (false inside no_sync).
  bool sync() const {
    return sync_;
  }
  void set_sync(bool on) {
    sync_ = on;
  }
  // While the guard lives, forwards do not reduce: gradients accumulate on
  // each rank (torch's no_sync()); the first synchronized backward after it
  // reduces the accumulated gradients.
  class NoSync {
   public:
    explicit NoSync(DataParallelState& s) : s_(s), previous_(s.sync_) {
      s_.sync_ = false;
    }
    ~NoSync() {
      s_.sync_ = previous_;
    }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DataParallelState& s_;
    bool previous_;
  };

 private:
  std::vector<Tensor> params_, buffers_;
  bool broadcast_buffers_ = true;
  bool sync_ = true;
  std::shared_ptr<bool> queued_;
};

template <typename M>
class DistributedDataParallel {
 public:
  explicit DistributedDataParallel(
      std::shared_ptr<M> module,
      bool broadcast_buffers = true)
      : module_(std::move(module)),
        state_(
            std::make_shared<DataParallelState>(*module_, broadcast_buffers)) {}
  // module->forward(args...), after DataParallelState::before_forward().
  template <typename... Args>
  auto forward(Args&&... args) {
    state_->before_forward();
    return module_->forward(std::forward<Args>(args)...);
  }
  template <typename... Args>
  auto operator()(Args&&... args) {
    return forward(std::forward<Args>(args)...);
  }
  M* operator->() const {
    return module_.get();
  }
  const std::shared_ptr<M>& module() const {
    return module_;
  }
  [[nodiscard]] DataParallelState::NoSync no_sync() {
    return DataParallelState::NoSync(*state_);
  }
  void reduce_gradients() {
    state_->reduce_gradients();
  }

 private:
  std::shared_ptr<M> module_;
  std::shared_ptr<DataParallelState> state_;
};

} // namespace ditto::distributed
