#include "ditto/ops/conv.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "ditto/config.h"
#include "ditto/core/cpu_capability.h"
#include "ditto/determinism/context.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/op_util.h"
#include "ditto/ops/reduce.h"

namespace ditto {
namespace {

const bool kRegistered = [] {
  determinism::declare_nondeterministic(
      "conv2d_backward_weight",
      "the fast algorithm adds the weight-gradient partials of sample chunks "
      "into the gradient in whatever order threads finish them (also "
      "conv1d_backward_weight)",
      true);
  return true;
}();

// ---- geometry

struct Geom {
  int64_t n, c, h, w; // input
  int64_t o, kh, kw; // weight [o, c / groups, kh, kw]
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t oh, ow; // output
  int64_t cg, og; // channels per group
  Dtype dtype;
  int64_t kk() const {
    return cg * kh * kw;
  }
  int64_t ohw() const {
    return oh * ow;
  }
};

IntList pair_of(const IntList& v, const char* what, const char* op) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == 2,
      ValueError,
      op,
      what,
      " must have 1 or 2 values, got ",
      v.size());
  return v.size() == 1 ? IntList{v[0], v[0]} : v;
}

Geom make_geom(
    const Shape& input,
    const Shape& weight,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op) {
  DITTO_CHECK(
      input.size() == 4 && weight.size() == 4,
      ValueError,
      op,
      "expected a 4-d input [N, C, H, W] and a 4-d weight [O, C / groups, "
      "KH, KW], got ",
      shape_str(input),
      " and ",
      shape_str(weight));
  DITTO_CHECK(
      is_floating(dtype),
      TypeError,
      op,
      "expected float32 or float64, got ",
      dtype);
  IntList s = pair_of(stride, "stride", op),
          p = pair_of(padding, "padding", op),
          d = pair_of(dilation, "dilation", op);
  DITTO_CHECK(
      s[0] > 0 && s[1] > 0 && d[0] > 0 && d[1] > 0 && p[0] >= 0 && p[1] >= 0,
      ValueError,
      op,
      "stride and dilation must be positive and padding non-negative, got "
      "stride ",
      shape_str(s),
      ", padding ",
      shape_str(p),
      ", dilation ",
      shape_str(d));
  DITTO_CHECK(
      groups > 0, ValueError, op, "groups must be positive, got ", groups);
  Geom g{};
  g.n = input[0];
  g.c = input[1];
  g.h = input[2];
  g.w = input[3];
  g.o = weight[0];
  g.kh = weight[2];
  g.kw = weight[3];
  g.sh = s[0];
  g.sw = s[1];
  g.ph = p[0];
  g.pw = p[1];
  g.dh = d[0];
  g.dw = d[1];
  g.groups = groups;
  g.dtype = dtype;
  for (int64_t v : input) {
    DITTO_CHECK(
        v >= 0, ValueError, op, "negative input size ", shape_str(input));
  }
  DITTO_CHECK(
      g.o > 0 && g.kh > 0 && g.kw > 0 && weight[1] > 0,
      ValueError,
      op,
      "weight sizes must be positive, got ",
      shape_str(weight));
  DITTO_CHECK(
      g.c % groups == 0 && g.o % groups == 0,
      ValueError,
      op,
      "input channels (",
      g.c,
      ") and output channels (",
      g.o,
      ") must be divisible by groups (",
      groups,
      ")");
  g.cg = g.c / groups;
  g.og = g.o / groups;
  DITTO_CHECK(
      weight[1] == g.cg,
      ValueError,
      op,
      "weight ",
      shape_str(weight),
      " expects ",
      weight[1] * groups,
      " input channels with groups = ",
      groups,
      ", but the input has ",
      g.c);
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  DITTO_CHECK(
      g.h + 2 * g.ph >= eh && g.w + 2 * g.pw >= ew,
      ValueError,
      op,
      "the padded input (",
      g.h + 2 * g.ph,
      " x ",
      g.w + 2 * g.pw,
      ") is smaller than the dilated kernel (",
      eh,
      " x ",
      ew,
      ")");
  g.oh = (g.h + 2 * g.ph - eh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - ew) / g.sw + 1;
  return g;
}

// ---- GEMM on raw pointers (Note [GEMM accumulation order])

// Runs the whole product g describes, T being its element type.
template <typename T>
void gemm(const kernels::GemmArgs& g) {
  const auto& t = kernels::kernel_table();
  (std::is_same_v<T, float> ? t.gemm_f32 : t.gemm_f64)(g, 0, g.m, 0, g.n);
}

// The output columns xo whose tap kj lands inside an input row, [lo, hi),
// at input column xo * sw + off.
struct TapColumns {
  int64_t off, lo, hi;
};

