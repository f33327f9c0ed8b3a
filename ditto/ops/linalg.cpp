#include "ditto/ops/linalg.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "ditto/core/env.h"
#include "ditto/core/parallel.h"
#include "ditto/determinism/context.h"
#include "ditto/device/vulkan/kernels.h"
#include "ditto/kernels/cpu/gemm_blocking.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/sparse.h"

namespace ditto {
namespace {

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

// ---- the workspace configuration

struct WorkspaceConfig {
  std::mutex mu;
  bool loaded = false;
  std::string config;
  int64_t bytes = int64_t(8) << 20;
};

WorkspaceConfig& workspace() {
  static WorkspaceConfig w;
  return w;
}

// Total bytes of a ":SIZE_KiB:COUNT..." string; ValueError if malformed.
int64_t parse_workspace(const std::string& config, const char* op) {
  // The fields: each a ':' then 1 to 9 digits (at most 2^40 bytes in all,
  // so no overflow on the way), in pairs.
  std::vector<std::string> fields;
  bool well_formed = !config.empty();
  for (size_t at = 0; well_formed && at < config.size();) {
    size_t end = at + 1;
    while (end < config.size() && config[end] >= '0' && config[end] <= '9') {
      ++end;
    }
    well_formed = config[at] == ':' && end > at + 1;
    fields.push_back(config.substr(at + 1, end - at - 1));
    at = end;
  }
  DITTO_CHECK(
      well_formed && fields.size() % 2 == 0,
      ValueError,
      op,
      "expected \":SIZE_KiB:COUNT[:SIZE_KiB:COUNT...]\" (such as \":4096:8\"), "
      "got \"",
      config,
      "\"");
  int64_t total = 0;
  for (size_t f = 0; f < fields.size(); f += 2) {
    const std::string& size = fields[f];
    const std::string& count = fields[f + 1];
    DITTO_CHECK(
        size.size() < 10 && count.size() < 10,
        ValueError,
        op,
        "workspace \"",
        config,
        "\" is too large");
    const int64_t kib = std::stoll(size), times = std::stoll(count);
    DITTO_CHECK(
        kib <= (int64_t(1) << 30) && times <= (int64_t(1) << 30) &&
            (times == 0 || kib <= ((int64_t(1) << 30) - total / 1024) / times),
        ValueError,
        op,
        "workspace \"",
        config,
        "\" is too large (at most 1 TiB)");
    total += kib * 1024 * times;
  }
  return total;
}

void load_workspace_locked(WorkspaceConfig& w) {
  if (w.loaded) {
    return;
  }
  // Marked loaded only once it parsed: a bad setting raises the same
  // ValueError for every product that needs it, until it is fixed (here or
  // with set_workspace_config), instead of silently becoming the default.
  if (auto env = detail::env_text("DITTO_GEMM_WORKSPACE_CONFIG")) {
    const int64_t bytes = parse_workspace(*env, "DITTO_GEMM_WORKSPACE_CONFIG");
    w.bytes = bytes;
    w.config = *env;
  }
  w.loaded = true;
}

// The workspace's size in bytes (ValueError for a malformed
// DITTO_GEMM_WORKSPACE_CONFIG, every time until it is fixed).
int64_t workspace_bytes_now() {
  WorkspaceConfig& w = workspace();
  std::lock_guard<std::mutex> lock(w.mu);
  load_workspace_locked(w);
  return w.bytes;
}

// ---- the products

// One matrix of a batch: element offsets of its first element from a's and
// b's data pointers.
struct BatchOffsets {
  std::vector<int64_t> a, b;
};

// out[bi] = A[bi] @ B[bi] for every batch bi: A's matrices are [m, k] with
// strides (a_rs, a_cs) from a.data + offsets.a[bi], likewise B; out is a
// contiguous [batches, m, n] tensor.
// Note [Split-K on a device]
// The CPU's chunks of k, each partial the device's product of that chunk
// (the CPU's chain over it), held in a workspace of the configured size on
// the device. Deterministic: the partials added in chunk order, the CPU's
// bits. Fast: added into the output with atomic additions in whatever order
// the device's invocations get there (vulkan::add_rows), the GPU's
// nondeterminism.
void device_split_k(
    vulkan::Matrix a,
    vulkan::Matrix b,
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
          chunks, workspace_bytes_now() / (mn * int64_t(sizeof(float)))));
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
      vulkan::gemm(
          {&ws, i * mn, n, 1},
          {a.t, a.offset + k0 * a.cs, a.rs, a.cs},
          {b.t, b.offset + k0 * b.rs, b.rs, b.cs},
          m,
          std::min(kSplitKChunk, k - k0),
          n,
          op);
    }
    if (!deterministic) {
      vulkan::add_rows(flat, ws, to_row_zero.data(), here, 1, mn, false, op);
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
  if (!out.is_cpu()) {
    // Each output the CPU's one chain, or the CPU's split (Note [Split-K]),
    // which every product with k >= kSplitKMinK takes.
    if (m > 0 && n > 0 && k >= kSplitKMinK) {
      for (size_t bi = 0; bi < off.a.size(); ++bi) {
        Tensor ob = off.a.size() == 1 ? out
                                      : out.view({int64_t(off.a.size()), m * n})
                                            .narrow(0, int64_t(bi), 1);
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
      vulkan::gemm(
          {&out, out.storage_offset() + int64_t(bi) * m * n, n, 1},
          {&a, a.storage_offset() + off.a[bi], a_rs, a_cs},
          {&b, b.storage_offset() + off.b[bi], b_rs, b_cs},
          m,
          k,
          n,
          op);
    }
    return;
  }
  const auto& t = kernels::kernel_table();
  const bool f32 = a.dtype() == kFloat32;
  kernels::GemmTile tile = f32 ? t.gemm_f32 : t.gemm_f64;
  const size_t es = a.element_size();
  const int64_t batches = int64_t(off.a.size());
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
    g.a = static_cast<const char*>(a.raw_data()) +
        off.a[size_t(bi)] * int64_t(es);
    g.a_rs = a_rs;
    g.a_cs = a_cs;
    g.b = static_cast<const char*>(b.raw_data()) +
        off.b[size_t(bi)] * int64_t(es);
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
    const int64_t bytes = workspace_bytes_now();
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

// Note [Gradients in their operand's layout]
// The gradient of a column-major operand (a transposed view, as linear's
// weight.t()) is computed as the transposed product, so that it has the
// operand's strides: t()'s backward then hands the weight a contiguous
// gradient, which the accumulation into weight.grad reads in order. A
// transposed 9216x4096 gradient added into a contiguous .grad took 400 ms
// of an AlexNet-sized training step at batch 8 (half the step). Each
// element is the same chain over k with the factors of each product
// swapped, so no bit changes (PyTorch's mm backward does the same).
bool column_major(const Tensor& t) {
  return t.dim() == 2 && t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 &&
      t.stride(1) == t.size(0);
}

// The gradients of a @ b (2-d) for the output gradient g, each in its
// operand's layout; mul is mm or matmul.
template <typename Mul>
autograd::GradList product_grads(
    const Tensor& a,
    const Tensor& b,
    const Tensor& g,
    Mul mul) {
  Tensor ga = column_major(a) ? mul(b, g.t()).t() : mul(g, b.t());
  Tensor gb = column_major(b) ? mul(g.t(), a).t() : mul(a.t(), g);
  return autograd::GradList{ga, gb};
}

} // namespace

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

namespace {

// matmul's operands agree on k (a's last dim, b's rows).
void check_inner_dims(
    const Tensor& a,
    const Tensor& b,
    int64_t ka,
    int64_t kb,
    const char* name) {
  DITTO_CHECK(
      ka == kb,
      ValueError,
      name,
      "a ",
      shape_str(a.sizes()),
      " and b ",
      shape_str(b.sizes()),
      " cannot be multiplied (",
      ka,
      " != ",
      kb,
      ")");
}

// Note [matmul folds a batch into rows]
// A batch of matrices times one matrix (or vector) is one product: a's
// leading dims fold into its rows, as PyTorch's matmul does (mm of
// a.reshape(-1, k)). Each output row has the bits it has in any product
// with the same k (the GEMM's chain per row does not depend on the number
// of rows, R8), and the backward is two matrix products: b's gradient
// sums over the batch inside one product's k rather than as one product
// per batch matrix followed by a sum (12x slower for nn.Linear on [B, T,
// K] inputs).
Tensor matmul_folded(const Tensor& a, const Tensor& b) {
  const char* name = "matmul";
  detail::OpScope op(name, {a, b}, detail::OpScope::kComposite);
  check_float_pair(a, b, name);
  const int64_t k = a.size(-1);
  check_inner_dims(a, b, k, b.size(0), name);
  Shape out_shape(a.sizes().begin(), a.sizes().end() - 1);
  const int64_t rows = checked_numel(out_shape, name);
  Tensor out = matmul(a.reshape({rows, k}), b);
  if (b.dim() == 2) {
    out_shape.push_back(b.size(1));
  }
  return op.done(out.reshape(out_shape));
}

} // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  const char* name = "matmul";
  if (storage_pair(a, b)) {
    return matmul(a.to(kFloat32), b.to(kFloat32)).to(a.dtype());
  }
  if (a.defined() && b.defined() && a.dim() >= 3 &&
      (b.dim() == 1 || b.dim() == 2)) {
    return matmul_folded(a, b);
  }
  detail::OpScope op(name, {a, b});
  check_float_pair(a, b, name);
  DITTO_CHECK(
      a.dim() >= 1 && b.dim() >= 1,
      ValueError,
      name,
      "both arguments need at least 1 dimension, got ",
      a.dim(),
      "-d and ",
      b.dim(),
      "-d");
  // 1-d operands become [1, k] and [k, 1], and those dims leave the result.
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  const int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  check_inner_dims(a, b, k, b2.size(-2), name);
  Shape ba(a2.sizes().begin(), a2.sizes().end() - 2);
  Shape bb(b2.sizes().begin(), b2.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, name);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {m, k});
  eb.insert(eb.end(), {k, n});
  Tensor xa = a2.expand(ea), xb = b2.expand(eb);
  // Element offsets of every batch matrix (broadcast dims have stride 0).
  const int64_t batches = checked_numel(batch, name);
  BatchOffsets off;
  std::vector<int64_t> pos(batch.size(), 0);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += pos[d] * xa.stride(int64_t(d));
      ob += pos[d] * xb.stride(int64_t(d));
    }
    off.a.push_back(oa);
    off.b.push_back(ob);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++pos[d] < batch[d]) {
        break;
      }
      pos[d] = 0;
    }
  }
  Shape out_shape = batch;
  out_shape.insert(out_shape.end(), {m, n});
  Tensor out = detail::new_tensor(out_shape, a.dtype(), a.device());
  gemm_batched(
      xa,
      xa.stride(-2),
      xa.stride(-1),
      xb,
      xb.stride(-2),
      xb.stride(-1),
      off,
      m,
      k,
      n,
      out,
      name);
  if (a.dim() == 1) {
    out = out.squeeze(int64_t(out.dim()) - 2);
  }
  if (b.dim() == 1) {
    out = out.squeeze(int64_t(out.dim()) - 1);
  }
  // Products at the broadcast batch shape, summed back to each operand's
  // (fixed order), then the 1-d operands' dims dropped again.
  return op.done(
      out, [sa = op.save(a), sb = op.save(b)](const autograd::GradList& grads) {
        Tensor a = sa.unpack(), b = sb.unpack();
        if (a.dim() == 2 && b.dim() == 2) {
          return product_grads(
              a, b, grads[0], [](const Tensor& x, const Tensor& y) {
                return matmul(x, y);
              });
        }
        Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
        Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
        Tensor g = grads[0];
        if (a.dim() == 1) {
          g = g.unsqueeze(b.dim() == 1 ? g.dim() : g.dim() - 1);
        }
        if (b.dim() == 1) {
          g = g.unsqueeze(g.dim());
        }
        Tensor ga = matmul(g, b2.transpose(-1, -2));
        Tensor gb = matmul(a2.transpose(-1, -2), g);
        return autograd::GradList{
            sum_to_size(ga, a2.sizes()).reshape(a.sizes()),
            sum_to_size(gb, b2.sizes()).reshape(b.sizes())};
      });
}

