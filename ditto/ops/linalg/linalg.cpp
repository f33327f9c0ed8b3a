#include "ditto/ops/linalg.h"
#include "ditto/ops/detail/gemm_impl.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "ditto/core/env.h"
#include "ditto/core/parallel.h"
#include "ditto/determinism/context.h"
#include "ditto/kernels/cpu/gemm_blocking.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/sparse.h"

namespace ditto {
namespace gemm_impl {

// Column tiles of the output: of equal width (a multiple of nr), at most
// the blocking's nc (B's kc x nc panel is packed once per task: Note [GEMM
// blocking from the caches]), and at least two of them from 256 columns
// on when there is more than one thread (at one thread, one tile packs A
// once instead of twice: 2048^3 float32 1.5-2% faster). The split-K rule counts
// the output in tiles of kTileM rows by 256 columns, whatever the blocking.
// Which thread runs which rows and columns never changes bits. Each task
// packs what it reads into its own thread's buffers, even where two column
// tiles both pack all of A: sharing packed blocks of A or panels of B
// between threads was built three ways and was slower each time on Zen 5
// (docs/linalg.md, "Threads take whole output tiles").
constexpr int64_t kTileM = 192;
int64_t tile_cols(int64_t n, const kernels::Blocking& blk) {
  const int64_t tiles = std::max<int64_t>(
      (n + blk.nc - 1) / blk.nc, n >= 256 && get_num_threads() > 1 ? 2 : 1);
  return std::max<int64_t>(
      1, ((n + tiles - 1) / tiles + blk.nr - 1) / blk.nr * blk.nr);
}
// Bands of rows each column tile is cut into (a task is one band of one
// column tile of one batch). Each band packs its column tile's panels of B
// again, so as few as possible: one when the tasks (batches x column tiles)
// divide evenly among the threads, or are so many (16 a thread) that the
// last round costs little; otherwise the fewest that make the tasks a
// multiple of the thread count, since the pool gives each thread a
// contiguous run of tasks (Note [Chunks keep their thread]) and unequal
// runs are idle threads. Zen 5, AVX-512, alternating rounds, against bands
// of at most 4 x 192 rows: one thread (one band) 2048^3 float32 4-5%
// faster, 512^3 and 1024^3 5%, float64 3%; two threads (2048^3: 2 tasks,
// not 3 bands x 2) float32 1-2%, float64 5%.
int64_t row_bands(int64_t m, int64_t tasks) {
  const int64_t threads = std::max(1, get_num_threads());
  if (tasks % threads == 0 || tasks >= 16 * threads) {
    return 1;
  }
  return std::clamp<int64_t>(
      threads / std::gcd(threads, tasks), 1, std::max<int64_t>(1, (m + 5) / 6));
}
// Note [Split-K]
// A product with k >= kSplitKMinK is cut into chunks of kSplitKChunk values
// of k (boundaries from k only); each chunk's partial product is its own fma
// chain, and the partials are added in chunk order. Every such product, of
// any output size and batch, takes this chain, so one row of a long-k
// product has the same bits alone or among any number of rows (R8 (c);
// until 2026-12 only outputs of at most kSplitKMaxTiles tiles were split and
// a larger one was one chain over all of k, so a row's bits depended on how
// many rows shared it). An output of at most kSplitKMaxTiles tiles (192 x
// 256; weight gradients, k = batch x spatial) leaves threads idle, so
// threads take chunks: the deterministic variant keeps the partials in the
// workspace and adds them in chunk order; the fast variant adds each
// partial into the output when its thread finishes, and the bits vary. A
// larger output computes one chunk at a time, threads taking its tiles, and
// adds it in chunk order: deterministic on either variant.
constexpr int64_t kSplitKChunk = 4096;
constexpr int64_t kSplitKMinK = 16384;
constexpr int64_t kSplitKMaxTiles = 2;

// ---- the products

// out[bi] = A[bi] @ B[bi] for every batch bi: A's matrices are [m, k] with
// strides (a_rs, a_cs) from a.data + offsets.a[bi], likewise B; out is a
// contiguous [batches, m, n] tensor.
// Note [Split-K on a device]
// The CPU's chunks of k, each partial the device's product of that chunk
// (the CPU's chain over it), held in a workspace of the configured size on
// the device. Deterministic: the partials added in chunk order, the CPU's
// bits. Fast: added into the output with atomic additions in whatever order
// the device's invocations get there (the device's add_rows slot), the GPU's
// nondeterminism.
void device_split_k(
    kernels::DeviceMatrix a,
    kernels::DeviceMatrix b,
    int64_t m,
    int64_t k,
    int64_t n,
    Tensor& out,
    const char* op) {
  const int64_t chunks = (k + kSplitKChunk - 1) / kSplitKChunk, mn = m * n;
  const bool deterministic = are_deterministic_algorithms_enabled();
  const int64_t cap = std::max<int64_t>(
      1,
      std::min<int64_t>(
          chunks,
          backends::gemm::workspace_bytes() / (mn * int64_t(sizeof(float)))));
  Tensor ws = detail::new_tensor({cap, mn}, out.dtype(), out.device());
  Tensor flat = out.view({1, mn});
  if (!deterministic) {
    flat.zero_();
  }
  const std::vector<int64_t> to_row_zero(size_t(cap), 0);
  for (int64_t c0 = 0; c0 < chunks; c0 += cap) {
    const int64_t here = std::min(cap, chunks - c0);
    for (int64_t i = 0; i < here; ++i) {
      const int64_t k0 = (c0 + i) * kSplitKChunk;
      detail::device_slots(out, op).gemm(
          {&ws, i * mn, n, 1},
          {a.t, a.offset + k0 * a.cs, a.rs, a.cs},
          {b.t, b.offset + k0 * b.rs, b.rs, b.cs},
          m,
          std::min(kSplitKChunk, k - k0),
          n,
          op);
    }
    if (!deterministic) {
      detail::device_slots(out, op).add_rows(
          flat, ws, to_row_zero.data(), here, 1, mn, false, op);
      continue;
    }
    for (int64_t i = 0; i < here; ++i) {
      if (c0 + i == 0) {
        flat.copy_(ws.narrow(0, 0, 1));
      } else {
        flat.add_(ws.narrow(0, i, 1));
      }
    }
  }
}

void gemm_batched(
    const Tensor& a,
    int64_t a_rs,
    int64_t a_cs,
    const Tensor& b,
    int64_t b_rs,
    int64_t b_cs,
    const BatchOffsets& off,
    int64_t m,
    int64_t k,
    int64_t n,
    Tensor& out,
    const char* op) {
  const kernels::DeviceKernels& slots = detail::device_slots(out, op);
  if (slots.gemm_batched != nullptr) {
    slots.gemm_batched(
        out,
        {&a, a_rs, a_cs, off.a.data()},
        {&b, b_rs, b_cs, off.b.data()},
        int64_t(off.a.size()),
        m,
        k,
        n,
        op);
    return;
  }
  // A device without the batched slot: each product through its gemm
  // slot, each output the CPU's one chain, or the CPU's split (Note
  // [Split-K]), which every product with k >= kSplitKMinK takes, composed
  // as Note [Split-K on a device] says.
  if (m > 0 && n > 0 && k >= kSplitKMinK) {
    for (size_t bi = 0; bi < off.a.size(); ++bi) {
      Tensor ob = off.a.size() == 1
          ? out
          : out.view({int64_t(off.a.size()), m * n}).narrow(0, int64_t(bi), 1);
      device_split_k(
          {&a, a.storage_offset() + off.a[bi], a_rs, a_cs},
          {&b, b.storage_offset() + off.b[bi], b_rs, b_cs},
          m,
          k,
          n,
          ob,
          op);
    }
    return;
  }
  for (size_t bi = 0; bi < off.a.size(); ++bi) {
    slots.gemm(
        {&out, out.storage_offset() + int64_t(bi) * m * n, n, 1},
        {&a, a.storage_offset() + off.a[bi], a_rs, a_cs},
        {&b, b.storage_offset() + off.b[bi], b_rs, b_cs},
        m,
        k,
        n,
        op);
  }
}

// Note [Storage dtypes]: a product of float16 or bfloat16 operands runs in
// float32 (the fixed chain of every float32 product) and rounds its result
// once, as PyTorch's CPU accumulates them in float32.
bool storage_pair(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.dtype() == b.dtype() &&
      is_floating(a.dtype()) && !has_kernels(a.dtype());
}

void check_float_pair(const Tensor& a, const Tensor& b, const char* op) {
  DITTO_CHECK(a.defined() && b.defined(), ValueError, op, "undefined tensor");
  DITTO_CHECK(
      is_floating(a.dtype()) && a.dtype() == b.dtype(),
      TypeError,
      op,
      "expected two float32 or two float64 tensors, got ",
      a.dtype(),
      " and ",
      b.dtype());
}

// a [m, k] @ b [k, n] for 2-d views (any strides).
Tensor mm_impl(const Tensor& a, const Tensor& b, const char* op) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  Tensor out = detail::new_tensor({m, n}, a.dtype(), a.device());
  BatchOffsets off{{0}, {0}};
  gemm_batched(
      a,
      a.stride(0),
      a.stride(1),
      b,
      b.stride(0),
      b.stride(1),
      off,
      m,
      k,
      n,
      out,
      op);
  return out;
}

} // namespace gemm_impl

