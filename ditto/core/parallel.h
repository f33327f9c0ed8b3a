#pragma once

#include <cstdint>
#include <functional>

#include "ditto/core/api.h"

namespace ditto {

// Threads used by ops. The default comes from DITTO_NUM_THREADS, else the
// number of cores. Results never depend on it (see Note [Fixed chunks]).
DITTO_API void set_num_threads(int n);
DITTO_API int get_num_threads();

// True on a thread that is running a chunk of parallel work.
DITTO_API bool in_parallel_region();

// Within its scope, ops called on this thread run on this thread alone and
// get_num_threads() returns 1 there (data-loader workers do this, as
// PyTorch sets one thread per worker). Results are the same: see Note
// [Fixed chunks].
class DITTO_API SerialScope {
 public:
  SerialScope();
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  bool previous_;
};

// Note [Fixed chunks]
// parallel_for cuts [begin, end) into chunks of `grain` elements (the last
// may be shorter). The boundaries depend on the range and the grain only,
// never on the thread count, and each chunk is processed by one call of fn.
// Which thread runs a chunk is a matter of speed only: each thread first
// runs a contiguous range of the chunks, the same range on every call
// (Note [Chunks keep their thread] in parallel.cpp), then takes what is left
// of the others'. A kernel that writes each output from one chunk, or keeps
// one partial per chunk and combines the partials in chunk order
// (parallel_reduce), gives the same bits with any thread count.
// Nested calls and calls while the pool is busy with another user thread's
// work run inline, over the same chunks.
DITTO_API void parallel_for(
    int64_t begin,
    int64_t end,
    int64_t grain,
    const std::function<void(int64_t, int64_t)>& fn);

// Runs fn(chunk_index) for chunk_index in [0, num_chunks) on the pool.
DITTO_API void parallel_chunks(
    int64_t num_chunks,
    const std::function<void(int64_t)>& fn);

// Sets round-to-nearest and clears flush-to-zero and denormals-are-zero for
// its lifetime, then restores the caller's floating-point environment, so
// kernels do not depend on what the calling thread set.
class DITTO_API FpEnvGuard {
 public:
  FpEnvGuard();
  ~FpEnvGuard();
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  unsigned csr_ = 0;
  int round_ = 0;
};

} // namespace ditto
