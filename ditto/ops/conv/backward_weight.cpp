// The weight-gradient algorithms: chunked GEMM (deterministic) and fast
// (chunk partials added in completion order).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/ops/detail/conv/algorithms.h"
#include "ditto/ops/detail/conv/lowering.h"

namespace ditto::detail::conv {

// ---- backward weight: grad_w [o, cg, kh, kw].

// Samples per chunk of the weight gradient (from the shapes only): about
// 4096 output positions, the samples shared out evenly among the chunks. (A
// short last chunk left one thread idle: the pool gives each thread a run of
// consecutive chunks, Note [Chunks keep their thread], so 64 samples of
// 14 x 14 in chunks of 20, 20, 20 and 4 were 40 samples on one thread and 24
// on the other; now 4 x 16.)
int64_t samples_per_chunk(const Geom& g) {
  const int64_t most =
      std::max<int64_t>(1, 4096 / std::max<int64_t>(g.ohw(), 1));
  const int64_t chunks = std::max<int64_t>(1, (g.n + most - 1) / most);
  return std::max<int64_t>(1, (g.n + chunks - 1) / chunks);
}

namespace {

// Note [Shifted rows]
// With stride 1 down the rows, the weight gradient's B [q = y ow + x]
// [(ci, ki, kj)] is x at (y + ki dh - ph, x sw + kj dw - pw). Copy the image
// once per kj, shifted by kj dw - pw, cut to ow columns (stride sw) and
// padded by ph zero rows: [kw][cg][h + 2 ph][ow]. Column (ci, ki, kj) of B
// is then the run of oh * ow values from ((kj cg + ci) hp + ki dh) ow, read
// through GemmArgs::b_col_offsets: kw copies of the image instead of the
// kh kw of im2col, and the same values, so the same bits.
struct Shifted {
  int64_t hp, size;
  std::vector<int64_t> columns; // where column (ci, ki, kj) of B starts
};

bool shifted_applies(const Geom& g) {
  return g.sh == 1;
}

Shifted shifted_layout(const Geom& g) {
  Shifted s;
  s.hp = g.h + 2 * g.ph;
  s.size = g.kw * g.cg * s.hp * g.ow;
  s.columns.reserve(size_t(g.kk()));
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        s.columns.push_back(((kj * g.cg + ci) * s.hp + ki * g.dh) * g.ow);
      }
    }
  }
  return s;
}

// The kw shifted copies of sample x (one group's channels).
template <typename T>
void shift_rows(const Geom& g, const Shifted& s, const T* x, T* out) {
  for (int64_t kj = 0; kj < g.kw; ++kj) {
    const TapColumns t = tap_columns(g, kj);
    for (int64_t ci = 0; ci < g.cg; ++ci) {
      for (int64_t yy = 0; yy < s.hp; ++yy) {
        T* __restrict dst = out + ((kj * g.cg + ci) * s.hp + yy) * g.ow;
        const int64_t iy = yy - g.ph;
        if (iy < 0 || iy >= g.h) {
          for (int64_t xo = 0; xo < g.ow; ++xo) {
            dst[xo] = T(0);
          }
          continue;
        }
        const T* __restrict src = x + (ci * g.h + iy) * g.w + t.off;
        for (int64_t xo = 0; xo < t.lo; ++xo) {
          dst[xo] = T(0);
        }
        if (g.sw ==
            1) { // a plain loop: a memmove call per short row costs more
          for (int64_t xo = t.lo; xo < t.hi; ++xo) {
            dst[xo] = src[xo];
          }
        } else {
          for (int64_t xo = t.lo; xo < t.hi; ++xo) {
            dst[xo] = src[xo * g.sw];
          }
        }
        for (int64_t xo = t.hi; xo < g.ow; ++xo) {
          dst[xo] = T(0);
        }
      }
    }
  }
}

