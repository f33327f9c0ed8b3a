// The forward algorithms: direct, im2col + GEMM (implicit when it
// applies), Winograd F(2x2, 3x3).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/ops/detail/conv/algorithms.h"
#include "ditto/ops/detail/conv/implicit.h"
#include "ditto/ops/detail/conv/lowering.h"

namespace ditto::detail::conv {
namespace {

// ---- forward algorithms: out [n, o, oh, ow] (contiguous), x and w
// contiguous. Each runs sample-group tasks in parallel.

// Note [Direct and im2col agree]
// Both compute each output as one fma chain over (ci, ki, kj) in order,
// from 0, with zeros for taps in the padding: the same bits. Winograd
// transforms the tiles first and rounds differently.
template <typename T>
void fwd_direct(const Geom& g, const T* x, const T* w, T* out) {
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t ni = task / g.groups, gi = task % g.groups;
      const T* xs = x + (ni * g.c + gi * g.cg) * g.h * g.w;
      for (int64_t oc = 0; oc < g.og; ++oc) {
        const T* wo = w + (gi * g.og + oc) * g.kk();
        T* os = out + (ni * g.o + gi * g.og + oc) * g.ohw();
        for (int64_t y = 0; y < g.oh; ++y) {
          for (int64_t xo = 0; xo < g.ow; ++xo) {
            T acc = 0;
            for (int64_t ci = 0; ci < g.cg; ++ci) {
              for (int64_t ki = 0; ki < g.kh; ++ki) {
                const int64_t iy = y * g.sh - g.ph + ki * g.dh;
                for (int64_t kj = 0; kj < g.kw; ++kj) {
                  const int64_t ix = xo * g.sw - g.pw + kj * g.dw;
                  const T v = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w
                      ? xs[(ci * g.h + iy) * g.w + ix]
                      : T(0);
                  acc = std::fma(wo[(ci * g.kh + ki) * g.kw + kj], v, acc);
                }
              }
            }
            os[y * g.ow + xo] = acc;
          }
        }
      }
    }
  });
}
template <typename T>
void fwd_im2col(const Geom& g, const T* x, const T* w, T* out) {
  // (With few taps the explicit columns are cheap, and the padded rows'
  // junk columns and the copies cost more: 0.43 against 0.33 ms on the
  // first Fashion-MNIST layer.)
  if (implicit_applies(g) && g.kk() >= 64) {
    fwd_implicit(g, x, w, out);
    return;
  }
  // Samples side by side per GEMM: wider products, the weights packed once
  // per block, and the block's columns (about 256K values) in the cache.
  // (Short reductions, kk < 64, gain nothing: one sample per GEMM.)
  const int64_t per = g.kk() < 64
      ? 1
      : std::clamp<int64_t>(
            (int64_t(1) << 18) / std::max<int64_t>(g.kk() * g.ohw(), 1),
            1,
            std::max<int64_t>(1, g.n / 8));
  const int64_t blocks = (g.n + per - 1) / per;
  parallel_for(0, blocks * g.groups, 1, [&](int64_t b, int64_t e) {
    T* cols = thread_buffer<T>(size_t(g.kk() * g.ohw() * per));
    std::vector<T>& tmp = block_out_buffer<T>();
    for (int64_t task = b; task < e; ++task) {
      const int64_t blk = task / g.groups, gi = task % g.groups;
      const int64_t n0 = blk * per, nb = std::min(per, g.n - n0),
                    ld = nb * g.ohw();
      for (int64_t s = 0; s < nb; ++s) {
        im2col(
            g,
            x + ((n0 + s) * g.c + gi * g.cg) * g.h * g.w,
            cols + s * g.ohw(),
            ld);
      }
      if (nb == 1) {
        gemm<T>(
            {.m = g.og,
             .n = ld,
             .k = g.kk(),
             .a = w + gi * g.og * g.kk(),
             .a_rs = g.kk(),
             .a_cs = 1,
             .b = cols,
             .b_rs = ld,
             .b_cs = 1,
             .c = out + (n0 * g.o + gi * g.og) * g.ohw(),
             .c_rs = g.ohw(),
             .c_cs = 1});
        continue;
      }
      tmp.resize(std::max(tmp.size(), size_t(g.og * ld)));
      gemm<T>(
          {.m = g.og,
           .n = ld,
           .k = g.kk(),
           .a = w + gi * g.og * g.kk(),
           .a_rs = g.kk(),
           .a_cs = 1,
           .b = cols,
           .b_rs = ld,
           .b_cs = 1,
           .c = tmp.data(),
           .c_rs = ld,
           .c_cs = 1});
      for (int64_t s = 0; s < nb; ++s) {
        for (int64_t oc = 0; oc < g.og; ++oc) {
          std::copy_n(
              tmp.data() + oc * ld + s * g.ohw(),
              g.ohw(),
              out + ((n0 + s) * g.o + gi * g.og + oc) * g.ohw());
        }
      }
    }
  });
}

