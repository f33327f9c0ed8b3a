"""Issue 61 item 8 from Python: rank 1 raises (or calls sys.exit(3)) while
the other ranks wait in collectives; the job must end within seconds,
naming the rank (tests/distributed/expect_job_failure), not hang in
MPI_Finalize."""
import sys

import ditto
import ditto.distributed as dist

dist.init_process_group("mpi")
t = ditto.ones(100)
dist.all_reduce(t)
if dist.get_rank() == 1:
    if len(sys.argv) > 1 and sys.argv[1] == "exit":
        sys.exit(3)
    raise RuntimeError("planted Python failure on rank 1")
for _ in range(1000000):
    dist.all_reduce(t)
print("not reached")
