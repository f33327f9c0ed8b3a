// ditto::distributed on Open MPI (distributed.h, docs/distributed.md).
// Bytes travel as MPI_BYTE; sums are ditto's own loops, in rank order, so
// the result is fixed by the inputs alone.

#include "ditto/distributed/distributed.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "ditto/autograd/engine.h"
#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/core/shape.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::distributed {
namespace {

MPI_Comm g_comm = MPI_COMM_NULL; // ditto's own copy of MPI_COMM_WORLD
int g_rank = 0, g_size = 1;
std::once_flag g_init_once;

void agree_at_exit();

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    agree_at_exit();
    if (g_comm != MPI_COMM_NULL) {
      MPI_Comm_free(&g_comm);
    }
    MPI_Finalize();
  }
}

MPI_Comm comm(const char* op) {
  DITTO_CHECK(
      g_comm != MPI_COMM_NULL,
      Error,
      op,
      "ditto::distributed::init() has not been called");
  return g_comm;
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

// dtype, dim, then up to kDims sizes (a larger dim sends its numel).
constexpr int kDims = 8;
// A call's header: the collective, its reduce op and root (-1: none), whether
// this rank's own argument checks failed, the tensor's dtype (-1: no tensor)
// and dim, then its sizes (or, over kDims dims, its element count).
constexpr int kHeader = 6 + kDims;
enum Collective : int64_t {
  kAllReduce = 1,
  kReduceScatter,
  kBroadcast,
  kAllGather,
  kBarrier,
  kReduceColumns,
  kExit
};

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

[[noreturn]] void abort_job(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(g_comm != MPI_COMM_NULL ? g_comm : MPI_COMM_WORLD, 1);
  std::abort();
}

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
  if (g_size == 1) {
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
  std::vector<int> arrived(size_t(g_size), 0);
  if (g_rank == 0) {
    for (int r = 1; r < g_size; ++r) {
      reqs.push_back(MPI_REQUEST_NULL);
      MPI_Irecv(&arrived[size_t(r)], 1, MPI_INT, r, kAgreeTag, c, &reqs.back());
    }
  } else {
    reqs.push_back(MPI_REQUEST_NULL);
    MPI_Isend(&joined, 1, MPI_INT, 0, kAgreeTag, c, &reqs.back());
  }
  const int64_t limit = g_rank == 0 ? timeout : timeout + kGraceMs;
  const std::vector<int> pending =
      wait_until(reqs, start + std::chrono::milliseconds(limit));
  if (pending.empty()) {
    return;
  }
  std::ostringstream msg;
  msg << "[" << op << "] " << where() << ": timed out after "
      << seconds_str(limit) << " waiting for ";
  if (g_rank == 0) {
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
  std::vector<int64_t> all(size_t(kHeader) * size_t(g_size));
  exchange_headers(op, mine, all, c);
  if (mine_error) {
    std::rethrow_exception(mine_error);
  }
  std::ostringstream failed;
  for (int r = 0; r < g_size; ++r) {
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
  for (int r = 1; r < g_size; ++r) {
    if (std::memcmp(
            all.data(), all.data() + r * kHeader, sizeof(int64_t) * kHeader) !=
        0) {
      std::ostringstream s;
      s << "every rank must make the same call with the same dtype and "
           "shape, got ";
      for (int q = 0; q < g_size; ++q) {
        s << (q ? ", " : "") << "rank " << q << ": "
          << describe(all.data() + q * kHeader);
      }
      detail::throw_error<ValueError>(op, s.str());
    }
  }
}

// acc[i] += x[i] in T (integers wrap, as two's complement).
template <typename T>
void add_into(void* acc, const void* x, int64_t n) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(x);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      a[i] = T(U(a[i]) + U(b[i]));
    } else {
      a[i] += b[i];
    }
  }
}

void add_into(Dtype d, void* acc, const void* x, int64_t n) {
  switch (d) {
    case kFloat32:
      return add_into<float>(acc, x, n);
    case kFloat64:
      return add_into<double>(acc, x, n);
    case kInt64:
      return add_into<int64_t>(acc, x, n);
    case kInt32:
      return add_into<int32_t>(acc, x, n);
    case kUInt8:
      return add_into<uint8_t>(acc, x, n);
    default:
      detail::throw_error<TypeError>(
          "all_reduce", "cannot sum ", dtype_name(d), " tensors");
  }
}