TapColumns tap_columns(const Geom& g, int64_t kj) {
  TapColumns t;
  t.off = kj * g.dw - g.pw;
  t.lo = std::min(g.ow, t.off >= 0 ? 0 : (-t.off + g.sw - 1) / g.sw);
  t.hi = g.w - 1 - t.off < 0
      ? t.lo
      : std::max(t.lo, std::min(g.ow, (g.w - 1 - t.off) / g.sw + 1));
  return t;
}

// cols [cg * kh * kw, oh * ow] of sample x (one group's channels): row
// (ci, ki, kj), column (y, x); zeros where the window is in the padding.
// Rows are ld apart (ld = oh * ow, or more when samples sit side by side).
template <typename T>
void im2col(const Geom& g, const T* x, T* cols, int64_t ld) {
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* row = cols + ((ci * g.kh + ki) * g.kw + kj) * ld;
        const TapColumns t = tap_columns(g, kj);
        for (int64_t y = 0; y < g.oh; ++y) {
          T* __restrict dst = row + y * g.ow;
          const int64_t iy = y * g.sh - g.ph + ki * g.dh;
          if (iy < 0 || iy >= g.h) {
            for (int64_t xo = 0; xo < g.ow; ++xo) {
              dst[xo] = T(0);
            }
            continue;
          }
          const T* __restrict src = x + (ci * g.h + iy) * g.w + t.off;
          // Plain loops: rows are short, and library calls cost more than
          // the copy.
          for (int64_t xo = 0; xo < t.lo; ++xo) {
            dst[xo] = T(0);
          }
          if (g.sw == 1) {
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
}

// A per-thread buffer for a block's GEMM output.
template <typename T>
std::vector<T>& block_out_buffer() {
  thread_local std::vector<T> buf;
  return buf;
}

// A per-thread buffer of at least n values (not cleared).
template <typename T>
T* thread_buffer(size_t n) {
  thread_local std::vector<T> buf;
  if (buf.size() < n) {
    buf.resize(n);
  }
  return buf.data();
}

// The inverse: adds cols into sample x's channels, rows then columns in
// order.
template <typename T>
void col2im(const Geom& g, const T* cols, T* x) {
  // Rows are oh * ow apart.
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* row = cols + ((ci * g.kh + ki) * g.kw + kj) * g.ohw();
        const TapColumns t = tap_columns(g, kj);
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t iy = y * g.sh - g.ph + ki * g.dh;
          if (iy < 0 || iy >= g.h) {
            continue;
          }
          T* __restrict dst = x + (ci * g.h + iy) * g.w + t.off;
          const T* __restrict src = row + y * g.ow;
          if (g.sw == 1) {
            for (int64_t xo = t.lo; xo < t.hi; ++xo) {
              dst[xo] = T(dst[xo] + src[xo]);
            }
          } else {
            for (int64_t xo = t.lo; xo < t.hi; ++xo) {
              dst[xo * g.sw] = T(dst[xo * g.sw] + src[xo]);
            }
          }
        }
      }
    }
  }
}

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

// Note [Implicit im2col]
// With stride 1, the im2col matrix needs no copy: pad the image into a
// buffer with rows wp = w + 2 pw apart, and the row of tap (ci, ki, kj) is
// that buffer shifted by ((ci hp + ki dh) wp + kj dw) at the output
// position y wp + x. The GEMM reads B through those row offsets
// (GemmArgs::b_row_offsets) over oh * wp columns, of which the last
// wp - ow of each row are thrown away. Each kept output is the same fma
// chain over (ci, ki, kj), with the same zeros for the padding, as with
// explicit columns: the same bits, without writing and re-reading
// kk * oh * ow values per sample.
struct Padded {
  int64_t hp, wp, size; // rows, row length, values (with slack)
  std::vector<int64_t> taps; // row offset of tap (ci, ki, kj)
};

// The layout of `channels` planes of h x w padded by top rows and left
// columns on each side, and the row offsets of its kh x kw taps at dilation
// (dh, dw), in (channel, ki, kj) order.
Padded padded(
    int64_t channels,
    int64_t h,
    int64_t w,
    int64_t top,
    int64_t left,
    int64_t kh,
    int64_t kw,
    int64_t dh,
    int64_t dw,
    bool flipped = false) {
  Padded p;
  p.hp = h + 2 * top;
  p.wp = w + 2 * left;
  // The last tap's junk columns read up to (kw - 1) dw past the last plane.
  p.size = channels * p.hp * p.wp + (kw - 1) * dw;
  p.taps.reserve(size_t(channels * kh * kw));
  for (int64_t ci = 0; ci < channels; ++ci) {
    for (int64_t ki = 0; ki < kh; ++ki) {
      for (int64_t kj = 0; kj < kw; ++kj) {
        // Flipped: tap (ki, kj) reads the window's (kh-1-ki, kw-1-kj).
        const int64_t ri = flipped ? kh - 1 - ki : ki;
        const int64_t rj = flipped ? kw - 1 - kj : kj;
        p.taps.push_back((ci * p.hp + ri * dh) * p.wp + rj * dw);
      }
    }
  }
  return p;
}