Tensor addmm(
    const Tensor& input,
    const Tensor& a,
    const Tensor& b,
    const Scalar& beta,
    const Scalar& alpha) {
  if (a.defined() && a.impl()->is_sparse()) {
    return sparse::addmm(input, a, b, beta, alpha);
  }
  const char* name = "addmm";
  if (storage_pair(a, b) && input.defined() && input.dtype() == a.dtype()) {
    return addmm(
               input.to(kFloat32), a.to(kFloat32), b.to(kFloat32), beta, alpha)
        .to(a.dtype());
  }
  detail::OpScope op(name, {input, a, b});
  check_float_pair(a, b, name);
  DITTO_CHECK(
      input.defined() && input.dtype() == a.dtype(),
      TypeError,
      name,
      "input must have the dtype of a and b (",
      a.dtype(),
      ")");
  DITTO_CHECK(
      a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
      ValueError,
      name,
      "a ",
      shape_str(a.sizes()),
      " and b ",
      shape_str(b.sizes()),
      " cannot be multiplied");
  const Shape out_shape{a.size(0), b.size(1)};
  DITTO_CHECK(
      broadcast_shapes(input.sizes(), out_shape, name) == out_shape,
      ValueError,
      name,
      "input ",
      shape_str(input.sizes()),
      " does not broadcast to the product's shape ",
      shape_str(out_shape));
  Tensor ab = mm_impl(a, b, name);
  const bool alpha_one = alpha.to<double>() == 1.0;
  const double beta_v = beta.to<double>();
  if (!alpha_one) {
    ab = mul(ab, alpha);
  }
  Tensor out =
      beta_v == 0.0 ? ab : add(ab, beta_v == 1.0 ? input : mul(input, beta));
  return op.done(
      out,
      [sa = op.save(a), sb = op.save(b), alpha, beta, beta_v](
          const autograd::GradList& g) {
        Tensor ga = mm(g[0], sb.unpack().t());
        Tensor gb = mm(sa.unpack().t(), g[0]);
        if (alpha.to<double>() != 1.0) {
          ga = mul(ga, alpha);
          gb = mul(gb, alpha);
        }
        Tensor gi = beta_v == 0.0 ? Tensor()
            : beta_v == 1.0       ? g[0]
                                  : mul(g[0], beta);
        return autograd::GradList{gi, ga, gb};
      });
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const char* name = "linear";
  if (storage_pair(x, weight) &&
      (!bias.defined() || bias.dtype() == x.dtype())) {
    // Note [Storage dtypes]: product and bias in float32, rounded once (as
    // PyTorch's bfloat16 linear).
    return linear(
               x.to(kFloat32),
               weight.to(kFloat32),
               bias.defined() ? bias.to(kFloat32) : bias)
        .to(x.dtype());
  }
  // Composite: matmul, t and add record the gradient.
  detail::OpScope op(name, {x, weight, bias}, detail::OpScope::kComposite);
  check_float_pair(x, weight, name);
  DITTO_CHECK(
      weight.dim() == 2,
      ValueError,
      name,
      "weight must be [out_features, in_features], got ",
      shape_str(weight.sizes()));
  Tensor y = matmul(x, weight.t());
  if (bias.defined()) {
    DITTO_CHECK(
        bias.dtype() == x.dtype() && bias.dim() == 1 &&
            bias.size(0) == weight.size(0),
        ValueError,
        name,
        "bias must be [",
        weight.size(0),
        "] of dtype ",
        x.dtype());
    y = add(y, bias);
  }
  return op.done(y);
}

