// A job whose rank 1 raises (or, with the argument "kill", is killed by
// SIGKILL; with "exit", returns 1 from main; with "skip", never joins a
// collective under a 1.5 s timeout) in the middle of the collectives: mpirun
// must end the whole job with a non-zero status and a message naming the rank,
// not hang (tests/distributed/expect_job_failure).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace dist = ditto::distributed;

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (std::strcmp(mode, "skip") == 0) {
    // Issue 61 item 9: rank 1 never joins the second collective; the
    // timeout ends the job naming it.
    dist::set_timeout(std::chrono::milliseconds(1500));
  }
  dist::init();
  ditto::Tensor t = ditto::ones({1000});
  dist::all_reduce(t);
  if (dist::rank() == 1 && argc > 1 && std::strcmp(argv[1], "kill") == 0) {
    std::raise(SIGKILL);
  }
  if (dist::rank() == 1 && std::strcmp(mode, "skip") == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;
  }
  if (dist::rank() == 1 && std::strcmp(mode, "exit") == 0) {
    // Issue 61 item 8: an error return, not a crash: the exit agreement
    // ends the job instead of MPI_Finalize waiting forever.
    std::fprintf(stderr, "planted error return on %s\n", dist::where().c_str());
    return 1;
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
