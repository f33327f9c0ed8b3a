// The input-gradient algorithms: GEMM + col2im, and direct (the implicit
// GEMM of the flipped kernel when it applies).

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
} // namespace

bool bwi_implicit_applies(const Geom& g) {
  return g.sh == 1 && g.sw == 1 && g.ph <= (g.kh - 1) * g.dh &&
      g.pw <= (g.kw - 1) * g.dw;
}

namespace {

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

} // namespace

const std::vector<Algo>& backward_input_algorithms() {
  static const std::vector<Algo> list = {
      {"gemm_col2im", true, always, bwi_col2im<float>, bwi_col2im<double>},
      {"direct", true, always, bwi_direct<float>, bwi_direct<double>},
  };
  return list;
}

} // namespace ditto::detail::conv