// The elements [begin(r), begin(r + 1)) are rank r's chunk.
int64_t chunk_begin(int64_t n, int r) {
  return n * r / g_size;
}

// The result of a collective in a contiguous buffer goes back into the
// caller's tensor (a no-op when the tensor was contiguous already).
void write_back(Tensor& t, const Tensor& c) {
  if (!c.is_same(t)) {
    autograd::NoGradGuard no_grad; // a collective is not an autograd op
    t.copy_(c);
  }
}

// A collective's contiguous result (t's elements in order) into t: bytes
// into a contiguous t (as MPI writes a receive buffer: not an autograd op,
// as torch.distributed's are not), else through a copy into the view.
void write_result(Tensor& t, const Tensor& result) {
  if (t.is_contiguous()) {
    if (t.numel() > 0) {
      std::memmove( // the result may be t's own memory (one rank)
          t.raw_data(),
          result.raw_data(),
          size_t(t.numel()) * element_size(t.dtype()));
    }
    return;
  }
  write_back(t, result.view(t.sizes()));
}

// At exit, before MPI_Finalize (which would wait for ranks still in a
// collective forever): the ranks agree that all are exiting. A rank that
// exits early (an exception, sys.exit, an error return) meets the others'
// next collective instead, and ends the job naming itself (issue 61 item 8).
void agree_at_exit() {
  if (g_comm == MPI_COMM_NULL) {
    return;
  }
  try {
    agree("exit", kExit, -1, -1, nullptr, [] {});
  } catch (const std::exception& e) {
    abort_job(where() + " is exiting while other ranks are not: " + e.what());
  }
}

} // namespace

void set_timeout(std::chrono::milliseconds timeout) {
  DITTO_CHECK(
      timeout.count() > 0,
      ValueError,
      "set_timeout",
      "the timeout must be positive, got ",
      timeout.count(),
      " ms");
  g_timeout_ms.store(timeout.count());
}

std::chrono::milliseconds timeout() {
  return std::chrono::milliseconds(g_timeout_ms.load());
}

void init() {
  std::call_once(g_init_once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      std::atexit(finalize_at_exit);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
    MPI_Comm_rank(g_comm, &g_rank);
    MPI_Comm_size(g_comm, &g_size);
  });
}

bool is_initialized() {
  return g_comm != MPI_COMM_NULL;
}

int rank() {
  return g_rank;
}

int world_size() {
  return g_size;
}

std::string where() {
  return "rank " + std::to_string(g_rank) + " of " + std::to_string(g_size);
}

void barrier() {
  agree("barrier", kBarrier, -1, -1, nullptr, [] {});
  MPI_Barrier(comm("barrier"));
}