namespace backends::gemm {

void set_workspace_config(const std::string& config) {
  const int64_t bytes =
      parse_workspace(config, "backends::gemm::set_workspace_config");
  WorkspaceConfig& w = workspace();
  std::lock_guard<std::mutex> lock(w.mu);
  w.loaded = true;
  w.config = config;
  w.bytes = bytes;
}

std::string workspace_config() {
  WorkspaceConfig& w = workspace();
  std::lock_guard<std::mutex> lock(w.mu);
  load_workspace_locked(w);
  return w.config;
}

int64_t workspace_bytes() {
  return workspace_bytes_now();
}

} // namespace backends::gemm

} // namespace ditto

// backends::gemm: the checks of the public calls over the kernels blocking
// (ditto/kernels/cpu/gemm_blocking.cpp).
namespace ditto::backends::gemm {
namespace {

Blocking to_public(const kernels::Blocking& b) {
  return {b.mr, b.nr, b.kc, b.mc, b.nc};
}

} // namespace

CpuCaches cpu_caches() {
  const kernels::CpuCaches& c = kernels::detected_caches();
  return {c.l1d, c.l2, c.l3, c.source};
}

Blocking blocking(Dtype dtype) {
  DITTO_CHECK(
      dtype == kFloat32 || dtype == kFloat64,
      TypeError,
      "backends::gemm::blocking",
      "expected float32 or float64, got ",
      dtype);
  return to_public(kernels::gemm_blocking(dtype));
}

Blocking derive_blocking(
    const CpuCaches& caches,
    int64_t mr,
    int64_t nr,
    Dtype dtype) {
  const char* op = "backends::gemm::derive_blocking";
  DITTO_CHECK(
      dtype == kFloat32 || dtype == kFloat64,
      TypeError,
      op,
      "expected float32 or float64, got ",
      dtype);
  DITTO_CHECK(
      mr >= 1 && mr <= 64 && nr >= 1 && nr <= 256,
      ValueError,
      op,
      "register tile ",
      mr,
      " x ",
      nr,
      " is outside 1..64 x 1..256");
  DITTO_CHECK(
      caches.l1d >= 1024 && caches.l2 >= 1024 && caches.l3 >= 0 &&
          caches.l1d <= kernels::kMaxCache && caches.l2 <= kernels::kMaxCache &&
          caches.l3 <= kernels::kMaxCache,
      ValueError,
      op,
      "cache sizes must be from 1 KiB to 1 TiB (L3 may be 0), got L1d ",
      caches.l1d,
      ", L2 ",
      caches.l2,
      ", L3 ",
      caches.l3);
  const kernels::CpuCaches c{caches.l1d, caches.l2, caches.l3, caches.source};
  return to_public(
      kernels::derive_blocking(c, mr, nr, dtype == kFloat64 ? 8 : 4));
}

void set_blocking(int64_t kc, int64_t mc, int64_t nc) {
  const char* op = "backends::gemm::set_blocking";
  kernels::check_block(op, "kc", kc);
  kernels::check_block(op, "mc", mc);
  kernels::check_block(op, "nc", nc);
  kernels::force_blocking(kc, mc, nc);
}

} // namespace ditto::backends::gemm
