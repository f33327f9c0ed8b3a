#pragma once

// Internal to the convolutions: the GEMM on raw pointers and the lowering
// of windows to columns (im2col) and back (col2im), shared by the
// algorithms of every direction. Not installed.

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ditto/kernels/cpu/gemm_blocking.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/conv/geometry.h"

namespace ditto::detail::conv {

// ---- GEMM on raw pointers (Note [GEMM accumulation order])

// Runs the whole product g describes, T being its element type.
template <typename T>
void gemm(kernels::GemmArgs g) {
  const auto& t = kernels::kernel_table();
  const kernels::Blocking blk =
      kernels::gemm_blocking(std::is_same_v<T, float> ? kFloat32 : kFloat64);
  g.kc = blk.kc;
  g.mc = blk.mc;
  (std::is_same_v<T, float> ? t.gemm_f32 : t.gemm_f64)(g, 0, g.m, 0, g.n);
}

// The output columns xo whose tap kj lands inside an input row, [lo, hi),
// at input column xo * sw + off.
struct TapColumns {
  int64_t off, lo, hi;
};

inline TapColumns tap_columns(const Geom& g, int64_t kj) {
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

} // namespace ditto::detail::conv
