// The separable resampling kernels of interpolation (InterpPlan in
// kernel_table.h), compiled once per CPU capability like cpu_kernels.cpp:
// their sums are chains of std::fma (Note [PyTorch's interpolation bits] in
// ditto/nn/functional/upsample.cpp), an instruction where the capability has
// FMA and an exact library call otherwise, with the same bits on every CPU.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "ditto/kernels/cpu/kernel_table.h"

namespace ditto::kernels::DITTO_KERNEL_NS {
namespace {

template <typename T>
struct Dim {
  int64_t k;
  const int64_t* idx;
  const T* w;
  const int64_t* count;
  bool chain;

  explicit Dim(const InterpDim& d)
      : k(d.k),
        idx(d.idx),
        w(static_cast<const T*>(d.w)),
        count(d.count),
        chain(d.chain) {}

  // The weighted sum of output index o's cells, read(cell) each.
  template <class Read>
  inline T sum(int64_t o, const Read& read) const {
    const int64_t b = o * k;
    const int64_t n = count[o];
    T s;
    int64_t j;
    if (n == 1 || chain) {
      s = read(idx[b]) * w[b];
      j = 1;
    } else {
      s = std::fma(read(idx[b]), w[b], read(idx[b + 1]) * w[b + 1]);
      j = 2;
    }
    for (; j < n; ++j) {
      s = std::fma(read(idx[b + j]), w[b + j], s);
    }
    return s;
  }
};

template <typename T>
void interp_forward(
    const InterpPlan& plan,
    const void* in_v,
    void* out_v,
    int64_t p0,
    int64_t p1) {
  const Dim<T> d0(plan.dim[0]), d1(plan.dim[1]), d2(plan.dim[2]);
  const int64_t in1 = plan.dim[1].in, in2 = plan.dim[2].in;
  const int64_t isize = plan.dim[0].in * in1 * in2;
  const int64_t o0 = plan.dim[0].out, o1 = plan.dim[1].out,
                o2 = plan.dim[2].out;
  const T* in = static_cast<const T*>(in_v);
  T* out = static_cast<T*>(out_v);
  for (int64_t p = p0; p < p1; ++p) {
    const T* src = in + p * isize;
    T* dst = out + p * o0 * o1 * o2;
    for (int64_t a = 0; a < o0; ++a) {
      for (int64_t b = 0; b < o1; ++b) {
        for (int64_t c = 0; c < o2; ++c) {
          *dst++ = d0.sum(a, [&](int64_t x0) {
            return d1.sum(b, [&](int64_t x1) {
              const T* row = src + (x0 * in1 + x1) * in2;
              return d2.sum(c, [row](int64_t x2) { return row[x2]; });
            });
          });
        }
      }
    }
  }
}

template <typename T, bool kAtomic>
inline void fma_into(T* cell, T a, T b) {
  if constexpr (kAtomic) {
    std::atomic_ref<T> r(*cell);
    T cur = r.load(std::memory_order_relaxed);
    while (!r.compare_exchange_weak(
        cur, std::fma(a, b, cur), std::memory_order_relaxed)) {
    }
  } else {
    *cell = std::fma(a, b, *cell);
  }
}

// Note [Linear backward in registers]
// The scatter below walks the output positions k in order and adds each
// one's taps into its input cells, so every cell receives its terms in the
// order (a, b, c, i, j, l): output position, then tap per dim. Along c the
// two-tap cells of one input row advance monotonically (x0 = floor of the
// source, x1 = x0 or x0 + 1), so consecutive outputs add into the same
// cells: a chain through memory (load, fma, store, and the next output's
// load of the same cell), bound by store-to-load latency. For an output
// row (a, b) whose tap rows (i, j) are distinct input rows, the terms of
// different (i, j) never meet in a cell, so the row can run as one pass
// over c with each tap row's two live cells held in registers (flushed
// when x0 moves on): every cell still gets its terms from c ascending,
// tap 0 before tap 1, with the same roundings (wab = w0 * w1, wab * w2,
// one fma), so the bits are the scatter's, and the tap rows' chains run
// side by side. Output rows whose tap rows coincide (an input of one row,
// the border of an edge-clamped axis) keep the scatter.

// One output row (a, b) of N distinct tap rows, over outputs c of go_row.
template <typename T, int N>
void scatter_row_in_registers(
    T* const* rows,
    const T* wab,
    const int64_t* xi,
    const T* xw,
    const T* go_row,
    int64_t o2,
    int64_t in2) {
  T lo[N] = {}, hi[N] = {};
  int64_t base = -2; // the cell in lo (hi holds base + 1 when it exists)
  auto flush = [&] {
    if (base >= 0) {
      for (int q = 0; q < N; ++q) {
        rows[q][base] = lo[q];
        if (base + 1 < in2) {
          rows[q][base + 1] = hi[q];
        }
      }
    }
  };
  for (int64_t c = 0; c < o2; ++c) {
    const int64_t x0 = xi[2 * c], x1 = xi[2 * c + 1];
    if (x0 != base) {
      if (x0 == base + 1) {
        for (int q = 0; q < N; ++q) {
          rows[q][base] = lo[q];
          lo[q] = hi[q];
          if (x0 + 1 < in2) {
            hi[q] = rows[q][x0 + 1];
          }
        }
      } else {
        flush();
        for (int q = 0; q < N; ++q) {
          lo[q] = rows[q][x0];
          if (x0 + 1 < in2) {
            hi[q] = rows[q][x0 + 1];
          }
        }
      }
      base = x0;
    }
    const T v = go_row[c], w0 = xw[2 * c], w1 = xw[2 * c + 1];
    if (x1 != x0) {
      for (int q = 0; q < N; ++q) {
        lo[q] = std::fma(wab[q] * w0, v, lo[q]);
        hi[q] = std::fma(wab[q] * w1, v, hi[q]);
      }
    } else {
      for (int q = 0; q < N; ++q) {
        lo[q] = std::fma(wab[q] * w0, v, lo[q]);
        lo[q] = std::fma(wab[q] * w1, v, lo[q]);
      }
    }
  }
  flush();
}

template <typename T, bool kAtomic>
void interp_backward_impl(
    const InterpPlan& plan,
    const T* go,
    T* gi,
    int64_t k0,
    int64_t k1) {
  const Dim<T> d0(plan.dim[0]), d1(plan.dim[1]), d2(plan.dim[2]);
  const int64_t in1 = plan.dim[1].in, in2 = plan.dim[2].in;
  const int64_t o1 = plan.dim[1].out, o2 = plan.dim[2].out;
  if (d1.k == 2 && d2.k == 2 && !d2.chain) {
    // Bilinear and trilinear: two cells per dim, in the same order with
    // the counts known (the generic loop below, unrolled).
    auto scatter = [&](int64_t s0, int64_t s1) {
      // The output position as (a, b, c), advanced without divisions.
      int64_t c = s0 % o2, b = (s0 / o2) % o1, a = s0 / (o1 * o2);
      for (int64_t k = s0; k < s1; ++k, ++c) {
        if (c == o2) {
          c = 0;
          if (++b == o1) {
            b = 0;
            ++a;
          }
        }
        const T v = go[k];
        const int64_t* xc = d2.idx + 2 * c;
        const T* wc = d2.w + 2 * c;
        for (int64_t i = 0; i < d0.count[a]; ++i) {
          const int64_t ia = a * d0.k + i;
          for (int64_t j = 0; j < 2; ++j) {
            const int64_t jb = b * 2 + j;
            const T wab = d0.w[ia] * d1.w[jb];
            T* row = gi + (d0.idx[ia] * in1 + d1.idx[jb]) * in2;
            fma_into<T, kAtomic>(row + xc[0], wab * wc[0], v);
            fma_into<T, kAtomic>(row + xc[1], wab * wc[1], v);
          }
        }
      }
    };
    // Whole output rows of distinct tap rows (the common case) in
    // registers (Note [Linear backward in registers]); the others, and
    // partial rows, by the scatter.
    if (!kAtomic && k0 % o2 == 0) {
      for (; k0 + o2 <= k1; k0 += o2) {
        const int64_t a = k0 / (o1 * o2), b = (k0 / o2) % o1;
        T* rows[4];
        T wab[4];
        int n = 0;
        bool distinct = d0.count[a] <= 2;
        for (int64_t i = 0; distinct && i < d0.count[a]; ++i) {
          const int64_t ia = a * d0.k + i;
          for (int64_t j = 0; j < 2; ++j) {
            const int64_t jb = b * 2 + j;
            rows[n] = gi + (d0.idx[ia] * in1 + d1.idx[jb]) * in2;
            wab[n] = d0.w[ia] * d1.w[jb];
            for (int q = 0; q < n; ++q) {
              distinct = distinct && rows[q] != rows[n];
            }
            ++n;
          }
        }
        if (!distinct) {
          scatter(k0, k0 + o2);
        } else if (n == 4) {
          scatter_row_in_registers<T, 4>(
              rows, wab, d2.idx, d2.w, go + k0, o2, in2);
        } else {
          scatter_row_in_registers<T, 2>(
              rows, wab, d2.idx, d2.w, go + k0, o2, in2);
        }
      }
    }
    scatter(k0, k1);
    return;
  }
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t c = k % o2, b = (k / o2) % o1, a = k / (o1 * o2);
    const T v = go[k];
    for (int64_t i = 0; i < d0.count[a]; ++i) {
      const int64_t ia = a * d0.k + i;
      for (int64_t j = 0; j < d1.count[b]; ++j) {
        const int64_t jb = b * d1.k + j;
        const T wab = d0.w[ia] * d1.w[jb];
        T* row = gi + (d0.idx[ia] * in1 + d1.idx[jb]) * in2;
        for (int64_t l = 0; l < d2.count[c]; ++l) {
          const int64_t lc = c * d2.k + l;
          fma_into<T, kAtomic>(row + d2.idx[lc], wab * d2.w[lc], v);
        }
      }
    }
  }
}

template <typename T>
void interp_backward(
    const InterpPlan& plan,
    const void* grad_out,
    void* grad_in,
    int64_t k0,
    int64_t k1,
    bool atomic) {
  const T* go = static_cast<const T*>(grad_out);
  T* gi = static_cast<T*>(grad_in);
  if (atomic) {
    interp_backward_impl<T, true>(plan, go, gi, k0, k1);
  } else {
    interp_backward_impl<T, false>(plan, go, gi, k0, k1);
  }
}

} // namespace

void fill_interp_table(KernelTable& t) {
  t.interp_forward[0] = &interp_forward<float>;
  t.interp_forward[1] = &interp_forward<double>;
  t.interp_backward[0] = &interp_backward<float>;
  t.interp_backward[1] = &interp_backward<double>;
}

} // namespace ditto::kernels::DITTO_KERNEL_NS
