#pragma once

// Internal to the convolutions: the implicit GEMM (stride 1, no im2col
// copy), used by the forward and, with the kernel flipped, by the input
// gradient. Not installed.

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/ops/detail/conv/lowering.h"

namespace ditto::detail::conv {

// Note [Implicit im2col]
// With stride 1, the im2col matrix needs no copy: pad the image into a
// buffer with rows wp = w + pw apart, and the row of tap (ci, ki, kj) is
// that buffer shifted by ((ci hp + ki dh) wp + kj dw) at the output
// position y wp + x. The GEMM reads B through those row offsets
// (GemmArgs::b_row_offsets) over oh * wp columns, of which the last
// wp - ow of each row are thrown away. Each kept output is the same fma
// chain over (ci, ki, kj), with the same zeros for the padding, as with
// explicit columns: the same bits, without writing and re-reading
// kk * oh * ow values per sample.
// The pw zero columns between two rows serve as the right padding of one
// and the left padding of the next (a window reaches at most pw columns
// past either edge), so each output row costs wp - ow = (kw - 1) dw - pw
// thrown-away columns (none when the padding is wider than the kernel
// reaches; rows are then ow wide), not 2 pw more: for a 3 x 3 kernel on
// 14 x 14, 14 x 15 columns instead of 14 x 16 (216 computed, 13 slivers of
// 16 and a half one, instead of 224).
struct Padded {
  int64_t hp, wp, size; // rows, row length, values (with slack)
  std::vector<int64_t> taps; // row offset of tap (ci, ki, kj)
};

// The layout of `channels` planes of h x w padded by top rows and left
// columns on each side, and the row offsets of its kh x kw taps at dilation
// (dh, dw), in (channel, ki, kj) order.
inline Padded padded(
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
  // One run of zeros between rows (Note [Implicit im2col]), and at least
  // the output row's width ow = w + 2 left - (kw - 1) dw.
  p.wp = w + std::max(left, 2 * left - (kw - 1) * dw);
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

inline bool implicit_applies(const Geom& g) {
  return g.sh == 1 && g.sw == 1;
}

// Runs f(xp, ni, gi) for every (sample ni, group gi) in parallel, with xp
// the thread's buffer holding that sample's group of channels padded as p.
template <typename T, typename F>
void for_each_padded(const Geom& g, const Padded& p, const T* x, F f) {
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    T* xp = thread_buffer<T>(size_t(p.size));
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
      f(xp, ni, gi);
    }
  });
}

// Whether the direct tiles (Note [Direct convolution tiles]) pay: a full
// block of output channels (AVX2, 64 samples of 32 x 14 x 14 to 8 channels:
// 1.26 ms with half a block against 0.99 by the implicit GEMM), and
// positions to fill the tiles.
inline bool direct_applies(const Geom& g, int64_t oc_block) {
  return g.og >= oc_block && g.ohw() >= 16;
}

// The forward by direct tiles (Note [Direct convolution tiles]): the
// weights a [o, kk] packed in blocks of output channels once, then a padded
// image at a time.
inline void fwd_direct(
    const Geom& g,
    const Padded& p,
    const float* x,
    const float* a,
    float* out,
    const kernels::KernelTable& t) {
  const int64_t kk = g.kk(), ob = t.conv_oc_block;
  const int64_t blocks = (g.og + ob - 1) / ob;
  std::vector<float> w(size_t(g.groups * blocks * kk * ob), 0.0f);
  for (int64_t gi = 0; gi < g.groups; ++gi) {
    for (int64_t o = 0; o < g.og; ++o) {
      const float* src = a + (gi * g.og + o) * kk;
      float* dst = w.data() + ((gi * blocks + o / ob) * kk) * ob + o % ob;
      for (int64_t q = 0; q < kk; ++q) {
        dst[q * ob] = src[q];
      }
    }
  }
  for_each_padded(g, p, x, [&](const float* xp, int64_t ni, int64_t gi) {
    t.conv_direct_f32(
        {.k = kk,
         .taps = p.taps.data(),
         .x = xp,
         .oh = g.oh,
         .ow = g.ow,
         .wp = p.wp,
         .w = w.data() + gi * blocks * kk * ob,
         .oc = g.og,
         .out = out + (ni * g.o + gi * g.og) * g.ohw()});
  });
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
  if constexpr (std::is_same_v<T, float>) {
    const auto& t = kernels::kernel_table();
    if (t.conv_direct_f32 && direct_applies(g, t.conv_oc_block)) {
      fwd_direct(g, p, x, a, out, t);
      return;
    }
  }
  const int64_t cols = g.oh * p.wp;
  for_each_padded(g, p, x, [&](const T* xp, int64_t ni, int64_t gi) {
    std::vector<T>& tmp = block_out_buffer<T>();
    tmp.resize(std::max(tmp.size(), size_t(g.og * cols)));
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
  });
}

} // namespace ditto::detail::conv