// Copies `channels` planes of h x w at src into the padded buffer dst, at
// (top, left), zeros around.
template <typename T>
void pad_planes(
    const Padded& p,
    int64_t channels,
    int64_t h,
    int64_t w,
    int64_t top,
    int64_t left,
    const T* src,
    T* dst) {
  std::fill(dst, dst + p.size, T(0));
  for (int64_t ci = 0; ci < channels; ++ci) {
    for (int64_t y = 0; y < h; ++y) {
      std::copy_n(
          src + (ci * h + y) * w, w, dst + (ci * p.hp + y + top) * p.wp + left);
    }
  }
}

bool implicit_applies(const Geom& g) {
  return g.sh == 1 && g.sw == 1;
}

// The forward with weights a [o, kk] (rows og per group) by the implicit
// columns, the taps flipped or not (see padded).
template <typename T>
void fwd_implicit(
    const Geom& g,
    const T* x,
    const T* a,
    T* out,
    bool flipped = false) {
  const Padded p =
      padded(g.cg, g.h, g.w, g.ph, g.pw, g.kh, g.kw, g.dh, g.dw, flipped);
  const int64_t cols = g.oh * p.wp;
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    T* xp = thread_buffer<T>(size_t(p.size));
    std::vector<T>& tmp = block_out_buffer<T>();
    tmp.resize(std::max(tmp.size(), size_t(g.og * cols)));
    for (int64_t task = b; task < e; ++task) {
      const int64_t ni = task / g.groups, gi = task % g.groups;
      pad_planes(
          p,
          g.cg,
          g.h,
          g.w,
          g.ph,
          g.pw,
          x + (ni * g.c + gi * g.cg) * g.h * g.w,
          xp);
      gemm<T>(
          {.m = g.og,
           .n = cols,
           .k = g.kk(),
           .a = a + gi * g.og * g.kk(),
           .a_rs = g.kk(),
           .a_cs = 1,
           .b = xp,
           .b_cs = 1,
           .b_row_offsets = p.taps.data(),
           .c = tmp.data(),
           .c_rs = cols,
           .c_cs = 1});
      T* os = out + (ni * g.o + gi * g.og) * g.ohw();
      for (int64_t oc = 0; oc < g.og; ++oc) {
        for (int64_t y = 0; y < g.oh; ++y) {
          std::copy_n(
              tmp.data() + oc * cols + y * p.wp,
              g.ow,
              os + oc * g.ohw() + y * g.ow);
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

// ---- backward input: grad_in [n, c, h, w] from grad_out and w.

template <typename T>
void bwi_col2im(const Geom& g, const T* go, const T* w, T* gi_out) {
  std::fill(gi_out, gi_out + g.n * g.c * g.h * g.w, T(0));
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    T* cols = thread_buffer<T>(size_t(g.kk() * g.ohw()));
    for (int64_t task = b; task < e; ++task) {
      const int64_t ni = task / g.groups, gi = task % g.groups;
      // cols = w_g^T [kk, og] x grad_out [og, ohw]
      gemm<T>(
          {.m = g.kk(),
           .n = g.ohw(),
           .k = g.og,
           .a = w + gi * g.og * g.kk(),
           .a_rs = 1,
           .a_cs = g.kk(),
           .b = go + (ni * g.o + gi * g.og) * g.ohw(),
           .b_rs = g.ohw(),
           .b_cs = 1,
           .c = cols,
           .c_rs = g.ohw(),
           .c_cs = 1});
      col2im(g, cols, gi_out + (ni * g.c + gi * g.cg) * g.h * g.w);
    }
  });
}

// Each input element gathers its terms: one fma chain over (oc, ki, kj),
// with a zero for each tap that reaches no output (outside grad_out, or
// between strides), as the forward pads with zeros.
//
// With stride 1 and padding within the dilated kernel, this is the forward
// of grad_out padded by the kernel extent less the padding, with the
// flipped kernel over the output channels (Note [Implicit im2col]): a GEMM
// of the weights [cg, og * kh * kw] by the implicit columns of grad_out.
bool bwi_implicit_applies(const Geom& g) {
  return g.sh == 1 && g.sw == 1 && g.ph <= (g.kh - 1) * g.dh &&
      g.pw <= (g.kw - 1) * g.dw;
}

template <typename T>
void bwi_implicit(const Geom& g, const T* go, const T* w, T* gi_out) {
  Geom t = g; // grad_out -> grad_in, as a forward
  t.c = g.o;
  t.h = g.oh;
  t.w = g.ow;
  t.o = g.c;
  t.ph = (g.kh - 1) * g.dh - g.ph;
  t.pw = (g.kw - 1) * g.dw - g.pw;
  t.oh = g.h;
  t.ow = g.w;
  t.cg = g.og;
  t.og = g.cg;
  // Per group: a[ci][(oc, ki, kj)] = w[oc][ci][ki][kj].
  std::vector<T> a(size_t(g.c * t.kk()));
  for (int64_t gi = 0; gi < g.groups; ++gi) {
    for (int64_t ci = 0; ci < g.cg; ++ci) {
      for (int64_t oc = 0; oc < g.og; ++oc) {
        std::copy_n(
            w + ((gi * g.og + oc) * g.cg + ci) * g.kh * g.kw,
            g.kh * g.kw,
            a.data() + ((gi * g.cg + ci) * g.og + oc) * g.kh * g.kw);
      }
    }
  }
  fwd_implicit(t, go, a.data(), gi_out, true);
}

template <typename T>
void bwi_direct(const Geom& g, const T* go, const T* w, T* gi_out) {
  if (bwi_implicit_applies(g)) {
    bwi_implicit(g, go, w, gi_out);
    return;
  }
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t ni = task / g.groups, gi = task % g.groups;
      const T* gos = go + (ni * g.o + gi * g.og) * g.ohw();
      for (int64_t ci = 0; ci < g.cg; ++ci) {
        T* xs = gi_out + (ni * g.c + gi * g.cg + ci) * g.h * g.w;
        for (int64_t iy = 0; iy < g.h; ++iy) {
          for (int64_t ix = 0; ix < g.w; ++ix) {
            T acc = 0;
            for (int64_t oc = 0; oc < g.og; ++oc) {
              const T* wo = w + ((gi * g.og + oc) * g.cg + ci) * g.kh * g.kw;
              for (int64_t ki = 0; ki < g.kh; ++ki) {
                const int64_t ny = iy + g.ph - ki * g.dh;
                const bool row = ny >= 0 && ny % g.sh == 0 && ny / g.sh < g.oh;
                for (int64_t kj = 0; kj < g.kw; ++kj) {
                  const int64_t nx = ix + g.pw - kj * g.dw;
                  const T v =
                      row && nx >= 0 && nx % g.sw == 0 && nx / g.sw < g.ow
                      ? gos[oc * g.ohw() + (ny / g.sh) * g.ow + nx / g.sw]
                      : T(0);
                  acc = std::fma(wo[ki * g.kw + kj], v, acc);
                }
              }
            }
            xs[iy * g.w + ix] = acc;
          }
        }
      }
    }
  });
}

