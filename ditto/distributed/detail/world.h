#pragma once

// The process's communicator and the agreement every collective starts with
// (Note [Collectives agree first], Note [Collective timeout] in
// agreement.cpp): internal to libditto_distributed, never installed.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "ditto/core/tensor.h"

namespace ditto::distributed::world_detail {

// The process's state, set once by init(): ditto's own copy of
// MPI_COMM_WORLD (MPI_COMM_NULL before init), this rank, the world's size.
struct World {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
};
World& world();

// The communicator; Error naming op before init().
MPI_Comm comm(const char* op);

// bytes as an MPI count; ValueError naming op over INT_MAX.
int count_of(size_t bytes, const char* op);

enum Collective : int64_t {
  kAllReduce = 1,
  kReduceScatter,
  kBroadcast,
  kAllGather,
  kBarrier,
  kReduceColumns,
  kExit
};

// Every rank's call meets every other's before data moves: check runs this
// rank's own argument checks (it may throw); a failure or a mismatch on any
// rank raises on every rank. t may be null (no tensor).
void agree(
    const char* op,
    Collective collective,
    int64_t reduce,
    int64_t root,
    const Tensor* t,
    const std::function<void()>& check);

// Prints message and ends the whole job (MPI_Abort).
[[noreturn]] void abort_job(const std::string& message);

// Before MPI_Finalize: the ranks agree that all are exiting.
void agree_at_exit();

} // namespace ditto::distributed::world_detail