bool winograd_applies(const Geom& g) {
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
      g.dw == 1;
}

// V for one tile row of tw tiles: from ev[i][k], od[i][k] (rows i = 0..3
// of the tiles' input, even and odd columns, tw + 1 each) to
// v[(i 4 + j) plane + tx], (B^T d B)[i][j] of tile tx.
template <typename T>
void winograd_input_row(
    const T* __restrict ev,
    const T* __restrict od,
    int64_t tw,
    T* __restrict v,
    int64_t plane) {
  for (int64_t tx = 0; tx < tw; ++tx) {
    T d[4][4];
    for (int i = 0; i < 4; ++i) {
      d[i][0] = ev[i * (tw + 1) + tx];
      d[i][1] = od[i * (tw + 1) + tx];
      d[i][2] = ev[i * (tw + 1) + tx + 1];
      d[i][3] = od[i * (tw + 1) + tx + 1];
    }
    T bd[4][4]; // B^T d
    for (int j = 0; j < 4; ++j) {
      bd[0][j] = T(d[0][j] - d[2][j]);
      bd[1][j] = T(d[1][j] + d[2][j]);
      bd[2][j] = T(d[2][j] - d[1][j]);
      bd[3][j] = T(d[1][j] - d[3][j]);
    }
    for (int i = 0; i < 4; ++i) { // (B^T d) B
      v[(i * 4 + 0) * plane + tx] = T(bd[i][0] - bd[i][2]);
      v[(i * 4 + 1) * plane + tx] = T(bd[i][1] + bd[i][2]);
      v[(i * 4 + 2) * plane + tx] = T(bd[i][2] - bd[i][1]);
      v[(i * 4 + 3) * plane + tx] = T(bd[i][1] - bd[i][3]);
    }
  }
}

// Y for one tile row: from m[(i 4 + j) plane + tx] to row[r tw + tx], the
// output (r / 2, r % 2) of tile tx (A^T M A).
template <typename T>
void winograd_output_row(
    const T* __restrict m,
    int64_t plane,
    int64_t tw,
    T* __restrict row) {
  for (int64_t tx = 0; tx < tw; ++tx) {
    T mm[4][4];
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        mm[i][j] = m[(i * 4 + j) * plane + tx];
      }
    }
    T am[2][4]; // A^T M
    for (int j = 0; j < 4; ++j) {
      am[0][j] = T(T(mm[0][j] + mm[1][j]) + mm[2][j]);
      am[1][j] = T(T(mm[1][j] - mm[2][j]) - mm[3][j]);
    }
    for (int i = 0; i < 2; ++i) { // (A^T M) A
      row[(i * 2) * tw + tx] = T(T(am[i][0] + am[i][1]) + am[i][2]);
      row[(i * 2 + 1) * tw + tx] = T(T(am[i][1] - am[i][2]) - am[i][3]);
    }
  }
}