namespace {

// The engine of all_reduce and of ProcessGroup::reduce_columns: every rank
// holds a contiguous [counts[r], n] tensor `rows`; the columns are cut into
// one chunk per rank; rank q receives chunk q of every rank's rows
// (MPI_Alltoallv), stacked in rank order as a [sum counts, c] tensor,
// combines it into c values, and the combined chunks are gathered on every
// rank (MPI_Allgatherv). Returns the [n] result, in `into` when it is given
// (contiguous, n elements of the dtype: all_reduce's own tensor), else in a
// new tensor. The caller has checked that the dtype and n agree.
Tensor reduce_columns_impl(
    const Tensor& rows,
    const std::vector<int64_t>& counts,
    const train::ProcessGroup::Combine& combine,
    const char* op,
    const Tensor& into = Tensor()) {
  MPI_Comm c = comm(op);
  const Dtype dt = rows.dtype();
  const int64_t n = rows.size(1);
  const size_t es = element_size(dt);
  const auto p = size_t(g_size);
  const int64_t mine = counts[size_t(g_rank)];
  int64_t total_rows = 0;
  std::vector<int64_t> row_offset(p);
  for (size_t r = 0; r < p; ++r) {
    row_offset[r] = total_rows;
    total_rows += counts[r];
  }
  // The send buffer by owner: for owner q, this rank's rows cut to chunk q.
  // With one row the chunks are the row's own consecutive pieces, sent from
  // where they are.
  std::vector<int> send_counts(p), send_offsets(p);
  std::vector<uint8_t> send(mine == 1 ? 0 : size_t(mine) * size_t(n) * es);
  const auto* src = static_cast<const uint8_t*>(rows.raw_data());
  size_t at = 0;
  for (int q = 0; q < g_size; ++q) {
    const int64_t b = chunk_begin(n, q), e = chunk_begin(n, q + 1);
    const size_t width = size_t(e - b) * es;
    send_offsets[size_t(q)] = count_of(at, op);
    if (mine == 1) {
      at += width;
    }
    for (int64_t i = 0; i < mine && mine != 1; ++i) {
      std::memcpy(
          send.data() + at,
          src + (size_t(i) * size_t(n) + size_t(b)) * es,
          width);
      at += width;
    }
    send_counts[size_t(q)] = count_of(size_t(mine) * width, op);
  }
  const int64_t my_b = chunk_begin(n, g_rank);
  const int64_t my_n = chunk_begin(n, g_rank + 1) - my_b;
  Tensor gathered = empty({total_rows, my_n}, dt);
  std::vector<int> recv_counts(p), recv_offsets(p);
  for (size_t r = 0; r < p; ++r) {
    recv_counts[r] = count_of(size_t(counts[r] * my_n) * es, op);
    recv_offsets[r] = count_of(size_t(row_offset[r] * my_n) * es, op);
  }
  MPI_Alltoallv(
      mine == 1 ? src : send.data(),
      send_counts.data(),
      send_offsets.data(),
      MPI_BYTE,
      gathered.raw_data(),
      recv_counts.data(),
      recv_offsets.data(),
      MPI_BYTE,
      c);
  Tensor reduced = combine(gathered, my_b).contiguous();
  DITTO_CHECK(
      reduced.dtype() == dt && reduced.dim() == 1 && reduced.size(0) == my_n,
      Error,
      op,
      "the combine function must return ",
      my_n,
      " values of ",
      dtype_name(dt),
      ", got ",
      dtype_name(reduced.dtype()),
      " ",
      shape_str(reduced.sizes()));
  Tensor out = into.defined() ? into : empty({n}, dt);
  std::vector<int> out_counts(p), out_offsets(p);
  for (int q = 0; q < g_size; ++q) {
    const int64_t b = chunk_begin(n, q), e = chunk_begin(n, q + 1);
    out_counts[size_t(q)] = count_of(size_t(e - b) * es, op);
    out_offsets[size_t(q)] = count_of(size_t(b) * es, op);
  }
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  if (my_n > 0) {
    std::memcpy(dst + size_t(my_b) * es, reduced.raw_data(), size_t(my_n) * es);
  }
  MPI_Allgatherv(
      MPI_IN_PLACE,
      0,
      MPI_BYTE,
      dst,
      out_counts.data(),
      out_offsets.data(),
      MPI_BYTE,
      c);
  return out;
}

// The rank-order sum of a [P, c] tensor's rows (Avg: divided by P).
Tensor rank_order_sum(const Tensor& rows, ReduceOp op) {
  const Dtype dt = rows.dtype();
  const int64_t c = rows.size(1);
  Tensor acc = empty({c}, dt);
  const auto* base = static_cast<const uint8_t*>(rows.raw_data());
  const size_t row_bytes = size_t(c) * element_size(dt);
  if (row_bytes > 0) {
    std::memcpy(acc.raw_data(), base, row_bytes);
  }
  for (int64_t r = 1; r < rows.size(0); ++r) {
    add_into(dt, acc.raw_data(), base + size_t(r) * row_bytes, c);
  }
  if (op == ReduceOp::Avg) {
    const auto p = rows.size(0);
    if (dt == kFloat32) {
      auto* a = static_cast<float*>(acc.raw_data());
      for (int64_t i = 0; i < c; ++i) {
        a[i] /= float(p);
      }
    } else {
      auto* a = static_cast<double*>(acc.raw_data());
      for (int64_t i = 0; i < c; ++i) {
        a[i] /= double(p);
      }
    }
  }
  return acc;
}

void check_reduce_args(const Tensor& t, ReduceOp op, const char* name) {
  DITTO_CHECK(t.defined(), ValueError, name, "undefined tensor");
  const Dtype dt = t.dtype();
  DITTO_CHECK(
      dt != kBool, TypeError, name, "cannot sum bool tensors (use uint8)");
  DITTO_CHECK(
      dt == kFloat32 || dt == kFloat64 || dt == kInt64 || dt == kInt32 ||
          dt == kUInt8,
      TypeError,
      name,
      "cannot sum ",
      dtype_name(dt),
      " tensors");
  DITTO_CHECK(
      op != ReduceOp::Avg || is_floating(dt),
      TypeError,
      name,
      "ReduceOp::Avg needs a floating tensor, got ",
      dtype_name(dt));
}

} // namespace

