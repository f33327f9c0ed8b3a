// ditto::distributed on Open MPI (distributed.h, docs/distributed.md).
// Bytes travel as MPI_BYTE; sums are ditto's own loops, in rank order, so
// the result is fixed by the inputs alone.

#include "ditto/distributed/distributed.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "ditto/core/error.h"
#include "ditto/core/shape.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto::distributed {
namespace {

MPI_Comm g_comm = MPI_COMM_NULL; // ditto's own copy of MPI_COMM_WORLD
int g_rank = 0, g_size = 1;
std::once_flag g_init_once;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
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
constexpr int kHeader = 2 + kDims;

std::string describe(const int64_t* h) {
  std::ostringstream s;
  s << dtype_name(Dtype(uint8_t(h[0]))) << " ";
  if (h[1] <= kDims) {
    s << shape_str(IntList(h + 2, h + 2 + h[1]));
  } else {
    s << h[1] << "-d tensor of " << h[2] << " elements";
  }
  return s.str();
}

// Every rank's dtype and shape must be the same: checked by one small
// all-gather, so that all ranks raise together.
void check_same(const Tensor& t, const char* op) {
  int64_t mine[kHeader] = {};
  mine[0] = int64_t(t.dtype());
  mine[1] = t.dim();
  if (t.dim() <= kDims) {
    for (int64_t d = 0; d < t.dim(); ++d) {
      mine[2 + d] = t.size(d);
    }
  } else {
    mine[2] = t.numel();
  }
  std::vector<int64_t> all(size_t(kHeader) * size_t(g_size));
  MPI_Allgather(
      mine, kHeader, MPI_INT64_T, all.data(), kHeader, MPI_INT64_T, comm(op));
  for (int r = 1; r < g_size; ++r) {
    if (std::memcmp(
            all.data(), all.data() + r * kHeader, sizeof(int64_t) * kHeader) !=
        0) {
      std::ostringstream s;
      s << "every rank must pass the same dtype and shape, got ";
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
    t.copy_(c);
  }
}

} // namespace

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
  MPI_Barrier(comm("barrier"));
}

void all_reduce(Tensor& tensor, ReduceOp op) {
  constexpr const char* kOp = "all_reduce";
  MPI_Comm c = comm(kOp);
  DITTO_CHECK(tensor.defined(), ValueError, kOp, "undefined tensor");
  const Dtype dt = tensor.dtype();
  DITTO_CHECK(
      dt != kBool, TypeError, kOp, "cannot sum bool tensors (use uint8)");
  DITTO_CHECK(
      op != ReduceOp::Avg || is_floating(dt),
      TypeError,
      kOp,
      "ReduceOp::Avg needs a floating tensor, got ",
      dtype_name(dt));
  check_same(tensor, kOp);
  if (g_size == 1) {
    return;
  }
  Tensor buf = tensor.contiguous();
  const int64_t n = buf.numel();
  const size_t es = element_size(dt);
  auto* base = static_cast<uint8_t*>(buf.raw_data());

  // Reduce-scatter: rank r receives every rank's chunk r and sums it in
  // rank order.
  const auto p = size_t(g_size);
  std::vector<int> send_counts(p), send_offsets(p);
  for (int r = 0; r < g_size; ++r) {
    const int64_t b = chunk_begin(n, r), e = chunk_begin(n, r + 1);
    send_counts[size_t(r)] = count_of(size_t(e - b) * es, kOp);
    send_offsets[size_t(r)] = count_of(size_t(b) * es, kOp);
  }
  const int64_t my_b = chunk_begin(n, g_rank);
  const int64_t my_n = chunk_begin(n, g_rank + 1) - my_b;
  const int my_bytes = count_of(size_t(my_n) * es, kOp);
  std::vector<uint8_t> gathered(size_t(my_bytes) * size_t(g_size));
  std::vector<int> recv_counts(size_t(g_size), my_bytes);
  std::vector<int> recv_offsets(p);
  for (int r = 0; r < g_size; ++r) {
    recv_offsets[size_t(r)] = count_of(size_t(my_bytes) * size_t(r), kOp);
  }
  MPI_Alltoallv(
      base,
      send_counts.data(),
      send_offsets.data(),
      MPI_BYTE,
      gathered.data(),
      recv_counts.data(),
      recv_offsets.data(),
      MPI_BYTE,
      c);
  uint8_t* acc = base + size_t(my_b) * es;
  std::memcpy(acc, gathered.data(), size_t(my_bytes));
  for (int r = 1; r < g_size; ++r) {
    add_into(dt, acc, gathered.data() + size_t(r) * size_t(my_bytes), my_n);
  }
  if (op == ReduceOp::Avg) {
    if (dt == kFloat32) {
      auto* a = reinterpret_cast<float*>(acc);
      for (int64_t i = 0; i < my_n; ++i) {
        a[i] /= float(g_size);
      }
    } else {
      auto* a = reinterpret_cast<double*>(acc);
      for (int64_t i = 0; i < my_n; ++i) {
        a[i] /= double(g_size);
      }
    }
  }
  // All-gather of the reduced chunks.
  MPI_Allgatherv(
      MPI_IN_PLACE,
      0,
      MPI_BYTE,
      base,
      send_counts.data(),
      send_offsets.data(),
      MPI_BYTE,
      c);
  write_back(tensor, buf);
}

void broadcast(Tensor& tensor, int root) {
  constexpr const char* kOp = "broadcast";
  MPI_Comm c = comm(kOp);
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
  check_same(tensor, kOp);
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
  DITTO_CHECK(tensor.defined(), ValueError, kOp, "undefined tensor");
  check_same(tensor, kOp);
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
  g.all_gather = [](const Tensor& t) { return all_gather(t); };
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

} // namespace ditto::distributed