// Winograd F(2x2, 3x3) (Lavin and Gray): 4x4 input tiles at stride 2,
// U = G w G^T per (o, c), V = B^T d B per (c, tile), M = sum_c U V as 16
// GEMMs, Y = A^T M A. Every sum in a fixed order.
template <typename T>
void fwd_winograd(const Geom& g, const T* x, const T* w, T* out) {
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2, tiles = th * tw;
  // U [16][o][cg], all groups.
  std::vector<T> u(size_t(16 * g.o * g.cg));
  for (int64_t oc = 0; oc < g.o; ++oc) {
    for (int64_t ci = 0; ci < g.cg; ++ci) {
      const T* k = w + (oc * g.cg + ci) * 9;
      T tmp[4][3];
      for (int j = 0; j < 3; ++j) { // G k
        tmp[0][j] = k[j];
        tmp[1][j] = T((k[j] + k[3 + j] + k[6 + j]) * T(0.5));
        tmp[2][j] = T((k[j] - k[3 + j] + k[6 + j]) * T(0.5));
        tmp[3][j] = k[6 + j];
      }
      for (int i = 0; i < 4; ++i) { // (G k) G^T
        const T r[4] = {
            tmp[i][0],
            T((tmp[i][0] + tmp[i][1] + tmp[i][2]) * T(0.5)),
            T((tmp[i][0] - tmp[i][1] + tmp[i][2]) * T(0.5)),
            tmp[i][2]};
        for (int j = 0; j < 4; ++j) {
          u[size_t(((i * 4 + j) * g.o + oc) * g.cg + ci)] = r[j];
        }
      }
    }
  }
  // Samples side by side: GEMMs of about 512 columns (tiles of several
  // samples), from the shapes only; each output is still one chain over
  // the channels, so the blocking does not change bits. The transforms run
  // along a tile row at a time, on the even and odd columns of the padded
  // input rows, so that each step is one loop over the row's tiles.
  const int64_t nb = std::clamp<int64_t>(
      512 / std::max<int64_t>(tiles, 1), 1, std::max<int64_t>(g.n, 1));
  const int64_t blocks = (g.n + nb - 1) / nb;
  parallel_for(0, blocks * g.groups, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<T> v, m, ev, od, row;
    v.resize(std::max(v.size(), size_t(16 * g.cg * nb * tiles)));
    m.resize(std::max(m.size(), size_t(16 * g.og * nb * tiles)));
    ev.resize(std::max(ev.size(), size_t(4 * (tw + 1))));
    od.resize(std::max(od.size(), size_t(4 * (tw + 1))));
    row.resize(std::max(row.size(), size_t(4 * tw))); // a tile row's outputs
    for (int64_t task = b; task < e; ++task) {
      const int64_t blk = task / g.groups, gi = task % g.groups;
      const int64_t n0 = blk * nb, cnt = std::min(nb, g.n - n0);
      const int64_t cols = cnt * tiles;
      for (int64_t s = 0; s < cnt; ++s) {
        for (int64_t ci = 0; ci < g.cg; ++ci) {
          const T* xs = x + (((n0 + s) * g.c + gi * g.cg + ci) * g.h) * g.w;
          for (int64_t ty = 0; ty < th; ++ty) {
            // ev[i][k], od[i][k]: input row 2 ty - ph + i at columns
            // 2 k - pw and 2 k + 1 - pw (zeros outside).
            for (int i = 0; i < 4; ++i) {
              const int64_t iy = ty * 2 - g.ph + i;
              T* e = ev.data() + i * (tw + 1);
              T* o = od.data() + i * (tw + 1);
              std::fill(e, e + tw + 1, T(0));
              std::fill(o, o + tw + 1, T(0));
              if (iy < 0 || iy >= g.h) {
                continue;
              }
              const T* src = xs + iy * g.w;
              // Even padded columns 2 k hold input column 2 k - pw, odd
              // ones 2 k + 1 - pw, where inside the row.
              for (int64_t k = (g.pw + 1) / 2; k <= tw && 2 * k - g.pw < g.w;
                   ++k) {
                e[k] = src[2 * k - g.pw];
              }
              for (int64_t k = g.pw / 2; k <= tw && 2 * k + 1 - g.pw < g.w;
                   ++k) {
                o[k] = src[2 * k + 1 - g.pw];
              }
            }
            winograd_input_row(
                ev.data(),
                od.data(),
                tw,
                v.data() + ci * cols + s * tiles + ty * tw,
                g.cg * cols);
          }
        }
      }
      for (int64_t xi = 0; xi < 16; ++xi) {
        gemm<T>(
            {.m = g.og,
             .n = cols,
             .k = g.cg,
             .a = u.data() + (xi * g.o + gi * g.og) * g.cg,
             .a_rs = g.cg,
             .a_cs = 1,
             .b = v.data() + xi * g.cg * cols,
             .b_rs = cols,
             .b_cs = 1,
             .c = m.data() + xi * g.og * cols,
             .c_rs = cols,
             .c_cs = 1});
      }
      const int64_t plane = g.og * cols;
      for (int64_t s = 0; s < cnt; ++s) {
        for (int64_t oc = 0; oc < g.og; ++oc) {
          T* os = out + ((n0 + s) * g.o + gi * g.og + oc) * g.ohw();
          for (int64_t ty = 0; ty < th; ++ty) {
            winograd_output_row(
                m.data() + oc * cols + s * tiles + ty * tw,
                plane,
                tw,
                row.data());
            for (int i = 0; i < 2 && ty * 2 + i < g.oh; ++i) {
              T* __restrict orow = os + (ty * 2 + i) * g.ow;
              const T* __restrict r0 = row.data() + (i * 2) * tw;
              const T* __restrict r1 = r0 + tw;
              const int64_t pairs = g.ow / 2;
              for (int64_t tx = 0; tx < pairs; ++tx) {
                orow[2 * tx] = r0[tx];
                orow[2 * tx + 1] = r1[tx];
              }
              if (g.ow % 2 != 0) {
                orow[2 * pairs] = r0[pairs];
              }
            }
          }
        }
      }
    }
  });
}

} // namespace

const std::vector<Algo>& forward_algorithms() {
  static const std::vector<Algo> list = {
      {"im2col_gemm", true, always, fwd_im2col<float>, fwd_im2col<double>},
      {"direct", true, always, fwd_direct<float>, fwd_direct<double>},
      {"winograd_f2x2_3x3",
       true,
       winograd_applies,
       fwd_winograd<float>,
       fwd_winograd<double>},
  };
  return list;
}

} // namespace ditto::detail::conv
