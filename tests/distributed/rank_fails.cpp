// A job whose rank 1 raises in the middle of the collectives: mpirun must
// end the whole job with a non-zero status and the message, not hang
// (tests/distributed/expect_job_failure).
#include <cstdio>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace dist = ditto::distributed;

int main() {
  dist::init();
  ditto::Tensor t = ditto::ones({1000});
  dist::all_reduce(t);
  if (dist::rank() == 1) {
    throw ditto::ValueError("planted failure on " + dist::where());
  }
  for (int i = 0; i < 1000000; ++i) { // the others wait in a collective
    dist::all_reduce(t);
  }
  std::puts("not reached");
  return 0;
}