// One chunk's partial gradient: for each sample of the chunk in order and
// each group, grad_out [og, ohw] x cols^T [ohw, kk], continuing one chain.
template <typename T>
void bww_chunk(
    const Geom& g,
    const T* go,
    const T* x,
    int64_t n0,
    int64_t n1,
    T* part) {
  const bool shifted = g.kk() >= g.og && shifted_applies(g);
  const Shifted sh = shifted ? shifted_layout(g) : Shifted{};
  T* cols = thread_buffer<T>(size_t(shifted ? sh.size : g.kk() * g.ohw()));
  for (int64_t gi = 0; gi < g.groups; ++gi) {
    for (int64_t ni = n0; ni < n1; ++ni) {
      const T* xs = x + (ni * g.c + gi * g.cg) * g.h * g.w;
      const T* gos = go + (ni * g.o + gi * g.og) * g.ohw();
      T* pg = part + gi * g.og * g.kk();
      if (shifted) { // Note [Shifted rows]
        shift_rows(g, sh, xs, cols);
      } else {
        im2col(g, xs, cols, g.ohw());
      }
      if (g.kk() < g.og) {
        // Thin gradients (few taps, e.g. one input channel): the transposed
        // product cols [kk, ohw] x grad_out^T [ohw, og] fills the register
        // tile's columns with output channels instead of a handful of
        // taps. fma(a, b, c) = fma(b, a, c): the same chains, the same bits.
        gemm<T>(
            {.m = g.kk(),
             .n = g.og,
             .k = g.ohw(),
             .a = cols,
             .a_rs = g.ohw(),
             .a_cs = 1,
             .b = gos,
             .b_rs = 1,
             .b_cs = g.ohw(),
             .c = pg,
             .c_rs = 1,
             .c_cs = g.kk(),
             .accumulate = ni > n0});
      } else {
        gemm<T>(
            {.m = g.og,
             .n = g.kk(),
             .k = g.ohw(),
             .a = gos,
             .a_rs = g.ohw(),
             .a_cs = 1,
             .b = cols,
             .b_rs = 1,
             .b_cs = shifted ? 0 : g.ohw(),
             .b_col_offsets = shifted ? sh.columns.data() : nullptr,
             .c = pg,
             .c_rs = g.kk(),
             .c_cs = 1,
             .accumulate = ni > n0});
      }
    }
  }
}

// Deterministic: chunk partials kept, then added in chunk order.
template <typename T>
void bww_chunked(const Geom& g, const T* go, const T* x, T* gw) {
  const int64_t per = samples_per_chunk(g);
  const int64_t chunks = (g.n + per - 1) / per;
  const int64_t size = g.o * g.kk();
  if (chunks == 0) {
    std::fill(gw, gw + size, T(0));
    return;
  }
  std::vector<T> parts(size_t(chunks * size));
  parallel_chunks(chunks, [&](int64_t ch) {
    bww_chunk(
        g,
        go,
        x,
        ch * per,
        std::min(g.n, (ch + 1) * per),
        parts.data() + ch * size);
  });
  std::copy(parts.begin(), parts.begin() + size, gw);
  for (int64_t ch = 1; ch < chunks; ++ch) {
    const T* p = parts.data() + ch * size;
    for (int64_t e = 0; e < size; ++e) {
      gw[e] = T(gw[e] + p[e]);
    }
  }
}

// Fast (nondeterministic, registered): each chunk's partial is added into
// the gradient as soon as its thread finishes, in whatever order that is.
template <typename T>
void bww_fast(const Geom& g, const T* go, const T* x, T* gw) {
  const int64_t per = samples_per_chunk(g);
  const int64_t chunks = (g.n + per - 1) / per;
  const int64_t size = g.o * g.kk();
  std::fill(gw, gw + size, T(0));
  std::mutex mu;
  parallel_chunks(chunks, [&](int64_t ch) {
    std::vector<T> part(static_cast<size_t>(size));
    bww_chunk(g, go, x, ch * per, std::min(g.n, (ch + 1) * per), part.data());
    std::lock_guard<std::mutex> lock(mu);
    for (int64_t e = 0; e < size; ++e) {
      gw[e] = T(gw[e] + part[e]);
    }
  });
}

} // namespace

const std::vector<Algo>& backward_weight_algorithms() {
  static const std::vector<Algo> list = {
      {"gemm_chunked", true, always, bww_chunked<float>, bww_chunked<double>},
      {"fast", false, always, bww_fast<float>, bww_fast<double>},
  };
  return list;
}

} // namespace ditto::detail::conv
