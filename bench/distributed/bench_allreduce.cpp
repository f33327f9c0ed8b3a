// ditto::distributed::all_reduce (rank-order sums: reduce-scatter by chunks
// + all-gather) and the gradient reduction of the micro-batch tree
// (train::MicroBatchSum over P micro-batches, one per rank: what
// DistributedDataParallel does after backward) against
// MPI_Allreduce(MPI_SUM) of the same float32 bytes, in one run
// (docs/distributed.md). A benchmark, not a test:
//
//   mpirun -n 2 build/ditto_bench_allreduce
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace dist = ditto::distributed;

namespace {

template <typename F>
double seconds_per_call(F f) {
  f(); // warm-up
  dist::barrier();
  int reps = 1;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      f();
    }
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    // Every rank agrees on when to stop (rank 0's clock decides).
    double total = s;
    MPI_Bcast(&total, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (total > 0.3 || reps >= (1 << 20)) {
      return total / reps;
    }
    reps *= 2;
  }
}

} // namespace

int main() {
  dist::init();
  if (dist::rank() == 0) {
    std::printf(
        "all_reduce of float32, %d processes (us per call)\n"
        "%12s %14s %14s %14s %8s %8s\n",
        dist::world_size(),
        "elements",
        "all_reduce",
        "tree",
        "MPI_Allreduce",
        "ratio",
        "tree/MPI");
  }
  for (int64_t n : {1024, 65536, 1 << 20, 1 << 22}) {
    ditto::Tensor t = ditto::ones({n});
    std::vector<float> buf(size_t(n), 1.0f);
    std::vector<float> out(buf.size());
    const double d = seconds_per_call([&] { dist::all_reduce(t); });
    const double tr = seconds_per_call([&] {
      ditto::train::MicroBatchSum sum(
          dist::world_size(), dist::process_group());
      sum.add(dist::rank(), {t});
      sum.reduce();
    });
    const double m = seconds_per_call([&] {
      MPI_Allreduce(
          buf.data(), out.data(), int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    if (dist::rank() == 0) {
      std::printf(
          "%12lld %14.1f %14.1f %14.1f %8.2f %8.2f\n",
          (long long)n,
          d * 1e6,
          tr * 1e6,
          m * 1e6,
          d / m,
          tr / m);
    }
  }
  return 0;
}