void all_reduce(Tensor& tensor, ReduceOp op) {
  constexpr const char* kOp = "all_reduce";
  comm(kOp);
  agree(kOp, kAllReduce, int64_t(op), -1, &tensor, [&] {
    check_reduce_args(tensor, op, kOp);
  });
  if (g_size == 1) {
    return;
  }
  // A contiguous tensor is sent from and gathered into in place.
  Tensor buf = tensor.contiguous();
  reduce_columns_impl(
      buf.reshape({1, buf.numel()}),
      std::vector<int64_t>(size_t(g_size), 1),
      [op](const Tensor& r, int64_t) { return rank_order_sum(r, op); },
      kOp,
      buf.reshape({buf.numel()}));
  write_back(tensor, buf);
}

void reduce_scatter(
    Tensor& output,
    const std::vector<Tensor>& inputs,
    ReduceOp op) {
  constexpr const char* kOp = "reduce_scatter";
  comm(kOp);
  agree(kOp, kReduceScatter, int64_t(op), -1, &output, [&] {
    check_reduce_args(output, op, kOp);
    DITTO_CHECK(
        int64_t(inputs.size()) == g_size,
        ValueError,
        kOp,
        "expected one input per rank (",
        g_size,
        "), got ",
        inputs.size());
    for (size_t r = 0; r < inputs.size(); ++r) {
      DITTO_CHECK(
          inputs[r].defined() && inputs[r].dtype() == output.dtype() &&
              inputs[r].sizes() == output.sizes(),
          ValueError,
          kOp,
          "input ",
          r,
          " must have the output's dtype and shape (",
          dtype_name(output.dtype()),
          " ",
          shape_str(output.sizes()),
          "), got ",
          inputs[r].defined() ? dtype_name(inputs[r].dtype()) : "undefined",
          " ",
          inputs[r].defined() ? shape_str(inputs[r].sizes()) : "");
    }
  });
  if (g_size == 1) {
    write_result(output, inputs[0].contiguous());
    return;
  }
  // Rank q owns the columns of inputs[q]: the inputs laid end to end are
  // one row of P m columns, chunked by m exactly.
  const int64_t m = output.numel();
  std::vector<Tensor> flat;
  for (const Tensor& t : inputs) {
    flat.push_back(t.reshape({-1}));
  }
  Tensor row = cat(flat, 0).reshape({1, m * g_size});
  MPI_Comm c = comm(kOp);
  const size_t es = element_size(output.dtype());
  const auto p = size_t(g_size);
  std::vector<int> counts(p, count_of(size_t(m) * es, kOp)), offsets(p);
  for (size_t q = 0; q < p; ++q) {
    offsets[q] = count_of(size_t(m) * q * es, kOp);
  }
  Tensor gathered = empty({g_size, m}, output.dtype());
  MPI_Alltoallv(
      row.raw_data(),
      counts.data(),
      offsets.data(),
      MPI_BYTE,
      gathered.raw_data(),
      counts.data(),
      offsets.data(),
      MPI_BYTE,
      c);
  write_result(output, rank_order_sum(gathered, op));
}

void broadcast(Tensor& tensor, int root) {
  constexpr const char* kOp = "broadcast";
  MPI_Comm c = comm(kOp);
  agree(kOp, kBroadcast, -1, root, &tensor, [&] {
    DITTO_CHECK(tensor.defined(), ValueError, kOp, "undefined tensor");
    DITTO_CHECK(
        root >= 0 && root < g_size,
        ValueError,
        kOp,
        "root ",
        root,
        " is not a rank (world size ",
        g_size,
        ")");
  });
  if (g_size == 1) {
    return;
  }
  Tensor buf = tensor.contiguous();
  MPI_Bcast(
      buf.raw_data(),
      count_of(size_t(buf.numel()) * element_size(buf.dtype()), kOp),
      MPI_BYTE,
      root,
      c);
  write_back(tensor, buf);
}