using namespace gemm_impl;

Tensor mm(const Tensor& a, const Tensor& b) {
  if (a.defined() && a.impl()->is_sparse()) {
    return sparse::mm(a, b);
  }
  if (storage_pair(a, b)) {
    return mm(a.to(kFloat32), b.to(kFloat32)).to(a.dtype());
  }
  detail::OpScope op("mm", {a, b});
  check_float_pair(a, b, "mm");
  DITTO_CHECK(
      a.dim() == 2 && b.dim() == 2,
      ValueError,
      "mm",
      "expected 2-d tensors, got ",
      a.dim(),
      "-d and ",
      b.dim(),
      "-d");
  DITTO_CHECK(
      a.size(1) == b.size(0),
      ValueError,
      "mm",
      "a ",
      shape_str(a.sizes()),
      " and b ",
      shape_str(b.sizes()),
      " cannot be multiplied (",
      a.size(1),
      " != ",
      b.size(0),
      ")");
  return op.done(
      mm_impl(a, b, "mm"),
      [sa = op.save(a), sb = op.save(b)](const autograd::GradList& g) {
        return product_grads(
            sa.unpack(),
            sb.unpack(),
            g[0],
            [](const Tensor& x, const Tensor& y) { return mm(x, y); });
      });
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (a.defined() && a.impl()->is_sparse()) {
    return sparse_bmm(a, b);
  }
  if (storage_pair(a, b)) {
    return bmm(a.to(kFloat32), b.to(kFloat32)).to(a.dtype());
  }
  detail::OpScope op("bmm", {a, b});
  check_float_pair(a, b, "bmm");
  DITTO_CHECK(
      a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) &&
          a.size(2) == b.size(1),
      ValueError,
      "bmm",
      "expected [b, m, k] and [b, k, n], got ",
      shape_str(a.sizes()),
      " and ",
      shape_str(b.sizes()));
  const int64_t batches = a.size(0), m = a.size(1), k = a.size(2),
                n = b.size(2);
  Tensor out = detail::new_tensor({batches, m, n}, a.dtype(), a.device());
  BatchOffsets off;
  for (int64_t bi = 0; bi < batches; ++bi) {
    off.a.push_back(bi * a.stride(0));
    off.b.push_back(bi * b.stride(0));
  }
  gemm_batched(
      a,
      a.stride(1),
      a.stride(2),
      b,
      b.stride(1),
      b.stride(2),
      off,
      m,
      k,
      n,
      out,
      "bmm");
  return op.done(
      out, [sa = op.save(a), sb = op.save(b)](const autograd::GradList& g) {
        return autograd::GradList{
            bmm(g[0], sb.unpack().transpose(1, 2)),
            bmm(sa.unpack().transpose(1, 2), g[0])};
      });
}

