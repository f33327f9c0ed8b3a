// A job whose rank 1 raises (or, with the argument "kill", is killed by
// SIGKILL) in the middle of the collectives: mpirun must end the whole job
// with a non-zero status and a message naming the rank, not hang
// (tests/distributed/expect_job_failure).
#include <csignal>
#include <cstdio>
#include <cstring>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace dist = ditto::distributed;

int main(int argc, char** argv) {
  dist::init();
  ditto::Tensor t = ditto::ones({1000});
  dist::all_reduce(t);
  if (dist::rank() == 1 && argc > 1 && std::strcmp(argv[1], "kill") == 0) {
    std::raise(SIGKILL);
  }
  if (dist::rank() == 1) {
    throw ditto::ValueError("planted failure on " + dist::where());
  }
  for (int i = 0; i < 1000000; ++i) { // the others wait in a collective
    dist::all_reduce(t);
  }
  std::puts("not reached");
  return 0;
}