// ---- backward weight: grad_w [o, cg, kh, kw].

// Samples per chunk of the weight gradient (from the shapes only).
int64_t samples_per_chunk(const Geom& g) {
  return std::max<int64_t>(1, 4096 / std::max<int64_t>(g.ohw(), 1));
}

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

// ---- the algorithm tables

enum Dir { kForward, kBackwardInput, kBackwardWeight };
const char* kDirNames[] = {"forward", "backward_input", "backward_weight"};

// An algorithm: out = f(a, b) with a, b, out contiguous of the direction's
// layout (forward: x, w -> y; backward input: grad_out, w -> grad_in;
// backward weight: grad_out, x -> grad_w).
struct Algo {
  const char* name;
  bool deterministic;
  bool (*applies)(const Geom&);
  void (*f32)(const Geom&, const float*, const float*, float*);
  void (*f64)(const Geom&, const double*, const double*, double*);
};

bool always(const Geom&) {
  return true;
}

const std::vector<Algo>& algos(Dir d) {
  static const std::vector<Algo> fwd = {
      {"im2col_gemm", true, always, fwd_im2col<float>, fwd_im2col<double>},
      {"direct", true, always, fwd_direct<float>, fwd_direct<double>},
      {"winograd_f2x2_3x3",
       true,
       winograd_applies,
       fwd_winograd<float>,
       fwd_winograd<double>},
  };
  static const std::vector<Algo> bwi = {
      {"gemm_col2im", true, always, bwi_col2im<float>, bwi_col2im<double>},
      {"direct", true, always, bwi_direct<float>, bwi_direct<double>},
  };
  static const std::vector<Algo> bww = {
      {"gemm_chunked", true, always, bww_chunked<float>, bww_chunked<double>},
      {"fast", false, always, bww_fast<float>, bww_fast<double>},
  };
  return d == kForward ? fwd : d == kBackwardInput ? bwi : bww;
}

// ---- selection state

