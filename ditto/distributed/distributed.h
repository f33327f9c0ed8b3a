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
// its owner, then an all-gather: the bytes of a ring all-reduce).
//
// Every call is collective: all ranks call it, in the same order, with
// tensors of one dtype and shape; a mismatch raises ValueError on every
// rank (naming the ranks and their shapes), never a hang or a corrupt
// buffer. Bad arguments raise before anything is sent, on the rank that
// gave them; the other ranks then wait in the collective, so an uncaught
// exception must end the process: mpirun then ends the whole job.

#include <string>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::distributed {

// MPI_Init_thread (funneled: ditto's worker threads never call MPI) unless
// MPI is already initialized; idempotent. MPI is finalized at exit.
void init();
bool is_initialized();
// This process's rank and the number of processes (0 and 1 before init()).
int rank();
int world_size();
void barrier();

enum class ReduceOp { Sum, Avg };

// In place, on every rank: the elementwise sum over the ranks in rank order
// (Avg: the sum divided by world_size; floating dtypes only). Bool tensors
// are refused (TypeError). Any layout; the result keeps the tensor's.
void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum);
// In place: root's values on every rank.
void broadcast(Tensor& tensor, int root = 0);
// Every rank's tensor, in rank order (new contiguous tensors).
std::vector<Tensor> all_gather(const Tensor& tensor);

// The text "rank R of N" for messages.
std::string where();

} // namespace ditto::distributed
