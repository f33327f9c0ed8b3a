#pragma once

// The pooling engine's pieces that pooling.cpp (max, average, adaptive) and
// pooling_fractional.cpp (fractional max, max unpooling) share: a pooled
// tensor as planes of (D, H, W) cells, the windows over them, the max scan
// and the max backward. Internal.

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::nn::functional::pool {

// Sizes or arguments of the pooled dims as (D, H, W).
using Dims = std::array<int64_t, 3>;

// The planes of one pooling call: x as (planes, D, H, W) contiguous.
struct Planes {
  int n = 0; // pooled dims
  int64_t planes = 0;
  Dims in{1, 1, 1};
};

// One window per output cell along one dim: cells start, start + step, ...
// below end, and (average pooling) the window's length clipped to the
// padded input.
struct Win {
  int64_t start = 0, end = 1, step = 1, pad_len = 1;
};
using Windows = std::array<std::vector<Win>, 3>;

// The cells of a window in plane order, each as its flat index.
template <class F>
inline void for_window(
    const Dims& in,
    const Win& a,
    const Win& b,
    const Win& c,
    const F& f) {
  for (int64_t x0 = a.start; x0 < a.end; x0 += a.step) {
    for (int64_t x1 = b.start; x1 < b.end; x1 += b.step) {
      const int64_t row = (x0 * in[1] + x1) * in[2];
      for (int64_t x2 = c.start; x2 < c.end; x2 += c.step) {
        f(row + x2);
      }
    }
  }
}

// The output cells of one plane, in order: f(k, window a, b, c).
template <class F>
inline void for_outputs(const Windows& w, int64_t k0, int64_t k1, const F& f) {
  const int64_t o1 = int64_t(w[1].size()), o2 = int64_t(w[2].size());
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t i2 = k % o2, i1 = (k / o2) % o1, i0 = k / (o1 * o2);
    f(k, w[0][size_t(i0)], w[1][size_t(i1)], w[2][size_t(i2)]);
  }
}

// The max of each window of one plane (of in cells) and its flat index:
// the first of equal maxima, a NaN wins (PyTorch's rule).
template <typename T>
void max_plane(
    const T* plane,
    const Dims& in,
    const Windows& w,
    int64_t osize,
    T* o,
    int64_t* oi) {
  for_outputs(
      w, 0, osize, [&](int64_t k, const Win& a, const Win& b, const Win& c) {
        int64_t best_i = (a.start * in[1] + b.start) * in[2] + c.start;
        T best = -std::numeric_limits<T>::infinity();
        for_window(in, a, b, c, [&](int64_t i) {
          const T v = plane[i];
          if (v > best || std::isnan(v)) {
            best = v;
            best_i = i;
          }
        });
        o[k] = best;
        oi[k] = best_i;
      });
}

// d's element count; ValueError naming op on overflow.
int64_t volume(const Dims& d, const char* op);
// v (one int for every dim, or one per dim) as Dims, the dims an n-d op
// lacks set to fill. ValueError naming op and what otherwise.
Dims dims_arg(
    const IntList& v,
    int n,
    int64_t fill,
    const char* op,
    const char* what);
// Checks x for an n-d pooling: floating, (N, C, spatial...) or (C,
// spatial...) with every dim but the batch non-empty.
Planes pool_planes(const Tensor& x, int n, const char* op);
// x's sizes with the last n dims replaced by out's.
Shape pooled_sizes(const Shape& x, int n, const Dims& out);
// PyTorch's adaptive windows of in cells for out outputs.
std::vector<Win> adaptive_windows(int64_t in, int64_t out);
// Planes per parallel chunk: about 16K window reads each.
int64_t plane_grain(int64_t work_per_plane);
// Every index of ix (contiguous int64) in [0, size): otherwise IndexError
// naming op and the first bad index in index order.
void check_plane_indices(const Tensor& ix, int64_t size, const char* op);
// The gradient of a max pooling over n dims: grad_out added into zeros of
// input_sizes at indices, under op's name.
Tensor max_backward(
    const char* op,
    int n,
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes);
// The public backward that max pooling over n dims records.
const char* max_backward_name(int n);

// The fixed windows of a max or average pooling call (kernel_size, stride,
// padding, dilation as the op takes them), checked as PyTorch checks them.
struct Fixed {
  Dims k, s, p, d, out;
};

// Checks a max or average pooling call's kernel_size, stride, padding and
// dilation as PyTorch does, and computes its output size.
Fixed fixed_geometry(
    const Planes& g,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode,
    const char* op);
// The output cells along each dim.
Dims out_dims(const Windows& w);
// Max pooling's windows (dilated, the cells in the padding skipped) and
// average pooling's (each with its length clipped to the padded input).
std::vector<Win> max_windows(
    int64_t in,
    int64_t out,
    int64_t k,
    int64_t s,
    int64_t p,
    int64_t d);
std::vector<Win> avg_windows(
    int64_t in,
    int64_t out,
    int64_t k,
    int64_t s,
    int64_t p);
// The cells a window reads (the first window's: all are alike or smaller,
// for sizing chunks).
int64_t window_cells(const Windows& w);

} // namespace ditto::nn::functional::pool