struct State {
  std::mutex mu;
  bool benchmark = false, deterministic = false, replay_only = false;
  int limit = 10;
  std::map<std::string, std::string> timed; // chosen in this process
  std::map<std::string, std::string> loaded; // from a tuning cache file
  std::string forced[3];
  bool warned_benchmark_determinism = false;
};

State& state() {
  static State s;
  return s;
}

thread_local backends::conv::Choice tls_last;

std::string key_of(Dir d, const Geom& g, bool det) {
  std::ostringstream k;
  k << kDirNames[d] << "|" << dtype_name(g.dtype) << "|in=" << g.n << "x" << g.c
    << "x" << g.h << "x" << g.w << "|w=" << g.o << "x" << g.cg << "x" << g.kh
    << "x" << g.kw << "|s=" << g.sh << "," << g.sw << "|p=" << g.ph << ","
    << g.pw << "|d=" << g.dh << "," << g.dw << "|g=" << g.groups
    << "|t=" << get_num_threads() << "|det=" << (det ? 1 : 0);
  return k.str();
}

// The heuristic: from the shapes and dtype only.
const Algo& heuristic(Dir d, const Geom& g, bool det) {
  (void)det;
  const auto& list = algos(d);
  if (d == kForward) {
    // Tiny reductions gain nothing from packing.
    return g.kk() <= 4 ? list[1] : list[0];
  }
  if (d == kBackwardInput && bwi_implicit_applies(g) && g.cg >= 8) {
    // The implicit GEMM has cg rows: with a register tile's worth, it beats
    // the column GEMM and its scatter-add (see docs/benchmarks.md).
    return list[1];
  }
  return list[0]; // col2im GEMM; chunked (deterministic) weight gradient
}

template <typename T>
void run_algo(const Algo& a, const Geom& g, const T* x, const T* y, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    a.f32(g, x, y, out);
  } else {
    a.f64(g, x, y, out);
  }
}

// Chooses and runs the algorithm for direction d; out is the contiguous
// result tensor (written by the run).
void dispatch(
    Dir d,
    const Geom& g,
    const Tensor& a,
    const Tensor& b,
    Tensor& out,
    const char* op) {
  State& s = state();
  const bool det =
      are_deterministic_algorithms_enabled() || backends::conv::deterministic();
  std::string forced;
  bool bench, replay;
  int limit;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    forced = s.forced[d];
    bench = s.benchmark;
    replay = s.replay_only;
    limit = s.limit;
  }
  const auto& list = algos(d);
  auto find = [&](const std::string& name) -> const Algo* {
    for (const Algo& a : list) {
      if (name == a.name) {
        return &a;
      }
    }
    return nullptr;
  };
  backends::conv::Choice choice;
  choice.direction = kDirNames[d];
  dispatch_dtype(g.dtype, op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pa = a.data_ptr<T>();
      const T* pb = b.data_ptr<T>();
      T* po = out.data_ptr<T>();
      if (!forced.empty()) {
        const Algo* al = find(forced);
        DITTO_CHECK(
            al->applies(g),
            ValueError,
            op,
            "the forced algorithm ",
            forced,
            " does not apply to these shapes");
        if (!al->deterministic) {
          alert_not_deterministic(detail::str_cat(op, " (", forced, ")"));
        }
        run_algo<T>(*al, g, pa, pb, po);
        choice.algorithm = al->name;
        choice.source = backends::conv::ChoiceSource::Heuristic;
        return;
      }
      if (!bench) {
        const Algo& al = heuristic(d, g, det);
        run_algo<T>(al, g, pa, pb, po);
        choice.algorithm = al.name;
        choice.source = backends::conv::ChoiceSource::Heuristic;
        return;
      }
      const std::string key = key_of(d, g, det);
      std::string known;
      backends::conv::ChoiceSource source =
          backends::conv::ChoiceSource::Cached;
      {
        std::lock_guard<std::mutex> lock(s.mu);
        if (det && !s.warned_benchmark_determinism) {
          s.warned_benchmark_determinism = true;
          determinism::warn(
              "conv (benchmark)",
              "backends::conv::benchmark is on with deterministic algorithms: "
              "timing may pick a different deterministic algorithm on the "
              "next run, which rounds differently. Save the choices with "
              "backends::conv::save_tuning_cache and replay them "
              "(load_tuning_cache + replay_only) for the same bits.");
        }
        if (replay && s.loaded.count(key)) {
          known = s.loaded[key];
          source = backends::conv::ChoiceSource::Replayed;
        } else if (s.timed.count(key)) {
          known = s.timed[key];
        }
      }
      const Algo* cached = known.empty() ? nullptr : find(known);
      if (cached && (!cached->applies(g) || (det && !cached->deterministic))) {
        cached = nullptr; // an edited or stale cache entry: time instead
      }
      if (const Algo* al = cached) {
        run_algo<T>(*al, g, pa, pb, po);
        choice.algorithm = al->name;
        choice.source = source;
        return;
      }
      // Time the candidates on this call's data; the fastest's output
      // stays in out.
      std::vector<T> best_out;
      double best = 1e300;
      const Algo* winner = nullptr;
      int timed = 0;
      std::vector<T> scratch(size_t(out.numel()));
      for (const Algo& al : list) {
        if ((det && !al.deterministic) || !al.applies(g) ||
            (limit > 0 && timed >= limit)) {
          continue;
        }
        ++timed;
        auto t0 = std::chrono::steady_clock::now();
        run_algo<T>(al, g, pa, pb, scratch.data());
        const double dt =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count();
        if (dt < best) {
          best = dt;
          winner = &al;
          best_out = scratch;
        }
      }
      std::copy(best_out.begin(), best_out.end(), po);
      {
        std::lock_guard<std::mutex> lock(s.mu);
        s.timed[key] = winner->name;
      }
      choice.algorithm = winner->name;
      choice.source = backends::conv::ChoiceSource::Timed;
    }
  });
  tls_last = choice;
}