std::vector<Tensor> all_gather(const Tensor& tensor) {
  constexpr const char* kOp = "all_gather";
  MPI_Comm c = comm(kOp);
  agree(kOp, kAllGather, -1, -1, &tensor, [&] {
    DITTO_CHECK(tensor.defined(), ValueError, kOp, "undefined tensor");
  });
  Tensor mine = tensor.contiguous();
  const int bytes =
      count_of(size_t(mine.numel()) * element_size(mine.dtype()), kOp);
  std::vector<Tensor> out;
  out.reserve(size_t(g_size));
  std::vector<uint8_t> all(size_t(bytes) * size_t(g_size));
  MPI_Allgather(
      mine.raw_data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, c);
  for (int r = 0; r < g_size; ++r) {
    Tensor t = empty(mine.sizes(), mine.dtype());
    if (bytes > 0) {
      std::memcpy(t.raw_data(), all.data() + size_t(r) * size_t(bytes), bytes);
    }
    out.push_back(std::move(t));
  }
  return out;
}

train::ProcessGroup process_group() {
  train::ProcessGroup g;
  g.rank = g_rank;
  g.world_size = g_size;
  g.reduce_columns = [](const Tensor& rows,
                        const std::vector<int64_t>& counts,
                        const train::ProcessGroup::Combine& combine) {
    constexpr const char* kOp = "reduce_columns";
    // The ranks agree on the columns' dtype and count: no rows of them.
    const Tensor columns =
        rows.defined() && rows.dim() == 2 ? rows.narrow(0, 0, 0) : Tensor();
    agree(kOp, kReduceColumns, -1, -1, &columns, [&] {
      DITTO_CHECK(
          rows.defined() && rows.dim() == 2 &&
              counts.size() == size_t(g_size) &&
              rows.size(0) == counts[size_t(g_rank)],
          ValueError,
          kOp,
          "expected this rank's ",
          counts.size() == size_t(g_size) ? counts[size_t(g_rank)] : -1,
          " rows of a 2-d tensor, got ",
          shape_str(rows.defined() ? rows.sizes() : Shape{}));
    });
    return reduce_columns_impl(rows.contiguous(), counts, combine, kOp);
  };
  return g;
}

MicroBatchGradient::MicroBatchGradient(
    std::vector<Tensor> params,
    int64_t micro_batches)
    : params_(std::move(params)), sum_(micro_batches, process_group()) {}

void MicroBatchGradient::add(int64_t j) {
  sum_.add(j, train::take_gradients(params_));
}

void MicroBatchGradient::reduce() {
  std::vector<Tensor> total = sum_.reduce();
  const double k = double(sum_.micro_batches());
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].mutable_grad() = div(total[i], k);
  }
}

namespace {

// The average over the ranks of the parameters' gradients: the tree sum
// with rank r's gradient as micro-batch r, divided by P.
void average_gradients(const std::vector<Tensor>& params) {
  if (g_size == 1) {
    return;
  }
  train::MicroBatchSum sum(g_size, process_group());
  sum.add(g_rank, train::take_gradients(params));
  std::vector<Tensor> total = sum.reduce();
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    p.mutable_grad() = div(total[i], double(g_size));
  }
}

} // namespace

DataParallelState::DataParallelState(nn::Module& module, bool broadcast_buffers)
    : DataParallelState(
          module.parameters(),
          module.buffers(),
          broadcast_buffers) {}

DataParallelState::DataParallelState(
    std::vector<Tensor> params,
    std::vector<Tensor> buffers,
    bool broadcast_buffers)
    : params_(std::move(params)),
      buffers_(std::move(buffers)),
      broadcast_buffers_(broadcast_buffers),
      queued_(std::make_shared<bool>(false)) {
  comm("DistributedDataParallel");
  autograd::NoGradGuard no_grad;
  for (Tensor t : params_) {
    broadcast(t, 0);
  }
  for (Tensor t : buffers_) {
    broadcast(t, 0);
  }
}

void DataParallelState::before_forward() {
  if (broadcast_buffers_) {
    autograd::NoGradGuard no_grad;
    for (Tensor t : buffers_) {
      broadcast(t, 0);
    }
  }
  prepare_backward();
}

void DataParallelState::prepare_backward() {
  if (!sync_ || !autograd::GradMode::is_enabled() || *queued_) {
    return;
  }
  *queued_ = true;
  autograd::queue_callback([params = params_, queued = queued_] {
    *queued = false;
    average_gradients(params);
  });
}

void DataParallelState::reduce_gradients() {
  average_gradients(params_);
}

} // namespace ditto::distributed
