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
#include "ditto/distributed/detail/world.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::distributed {
namespace {

using namespace world_detail;

std::once_flag g_init_once;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    agree_at_exit();
    if (world().comm != MPI_COMM_NULL) {
      MPI_Comm_free(&world().comm);
    }
    MPI_Finalize();
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
  return n * r / world().size;
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
    MPI_Comm_dup(MPI_COMM_WORLD, &world().comm);
    MPI_Comm_rank(world().comm, &world().rank);
    MPI_Comm_size(world().comm, &world().size);
  });
}

bool is_initialized() {
  return world().comm != MPI_COMM_NULL;
}

int rank() {
  return world().rank;
}

int world_size() {
  return world().size;
}

std::string where() {
  return "rank " + std::to_string(world().rank) + " of " +
      std::to_string(world().size);
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
  const auto p = size_t(world().size);
  const int64_t mine = counts[size_t(world().rank)];
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
  for (int q = 0; q < world().size; ++q) {
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
  const int64_t my_b = chunk_begin(n, world().rank);
  const int64_t my_n = chunk_begin(n, world().rank + 1) - my_b;
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
  for (int q = 0; q < world().size; ++q) {
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
  if (world().size == 1) {
    return;
  }
  // A contiguous tensor is sent from and gathered into in place.
  Tensor buf = tensor.contiguous();
  reduce_columns_impl(
      buf.reshape({1, buf.numel()}),
      std::vector<int64_t>(size_t(world().size), 1),
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
        int64_t(inputs.size()) == world().size,
        ValueError,
        kOp,
        "expected one input per rank (",
        world().size,
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
  if (world().size == 1) {
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
  Tensor row = cat(flat, 0).reshape({1, m * world().size});
  MPI_Comm c = comm(kOp);
  const size_t es = element_size(output.dtype());
  const auto p = size_t(world().size);
  std::vector<int> counts(p, count_of(size_t(m) * es, kOp)), offsets(p);
  for (size_t q = 0; q < p; ++q) {
    offsets[q] = count_of(size_t(m) * q * es, kOp);
  }
  Tensor gathered = empty({world().size, m}, output.dtype());
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
        root >= 0 && root < world().size,
        ValueError,
        kOp,
        "root ",
        root,
        " is not a rank (world size ",
        world().size,
        ")");
  });
  if (world().size == 1) {
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
  out.reserve(size_t(world().size));
  std::vector<uint8_t> all(size_t(bytes) * size_t(world().size));
  MPI_Allgather(
      mine.raw_data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, c);
  for (int r = 0; r < world().size; ++r) {
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
  g.rank = world().rank;
  g.world_size = world().size;
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
              counts.size() == size_t(world().size) &&
              rows.size(0) == counts[size_t(world().rank)],
          ValueError,
          kOp,
          "expected this rank's ",
          counts.size() == size_t(world().size) ? counts[size_t(world().rank)]
                                                : -1,
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
  if (world().size == 1) {
    return;
  }
  train::MicroBatchSum sum(world().size, process_group());
  sum.add(world().rank, train::take_gradients(params));
  std::vector<Tensor> total = sum.reduce();
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i];
    p.mutable_grad() = div(total[i], double(world().size));
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