Tensor contiguous_checked(const Tensor& t, const char* what, const char* op) {
  DITTO_CHECK(t.defined(), ValueError, op, "undefined ", what);
  return t.contiguous();
}

void add_bias(Tensor& out, const Tensor& bias, const Geom& g, const char* op) {
  DITTO_CHECK(
      bias.dtype() == g.dtype && bias.dim() == 1 && bias.size(0) == g.o,
      ValueError,
      op,
      "bias must be [",
      g.o,
      "] of dtype ",
      g.dtype,
      ", got ",
      shape_str(bias.sizes()),
      " ",
      bias.dtype());
  Tensor bc = bias.contiguous();
  dispatch_dtype(g.dtype, op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* o = out.data_ptr<T>();
      const T* bp = bc.data_ptr<T>();
      parallel_for(0, g.n * g.o, 16, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const T v = bp[p % g.o];
          for (int64_t k = 0; k < g.ohw(); ++k) {
            o[p * g.ohw() + k] = T(o[p * g.ohw() + k] + v);
          }
        }
      });
    }
  });
}

// grad_out must have the forward output's shape.
void check_grad_out(const Tensor& go, const Geom& g, const char* op) {
  const Shape want{g.n, g.o, g.oh, g.ow};
  DITTO_CHECK(
      go.sizes() == want,
      ValueError,
      op,
      "grad_out ",
      shape_str(go.sizes()),
      " is not the output shape ",
      shape_str(want));
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  DITTO_CHECK(
      a.dtype() == b.dtype(),
      TypeError,
      op,
      "expected tensors of one dtype, got ",
      a.dtype(),
      " and ",
      b.dtype());
}

} // namespace

Tensor conv2d(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups) {
  const char* op_name = "conv2d";
  detail::OpScope op(op_name, {input, weight, bias});
  Tensor x = contiguous_checked(input, "input", op_name);
  Tensor w = contiguous_checked(weight, "weight", op_name);
  check_same_dtype(x, w, op_name);
  Geom g = make_geom(
      x.sizes(),
      w.sizes(),
      stride,
      padding,
      dilation,
      groups,
      x.dtype(),
      op_name);
  Tensor out = detail::new_tensor({g.n, g.o, g.oh, g.ow}, g.dtype);
  if (out.numel() > 0) {
    dispatch(kForward, g, x, w, out, op_name);
  }
  if (bias.defined()) {
    add_bias(out, bias, g, op_name);
  }
  // The backward directions go through the same algorithm selection (and
  // tuning cache) as the forward, under the node's determinism policy.
  return op.done(
      out,
      [sx = op.save(x),
       sw = op.save(w),
       has_bias = bias.defined(),
       stride,
       padding,
       dilation,
       groups](const autograd::GradList& grads) {
        Tensor x = sx.unpack(), w = sw.unpack();
        Tensor go = grads[0];
        return autograd::GradList{
            conv2d_backward_input(
                go, w, x.sizes(), stride, padding, dilation, groups),
            conv2d_backward_weight(
                go, x, w.sizes(), stride, padding, dilation, groups),
            has_bias ? sum(go, {0, 2, 3}) : Tensor()};
      });
}

Tensor conv2d_backward_input(
    const Tensor& grad_out,
    const Tensor& weight,
    const Shape& input_sizes,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups) {
  const char* op_name = "conv2d_backward_input";
  detail::OpScope op(op_name, {grad_out, weight});
  Tensor go = contiguous_checked(grad_out, "grad_out", op_name);
  Tensor w = contiguous_checked(weight, "weight", op_name);
  check_same_dtype(go, w, op_name);
  Geom g = make_geom(
      input_sizes,
      w.sizes(),
      stride,
      padding,
      dilation,
      groups,
      go.dtype(),
      op_name);
  check_grad_out(go, g, op_name);
  Tensor out = detail::new_tensor(input_sizes, g.dtype);
  if (out.numel() > 0) {
    dispatch(kBackwardInput, g, go, w, out, op_name);
  }
  return op.done(out);
}