namespace detail::cpu {

// The CPU's gemm_batched slot: row bands and column tiles of every batch on
// the threads (Note [Split-K] for a deep product).
void gemm_batched(
    const Tensor& out,
    const kernels::BatchedMatrices& am,
    const kernels::BatchedMatrices& bm,
    int64_t batches,
    int64_t m,
    int64_t k,
    int64_t n,
    const char* op) {
  using namespace gemm_impl;
  const Tensor& a = *am.t;
  const Tensor& b = *bm.t;
  const int64_t a_rs = am.rs, a_cs = am.cs, b_rs = bm.rs, b_cs = bm.cs;
  const auto& t = kernels::kernel_table();
  const bool f32 = a.dtype() == kFloat32;
  kernels::GemmTile tile = f32 ? t.gemm_f32 : t.gemm_f64;
  const size_t es = a.element_size();
  const kernels::Blocking blk = kernels::gemm_blocking(a.dtype());
  const int64_t kTileN = tile_cols(n, blk);
  const int64_t tm = (m + kTileM - 1) / kTileM, tn = (n + kTileN - 1) / kTileN;
  auto args = [&](int64_t bi) {
    kernels::GemmArgs g;
    g.kc = blk.kc;
    g.mc = blk.mc;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = static_cast<const char*>(a.raw_data()) + am.offsets[bi] * int64_t(es);
    g.a_rs = a_rs;
    g.a_cs = a_cs;
    g.b = static_cast<const char*>(b.raw_data()) + bm.offsets[bi] * int64_t(es);
    g.b_rs = b_rs;
    g.b_cs = b_cs;
    g.c = static_cast<char*>(out.raw_data()) + bi * m * n * int64_t(es);
    g.c_rs = n;
    g.c_cs = 1;
    return g;
  };
  // Row bands of equal height (a multiple of 6, the AVX2 register tile, and
  // half the AVX-512 one), not kTileM multiples with a short last band: the
  // pool gives each thread a contiguous run of tasks (Note [Chunks keep their
  // thread]), so unequal bands are unequal threads (2048^3 on two threads:
  // bands of 768, 768 and 512 rows left one thread 22% idle).
  const int64_t bands = row_bands(m, batches * tn);
  const int64_t rows =
      std::max<int64_t>(1, ((m + bands - 1) / bands + 5) / 6 * 6);
  const int64_t tr = (m + rows - 1) / rows;
  // Every tile of one product g, threads taking row bands and column tiles.
  auto all_tiles = [&](const kernels::GemmArgs& g) {
    parallel_for(0, tr * tn, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i0 = (r / tn) * rows, j0 = (r % tn) * kTileN;
        tile(g, i0, std::min(m, i0 + rows), j0, std::min(n, j0 + kTileN));
      }
    });
  };
  const int64_t tiles256 = tm * ((n + 255) / 256);
  if (m > 0 && n > 0 && k >= kSplitKMinK) {
    // See Note [Split-K]: every product this deep is the chunked chain,
    // whatever its output's size and batch, so a row's bits do not depend
    // on how many rows share the product (R8).
    const int64_t chunks = (k + kSplitKChunk - 1) / kSplitKChunk;
    // In deterministic mode the deterministic variant runs with whatever
    // workspace is configured (the default 8 MiB when none is): the
    // workspace only bounds how many partials are held at once, and the sum
    // is in chunk order whatever it holds. Unlike PyTorch up to 2.9 (and as
    // 2.10 on the GPU), no configuration is required.
    const int64_t bytes = backends::gemm::workspace_bytes();
    const bool deterministic = are_deterministic_algorithms_enabled();
    const int64_t mn = m * n;
    auto partial_args = [&](int64_t bi, int64_t c, char* into) {
      kernels::GemmArgs g = args(bi);
      const int64_t k0 = c * kSplitKChunk;
      g.k = std::min(kSplitKChunk, k - k0);
      g.a = static_cast<const char*>(g.a) + k0 * a_cs * int64_t(es);
      g.b = static_cast<const char*>(g.b) + k0 * b_rs * int64_t(es);
      g.c = into;
      return g;
    };
    dispatch_dtype(a.dtype(), op, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        for (int64_t bi = 0; bi < batches; ++bi) {
          T* o = static_cast<T*>(out.raw_data()) + bi * mn;
          if (tiles256 > kSplitKMaxTiles) {
            // A large output: one chunk at a time, its tiles in parallel,
            // added in chunk order (the deterministic variant's sum; the
            // fast one has nothing to gain here).
            std::vector<T> p(static_cast<size_t>(mn));
            for (int64_t c = 0; c < chunks; ++c) {
              all_tiles(partial_args(
                  bi, c, reinterpret_cast<char*>(c == 0 ? o : p.data())));
              if (c > 0) {
                parallel_for(
                    0, mn, kernels::kReduceGrain, [&](int64_t e0, int64_t e1) {
                      for (int64_t e = e0; e < e1; ++e) {
                        o[e] = T(o[e] + p[size_t(e)]);
                      }
                    });
              }
            }
          } else if (deterministic) {
            // Partials in the workspace, added in chunk order.
            const int64_t cap = std::max<int64_t>(
                1,
                std::min<int64_t>(chunks, bytes / (mn * int64_t(sizeof(T)))));
            std::vector<T> ws(size_t(cap * mn));
            for (int64_t c0 = 0; c0 < chunks; c0 += cap) {
              const int64_t here = std::min(cap, chunks - c0);
              parallel_chunks(here, [&](int64_t i) {
                kernels::GemmArgs g = partial_args(
                    bi, c0 + i, reinterpret_cast<char*>(ws.data() + i * mn));
                tile(g, 0, m, 0, n);
              });
              for (int64_t i = 0; i < here; ++i) {
                const T* p = ws.data() + i * mn;
                if (c0 + i == 0) {
                  std::copy(p, p + mn, o);
                } else {
                  for (int64_t e = 0; e < mn; ++e) {
                    o[e] = T(o[e] + p[e]);
                  }
                }
              }
            }
          } else {
            // Each thread adds its partial into the output as it finishes.
            std::fill(o, o + mn, T(0));
            std::mutex mu;
            parallel_chunks(chunks, [&](int64_t c) {
              std::vector<T> p(static_cast<size_t>(mn));
              tile(
                  partial_args(bi, c, reinterpret_cast<char*>(p.data())),
                  0,
                  m,
                  0,
                  n);
              std::lock_guard<std::mutex> lock(mu);
              for (int64_t e = 0; e < mn; ++e) {
                o[e] = T(o[e] + p[e]);
              }
            });
          }
        }
      }
    });
    return;
  }
  const int64_t tasks = batches * tr * tn;
  parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bi = task / (tr * tn), r = task % (tr * tn);
      const int64_t i0 = (r / tn) * rows, j0 = (r % tn) * kTileN;
      kernels::GemmArgs g = args(bi);
      tile(g, i0, std::min(m, i0 + rows), j0, std::min(n, j0 + kTileN));
    }
  });
}

} // namespace detail::cpu

} // namespace ditto
