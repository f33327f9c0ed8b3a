#pragma once

// What conv3d.cpp (the geometry, the forward and the input gradient) and
// conv3d_weight.cpp (the weight gradient) share: the geometry, the column
// copy and the dtype dispatch (Note [conv3d's one chain] in conv3d.cpp).
// Internal.

#include <algorithm>
#include <cstdint>

#include "ditto/core/parallel.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/detail/conv/lowering.h"

namespace ditto::detail::conv3d {

struct Geom3 {
  int64_t n, c, o, groups, cg, og;
  int64_t in[3]; // d, h, w
  int64_t k[3]; // kd, kh, kw
  int64_t s[3], p[3], dl[3];
  int64_t out[3]; // od, oh, ow
  Dtype dtype;
  int64_t taps() const {
    return k[0] * k[1] * k[2];
  }
  int64_t kk() const {
    return cg * taps();
  }
  int64_t ivol() const {
    return in[0] * in[1] * in[2];
  }
  int64_t oplane() const {
    return out[1] * out[2];
  }
  int64_t ovol() const {
    return out[0] * oplane();
  }
  bool unit_stride() const {
    return s[0] == 1 && s[1] == 1 && s[2] == 1;
  }
};

// The geometry of a conv3d call, checked as PyTorch checks it (ValueError
// naming op).
Geom3 make_geom3(
    const Shape& input,
    const Shape& weight,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op);

// ValueError naming op unless go has the output's shape for g.
void check_grad_out(const Tensor& go, const Geom3& g, const char* op);

// Runs f<T> for the geometry's dtype (float or double).
template <typename F>
void dispatch_floating(const Geom3& g, F f) {
  if (g.dtype == kFloat32) {
    f.template operator()<float>();
  } else {
    f.template operator()<double>();
  }
}

// Output planes per column slab: about 2^18 column values, from the shapes.
inline int64_t slab_planes(const Geom3& g, int64_t rows) {
  return std::clamp<int64_t>(
      (int64_t(1) << 18) / std::max<int64_t>(rows * g.oplane(), 1),
      1,
      std::max<int64_t>(g.out[0], 1));
}

// cols [(ci, kz, ky, kx)][(z - z0, y, x)] for channels [c0, c1) of one
// sample's group (x), output planes [z0, z1); rows ld apart.
template <typename T>
void vol2col(
    const Geom3& g,
    const T* x,
    int64_t c0,
    int64_t c1,
    int64_t z0,
    int64_t z1,
    T* cols,
    int64_t ld) {
  const int64_t d = g.in[0], h = g.in[1], w = g.in[2];
  const int64_t oh = g.out[1], ow = g.out[2];
  T* row = cols;
  for (int64_t ci = c0; ci < c1; ++ci) {
    for (int64_t kz = 0; kz < g.k[0]; ++kz) {
      for (int64_t ky = 0; ky < g.k[1]; ++ky) {
        for (int64_t kx = 0; kx < g.k[2]; ++kx, row += ld) {
          T* dst = row;
          for (int64_t z = z0; z < z1; ++z) {
            const int64_t iz = z * g.s[0] - g.p[0] + kz * g.dl[0];
            for (int64_t y = 0; y < oh; ++y, dst += ow) {
              const int64_t iy = y * g.s[1] - g.p[1] + ky * g.dl[1];
              if (iz < 0 || iz >= d || iy < 0 || iy >= h) {
                std::fill(dst, dst + ow, T(0));
                continue;
              }
              const T* src = x + ((ci * d + iz) * h + iy) * w;
              for (int64_t xo = 0; xo < ow; ++xo) {
                const int64_t ix = xo * g.s[2] - g.p[2] + kx * g.dl[2];
                dst[xo] = ix >= 0 && ix < w ? src[ix] : T(0);
              }
            }
          }
        }
      }
    }
  }
}

} // namespace ditto::detail::conv3d