Tensor conv2d_backward_weight(
    const Tensor& grad_out,
    const Tensor& input,
    const Shape& weight_sizes,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups) {
  const char* op_name = "conv2d_backward_weight";
  detail::OpScope op(op_name, {grad_out, input});
  Tensor go = contiguous_checked(grad_out, "grad_out", op_name);
  Tensor x = contiguous_checked(input, "input", op_name);
  check_same_dtype(go, x, op_name);
  Geom g = make_geom(
      x.sizes(),
      weight_sizes,
      stride,
      padding,
      dilation,
      groups,
      x.dtype(),
      op_name);
  check_grad_out(go, g, op_name);
  Tensor out = detail::new_tensor(weight_sizes, g.dtype);
  dispatch(kBackwardWeight, g, go, x, out, op_name);
  return op.done(out);
}

namespace {

// conv1d as conv2d over [N, C, 1, L]: stride, padding and dilation gain a
// leading 1, 0, 1 for the height.
struct Lifted {
  IntList stride, padding, dilation;
};

Lifted lift(
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    const char* op) {
  for (const IntList* v : {&stride, &padding, &dilation}) {
    DITTO_CHECK(
        v->size() == 1,
        ValueError,
        op,
        "stride, padding and dilation must have 1 value each, got ",
        stride.size(),
        ", ",
        padding.size(),
        " and ",
        dilation.size());
  }
  return {{1, stride[0]}, {0, padding[0]}, {1, dilation[0]}};
}

Tensor as_2d(const Tensor& t, const char* what, const char* op) {
  DITTO_CHECK(
      t.defined() && t.dim() == 3,
      ValueError,
      op,
      "expected a 3-d ",
      what,
      ", got ",
      t.defined() ? shape_str(t.sizes()) : std::string("undefined"));
  return t.unsqueeze(2);
}

Shape sizes_2d(const Shape& s, const char* what, const char* op) {
  DITTO_CHECK(
      s.size() == 3,
      ValueError,
      op,
      "expected 3 ",
      what,
      " sizes, got ",
      shape_str(s));
  return {s[0], s[1], 1, s[2]};
}

} // namespace

Tensor conv1d(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups) {
  const char* op = "conv1d";
  // Composite: its own frame (the trace shows conv1d), the lifted conv2d
  // and the views record the gradient.
  detail::OpScope scope(op, {input, weight, bias}, detail::OpScope::kComposite);
  const Lifted l = lift(stride, padding, dilation, op);
  return scope.done(conv2d(
                        as_2d(input, "input", op),
                        as_2d(weight, "weight", op),
                        bias,
                        l.stride,
                        l.padding,
                        l.dilation,
                        groups)
                        .squeeze(2));
}

Tensor conv1d_backward_input(
    const Tensor& grad_out,
    const Tensor& weight,
    const Shape& input_sizes,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups) {
  const char* op = "conv1d_backward_input";
  detail::OpScope scope(op, {grad_out, weight});
  const Lifted l = lift(stride, padding, dilation, op);
  return scope.done(conv2d_backward_input(
                        as_2d(grad_out, "grad_out", op),
                        as_2d(weight, "weight", op),
                        sizes_2d(input_sizes, "input", op),
                        l.stride,
                        l.padding,
                        l.dilation,
                        groups)
                        .squeeze(2));
}

Tensor conv1d_backward_weight(
    const Tensor& grad_out,
    const Tensor& input,
    const Shape& weight_sizes,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    int64_t groups) {
  const char* op = "conv1d_backward_weight";
  detail::OpScope scope(op, {grad_out, input});
  const Lifted l = lift(stride, padding, dilation, op);
  return scope.done(conv2d_backward_weight(
                        as_2d(grad_out, "grad_out", op),
                        as_2d(input, "input", op),
                        sizes_2d(weight_sizes, "weight", op),
                        l.stride,
                        l.padding,
                        l.dilation,
                        groups)
                        .squeeze(2));
}

namespace backends::conv {

namespace {

// The flags live in State, read and written under its mutex.
template <typename V>
void set_flag(V State::*field, V value) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().*field = value;
}

template <typename V>
V get_flag(V State::*field) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().*field;
}

} // namespace

