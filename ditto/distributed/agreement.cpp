// The agreement every collective of ditto::distributed starts with, and
// its timeout (Note [Collectives agree first], Note [Collective timeout]).

#include "ditto/distributed/detail/world.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <thread>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/core/shape.h"
#include "ditto/distributed/distributed.h"

namespace ditto::distributed {
namespace world_detail {

World& world() {
  static World w;
  return w;
}

MPI_Comm comm(const char* op) {
  DITTO_CHECK(
      world().comm != MPI_COMM_NULL,
      Error,
      op,
      "ditto::distributed::init() has not been called");
  return world().comm;
}

// MPI counts are ints: a message of more bytes is refused with a clear
// error (not truncated).
int count_of(size_t bytes, const char* op) {
  DITTO_CHECK(
      bytes <= size_t(INT_MAX),
      ValueError,
      op,
      "a message of ",
      bytes,
      " bytes is over MPI's limit of ",
      INT_MAX,
      " bytes per rank");
  return int(bytes);
}

namespace {

// dtype, dim, then up to kDims sizes (a larger dim sends its numel).
constexpr int kDims = 8;
// A call's header: the collective, its reduce op and root (-1: none), whether
// this rank's own argument checks failed, the tensor's dtype (-1: no tensor)
// and dim, then its sizes (or, over kDims dims, its element count).
constexpr int kHeader = 6 + kDims;
const char* collective_name(int64_t c) {
  switch (c) {
    case kAllReduce:
      return "all_reduce";
    case kReduceScatter:
      return "reduce_scatter";
    case kBroadcast:
      return "broadcast";
    case kAllGather:
      return "all_gather";
    case kBarrier:
      return "barrier";
    case kReduceColumns:
      return "reduce_columns";
    case kExit:
      return "exit (the process is ending)";
    default:
      return "?";
  }
}

std::string describe(const int64_t* h) {
  std::ostringstream s;
  s << collective_name(h[0]);
  if (h[1] >= 0) {
    s << (h[1] == int64_t(ReduceOp::Avg) ? " avg" : " sum");
  }
  if (h[2] >= 0) {
    s << " root " << h[2];
  }
  if (h[4] >= 0) {
    s << " " << dtype_name(Dtype(uint8_t(h[4]))) << " ";
    if (h[5] <= kDims) {
      s << shape_str(IntList(h + 6, h + 6 + h[5]));
    } else {
      s << h[5] << "-d tensor of " << h[6] << " elements";
    }
  }
  return s.str();
}

// Note [Collective timeout]
// The agreement waits with a deadline: a non-blocking all-gather of the
// headers, and a "joined" message from every rank to rank 0. A rank that
// never joins (it skipped the collective, hangs elsewhere, or
// exits) would block the others forever: after the timeout (torch's
// init_process_group(timeout=), 30 minutes unless set_timeout says
// otherwise) rank 0 ends the job (MPI_Abort) naming the collective and the
// ranks that never joined; the others wait a grace period longer, so that
// rank 0's message is the one printed.
std::atomic<int64_t> g_timeout_ms{30 * 60 * 1000};
constexpr int kAgreeTag = 0x6469;
constexpr int64_t kGraceMs = 5000;

} // namespace

[[noreturn]] void abort_job(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(world().comm != MPI_COMM_NULL ? world().comm : MPI_COMM_WORLD, 1);
  std::abort();
}

namespace {

// Waits for reqs until all complete or deadline; the indices of those not
// complete (empty: all done).
std::vector<int> wait_until(
    std::vector<MPI_Request>& reqs,
    std::chrono::steady_clock::time_point deadline) {
  // Spin first (a collective's ranks usually arrive within microseconds:
  // a sleep there would be the collective's latency), then yield, then
  // sleep in growing steps up to 1 ms.
  const auto begin = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(50);
  while (true) {
    int done = 0;
    MPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (done) {
      return {};
    }
    const auto waited = std::chrono::steady_clock::now() - begin;
    if (waited < std::chrono::microseconds(200)) {
      continue;
    }
    if (waited < std::chrono::milliseconds(5)) {
      std::this_thread::yield();
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::vector<int> pending;
      for (size_t i = 0; i < reqs.size(); ++i) {
        int flag = 0;
        if (reqs[i] != MPI_REQUEST_NULL) {
          MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        } else {
          flag = 1;
        }
        if (!flag) {
          pending.push_back(int(i));
        }
      }
      if (!pending.empty()) {
        return pending;
      }
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

std::string seconds_str(int64_t ms) {
  std::ostringstream s;
  s << double(ms) / 1000.0 << " s";
  return s.str();
}

// Every rank's header into all (rank order), within the timeout: one
// MPI_Iallgather, and beside it a one-integer "joined" message from every
// rank to rank 0, which names the ranks that never joined when the timeout
// passes (a collective cannot say who is missing).
void exchange_headers(
    const char* op,
    const int64_t* mine,
    std::vector<int64_t>& all,
    MPI_Comm c) {
  const int64_t timeout = g_timeout_ms.load();
  const auto start = std::chrono::steady_clock::now();
  if (world().size == 1) {
    std::copy(mine, mine + kHeader, all.begin());
    return;
  }
  std::vector<MPI_Request> reqs(1, MPI_REQUEST_NULL);
  MPI_Iallgather(
      mine,
      kHeader,
      MPI_INT64_T,
      all.data(),
      kHeader,
      MPI_INT64_T,
      c,
      &reqs[0]);
  const int joined = 1;
  std::vector<int> arrived(size_t(world().size), 0);
  if (world().rank == 0) {
    for (int r = 1; r < world().size; ++r) {
      reqs.push_back(MPI_REQUEST_NULL);
      MPI_Irecv(&arrived[size_t(r)], 1, MPI_INT, r, kAgreeTag, c, &reqs.back());
    }
  } else {
    reqs.push_back(MPI_REQUEST_NULL);
    MPI_Isend(&joined, 1, MPI_INT, 0, kAgreeTag, c, &reqs.back());
  }
  const int64_t limit = world().rank == 0 ? timeout : timeout + kGraceMs;
  const std::vector<int> pending =
      wait_until(reqs, start + std::chrono::milliseconds(limit));
  if (pending.empty()) {
    return;
  }
  std::ostringstream msg;
  msg << "[" << op << "] " << where() << ": timed out after "
      << seconds_str(limit) << " waiting for ";
  if (world().rank == 0) {
    int named = 0;
    msg << "rank(s) ";
    for (int i : pending) {
      if (i > 0) { // request i receives rank i's message
        msg << (named++ ? ", " : "") << i;
      }
    }
    msg << (named ? "" : "?") << " to join " << op
        << " (a rank that never calls it, or that failed before it)";
  } else {
    msg << "the other ranks to join " << op;
  }
  msg << "; ending the job";
  abort_job(msg.str());
}

} // namespace

// Note [Collectives agree first]
// Every collective starts with one small all-gather of each rank's call
// (the collective, its reduce op and root, the tensor's dtype and shape, and
// whether the rank's own argument checks failed) before any data moves. A
// rank whose arguments are bad still takes part in it, so an error on one
// rank raises on every rank (the others name it) and the ranks stay in step
// for the next collective; a mismatch (another collective, root, op, dtype
// or shape on some rank) raises on every rank, naming each rank's call.
// check runs this rank's own checks; it may throw.
void agree(
    const char* op,
    Collective collective,
    int64_t reduce,
    int64_t root,
    const Tensor* t,
    const std::function<void()>& check) {
  MPI_Comm c = comm(op);
  std::exception_ptr mine_error;
  try {
    check();
  } catch (...) {
    mine_error = std::current_exception();
  }
  int64_t mine[kHeader] = {};
  mine[0] = collective;
  mine[1] = reduce;
  mine[2] = root;
  mine[3] = mine_error ? 1 : 0;
  mine[4] = -1;
  if (!mine_error && t != nullptr && t->defined()) {
    const auto dim = int64_t(t->dim());
    mine[4] = int64_t(t->dtype());
    mine[5] = dim;
    if (dim <= kDims) {
      for (int64_t d = 0; d < dim; ++d) {
        mine[6 + d] = t->size(d);
      }
    } else {
      mine[6] = t->numel();
    }
  }
  std::vector<int64_t> all(size_t(kHeader) * size_t(world().size));
  exchange_headers(op, mine, all, c);
  if (mine_error) {
    std::rethrow_exception(mine_error);
  }
  std::ostringstream failed;
  for (int r = 0; r < world().size; ++r) {
    if (all[size_t(r) * kHeader + 3] != 0) {
      failed << (failed.tellp() > 0 ? ", " : "") << r;
    }
  }
  if (failed.tellp() > 0) {
    detail::throw_error<ValueError>(
        op,
        "rank(s) " + failed.str() +
            " refused their arguments (their own error names them); nothing "
            "was sent");
  }
  for (int r = 1; r < world().size; ++r) {
    if (std::memcmp(
            all.data(), all.data() + r * kHeader, sizeof(int64_t) * kHeader) !=
        0) {
      std::ostringstream s;
      s << "every rank must make the same call with the same dtype and "
           "shape, got ";
      for (int q = 0; q < world().size; ++q) {
        s << (q ? ", " : "") << "rank " << q << ": "
          << describe(all.data() + q * kHeader);
      }
      detail::throw_error<ValueError>(op, s.str());
    }
  }
}

// At exit, before MPI_Finalize (which would wait for ranks still in a
// collective forever): the ranks agree that all are exiting. A rank that
// exits early (an exception, sys.exit, an error return) meets the others'
// next collective instead, and ends the job naming itself (issue 61 item 8).
void agree_at_exit() {
  if (world().comm == MPI_COMM_NULL) {
    return;
  }
  try {
    agree("exit", kExit, -1, -1, nullptr, [] {});
  } catch (const std::exception& e) {
    abort_job(where() + " is exiting while other ranks are not: " + e.what());
  }
}

} // namespace world_detail

void set_timeout(std::chrono::milliseconds timeout) {
  DITTO_CHECK(
      timeout.count() > 0,
      ValueError,
      "set_timeout",
      "the timeout must be positive, got ",
      timeout.count(),
      " ms");
  world_detail::g_timeout_ms.store(timeout.count());
}

std::chrono::milliseconds timeout() {
  return std::chrono::milliseconds(world_detail::g_timeout_ms.load());
}
} // namespace ditto::distributed