void benchmark(bool on) {
  set_flag(&State::benchmark, on);
}
bool benchmark() {
  return get_flag(&State::benchmark);
}
void deterministic(bool on) {
  set_flag(&State::deterministic, on);
}
bool deterministic() {
  return get_flag(&State::deterministic);
}
void benchmark_limit(int limit) {
  DITTO_CHECK(
      limit >= 0,
      ValueError,
      "backends::conv::benchmark_limit",
      "expected a limit >= 0, got ",
      limit);
  set_flag(&State::limit, limit);
}
int benchmark_limit() {
  return get_flag(&State::limit);
}
void replay_only(bool on) {
  set_flag(&State::replay_only, on);
}
bool replay_only() {
  return get_flag(&State::replay_only);
}

Choice last_choice() {
  return tls_last;
}

const char* choice_source_name(ChoiceSource s) {
  switch (s) {
    case ChoiceSource::Heuristic:
      return "heuristic";
    case ChoiceSource::Timed:
      return "timed";
    case ChoiceSource::Cached:
      return "cached";
    case ChoiceSource::Replayed:
      return "replayed";
  }
  return "?";
}

void force_algorithm(
    const std::string& direction,
    const std::string& algorithm) {
  const char* op = "backends::conv::force_algorithm";
  int d = -1;
  for (int k = 0; k < 3; ++k) {
    if (direction == kDirNames[k]) {
      d = k;
    }
  }
  DITTO_CHECK(
      d >= 0,
      ValueError,
      op,
      "unknown direction '",
      direction,
      "' (forward, backward_input, backward_weight)");
  bool known = algorithm.empty();
  std::string names;
  for (const Algo& a : algos(Dir(d))) {
    known = known || algorithm == a.name;
    names += std::string(names.empty() ? "" : ", ") + a.name;
  }
  DITTO_CHECK(
      known,
      ValueError,
      op,
      "unknown ",
      direction,
      " algorithm '",
      algorithm,
      "' (",
      names,
      ")");
  std::lock_guard<std::mutex> lock(state().mu);
  state().forced[d] = algorithm;
}

void clear_tuning_cache() {
  std::lock_guard<std::mutex> lock(state().mu);
  state().timed.clear();
  state().loaded.clear();
}

void save_tuning_cache(const std::string& path) {
  nlohmann::json j;
  j["format"] = "ditto.conv_tuning_cache";
  j["version"] = 1;
  j["cpu_capability"] = std::string(cpu_capability_name(get_cpu_capability()));
  j["threads"] = get_num_threads();
  {
    std::lock_guard<std::mutex> lock(state().mu);
    std::map<std::string, std::string> all = state().loaded;
    for (const auto& [k, v] : state().timed) {
      all[k] = v;
    }
    j["entries"] = all;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << j.dump(1) << "\n";
    DITTO_CHECK(
        f.good(),
        ValueError,
        "backends::conv::save_tuning_cache",
        "cannot write ",
        tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  DITTO_CHECK(
      !ec,
      ValueError,
      "backends::conv::save_tuning_cache",
      "cannot rename ",
      tmp,
      " to ",
      path,
      ": ",
      ec.message());
}

bool load_tuning_cache(const std::string& path) {
  auto reject = [&](const std::string& why) {
    determinism::warn(
        "conv tuning cache",
        detail::str_cat(
            "[backends::conv::load_tuning_cache] ",
            path,
            ": ",
            why,
            "; the cache is unchanged"));
    return false;
  };
  std::ifstream f(path);
  if (!f.good()) {
    return reject("cannot open the file");
  }
  std::map<std::string, std::string> entries;
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    if (j.value("format", "") != "ditto.conv_tuning_cache") {
      return reject("not a ditto conv tuning cache");
    }
    if (j.value("version", 0) != 1) {
      return reject(
          "unsupported version " + std::to_string(j.value("version", 0)));
    }
    const std::string cap = j.at("cpu_capability").get<std::string>();
    if (cap != cpu_capability_name(get_cpu_capability())) {
      return reject(
          "made for CPU capability " + cap + ", this process runs " +
          std::string(cpu_capability_name(get_cpu_capability())));
    }
    entries = j.at("entries").get<std::map<std::string, std::string>>();
    for (const auto& [k, v] : entries) {
      const std::string dir = k.substr(0, k.find('|'));
      int d = -1;
      for (int q = 0; q < 3; ++q) {
        if (dir == kDirNames[q]) {
          d = q;
        }
      }
      bool known = false;
      for (const Algo& a : d < 0 ? std::vector<Algo>{} : algos(Dir(d))) {
        known = known || v == a.name;
      }
      if (!known) {
        return reject("unknown algorithm '" + v + "' for key " + k);
      }
    }
  } catch (const std::exception& e) {
    return reject(std::string("corrupt: ") + e.what());
  }
  std::lock_guard<std::mutex> lock(state().mu);
  state().loaded = std::move(entries);
  return true;
}

} // namespace backends::conv

} // namespace ditto
