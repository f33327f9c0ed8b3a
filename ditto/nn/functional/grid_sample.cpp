// grid_sample and affine_grid.

#include "ditto/nn/functional/vision.h"

#include <cmath>

#include "ditto/ops/declared.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"

namespace ditto::nn::functional {
namespace {

// A grid coordinate mapped to the input's pixel space, with d(pixel)/d(g).
template <typename T>
struct Coord {
  T v;
  T grad;
};

// PyTorch's reflect_coordinates (about [low/2, high/2]) with its derivative.
template <typename T>
Coord<T> reflect(T x, T twice_low, T twice_high) {
  if (twice_low == twice_high) {
    return {T(0), T(0)};
  }
  const T lo = twice_low / 2;
  const T span = (twice_high - twice_low) / 2;
  T sign = 1;
  x = x - lo;
  if (x < 0) {
    sign = -1;
    x = -x;
  }
  const T extra = std::fmod(x, span);
  const int64_t flips = int64_t(std::floor(x / span));
  if (flips % 2 == 0) {
    return {extra + lo, sign};
  }
  return {span - extra + lo, -sign};
}

template <typename T>
Coord<T> source(T g, int64_t size, GridSamplePadding pad, bool align_corners) {
  Coord<T> c;
  if (align_corners) {
    c = {(g + 1) / 2 * T(size - 1), T(size - 1) / 2};
  } else {
    c = {((g + 1) * T(size) - 1) / 2, T(size) / 2};
  }
  if (pad == GridSamplePadding::Reflection) {
    Coord<T> r = align_corners ? reflect(c.v, T(0), T(2 * (size - 1)))
                               : reflect(c.v, T(-1), T(2 * size - 1));
    c = {r.v, c.grad * r.grad};
  }
  if (pad != GridSamplePadding::Zeros) {
    // clip to [0, size - 1]; no gradient where clipped (the derivative
    // times 0, as PyTorch: -0 after a reflection's -1).
    if (c.v <= T(0)) {
      c = {T(0), c.grad * T(0)};
    } else if (c.v >= T(size - 1)) {
      c = {T(size - 1), c.grad * T(0)};
    }
  }
  return c;
}

// Every grid point's source coordinates, x then y per point (computed once,
// not once per channel).
template <typename T>
std::vector<Coord<T>> source_coords(
    const T* gp,
    int64_t points,
    int64_t h,
    int64_t w,
    GridSamplePadding pad,
    bool align_corners) {
  std::vector<Coord<T>> out(size_t(2 * points));
  parallel_for(0, points, 4096, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      out[size_t(2 * k)] = source(gp[2 * k], w, pad, align_corners);
      out[size_t(2 * k + 1)] = source(gp[2 * k + 1], h, pad, align_corners);
    }
  });
  return out;
}

// Note [grid_sample in 3-d]
// PyTorch 1.13's CPU grid_sampler_3d, term for term: a point's eight
// corners tnw, tne, tsw, tse, bnw, bne, bsw, bse (x, then y, then z one
// higher), each weight a product of three distances ((a * b) * c); the
// output starts at 0 and adds value * weight corner by corner (separate
// roundings: PyTorch compiles this kernel once, without FMA). The input
// gradient adds weight * grad into each corner, the grid gradient adds or
// subtracts value * distance * distance * grad per corner and channel,
// then scales by the unnormalization's derivative.
// A grid point: its source coordinates, its cell's first corner and the
// eight corner weights, computed once per point (not once per channel).
template <typename T>
struct Point3 {
  Coord<T> x, y, z;
  int64_t cx = 0, cy = 0, cz = 0;
  T w[8] = {};
  Point3() = default;
  Point3(Coord<T> px, Coord<T> py, Coord<T> pz) : x(px), y(py), z(pz) {
    cx = int64_t(std::floor(x.v));
    cy = int64_t(std::floor(y.v));
    cz = int64_t(std::floor(z.v));
    weights();
  }
  int64_t x0() const {
    return cx;
  }
  int64_t y0() const {
    return cy;
  }
  int64_t z0() const {
    return cz;
  }

 private:
  // The eight weights in PyTorch's order.
  void weights() {
    const T ix = x.v, iy = y.v, iz = z.v;
    const T x0 = T(cx), y0 = T(cy), z0 = T(cz);
    const T x1 = x0 + 1, y1 = y0 + 1, z1 = z0 + 1;
    w[0] = (x1 - ix) * (y1 - iy) * (z1 - iz); // tnw
    w[1] = (ix - x0) * (y1 - iy) * (z1 - iz); // tne
    w[2] = (x1 - ix) * (iy - y0) * (z1 - iz); // tsw
    w[3] = (ix - x0) * (iy - y0) * (z1 - iz); // tse
    w[4] = (x1 - ix) * (y1 - iy) * (iz - z0); // bnw
    w[5] = (ix - x0) * (y1 - iy) * (iz - z0); // bne
    w[6] = (x1 - ix) * (iy - y0) * (iz - z0); // bsw
    w[7] = (ix - x0) * (iy - y0) * (iz - z0); // bse
  }
};

// Corner k (0..7, PyTorch's order) of a point's cell: x + (k & 1),
// y + (k >> 1 & 1), z + (k >> 2).
inline void corner(int k, int64_t& x, int64_t& y, int64_t& z) {
  x += k & 1;
  y += (k >> 1) & 1;
  z += k >> 2;
}

Tensor grid_sample_3d(
    detail::OpScope& scope,
    const Tensor& input,
    const Tensor& grid,
    GridSampleMode mode,
    GridSamplePadding padding,
    bool align_corners) {
  const char* op = "grid_sample";
  DITTO_CHECK(
      grid.dim() == 5 && grid.size(4) == 3 && grid.size(0) == input.size(0),
      ValueError,
      op,
      "expected input (N, C, D, H, W) and grid (N, D_out, H_out, W_out, 3), "
      "got sizes ",
      shape_str(input.sizes()),
      " and ",
      shape_str(grid.sizes()));
  DITTO_CHECK(
      input.size(2) > 0 && input.size(3) > 0 && input.size(4) > 0,
      ValueError,
      op,
      "expected a non-empty spatial input, got sizes ",
      shape_str(input.sizes()));
  const int64_t n = input.size(0), c = input.size(1), d = input.size(2),
                h = input.size(3), w = input.size(4);
  const int64_t pts = grid.size(1) * grid.size(2) * grid.size(3);
  const int64_t vol = d * h * w;
  const Shape out_sizes{n, c, grid.size(1), grid.size(2), grid.size(3)};
  checked_numel(out_sizes, op);
  // Every point's source coordinates (x, y, z), computed once.
  auto points = [=]<typename T>(const T* gp) {
    std::vector<Point3<T>> p(size_t(n * pts));
    parallel_for(0, n * pts, 4096, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        p[size_t(k)] = Point3<T>(
            source(gp[3 * k], w, padding, align_corners),
            source(gp[3 * k + 1], h, padding, align_corners),
            source(gp[3 * k + 2], d, padding, align_corners));
      }
    });
    return p;
  };
  auto inside = [=](int64_t x, int64_t y, int64_t z) {
    return x >= 0 && x < w && y >= 0 && y < h && z >= 0 && z < d;
  };
  const Tensor in = input.contiguous();
  const Tensor gr = grid.contiguous();
  Tensor out = detail::new_tensor(out_sizes, input.dtype());
  dispatch_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      const auto src = points(gr.data_ptr<T>());
      parallel_for(0, n * c, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
          const Point3<T>* sp = src.data() + (q / c) * pts;
          const T* plane = ip + q * vol;
          for (int64_t k = 0; k < pts; ++k) {
            const Point3<T>& p = sp[k];
            T v = 0;
            if (mode == GridSampleMode::Nearest) {
              const int64_t x = int64_t(std::nearbyint(p.x.v)),
                            y = int64_t(std::nearbyint(p.y.v)),
                            z = int64_t(std::nearbyint(p.z.v));
              v = inside(x, y, z) ? plane[(z * h + y) * w + x] : T(0);
            } else {
              const T* wt = p.w;
              for (int j = 0; j < 8; ++j) {
                int64_t x = p.x0(), y = p.y0(), z = p.z0();
                corner(j, x, y, z);
                if (inside(x, y, z)) {
                  v += plane[(z * h + y) * w + x] * wt[j];
                }
              }
            }
            opp[q * pts + k] = v;
          }
        }
      });
    }
  });
  const bool need_input = autograd::requires_grad(input);
  const bool need_grid =
      autograd::requires_grad(grid) && mode != GridSampleMode::Nearest;
  return scope.done(
      out,
      [=, si = scope.save(input), sg = scope.save(grid)](
          const autograd::GradList& grads) {
        Tensor iv = si.unpack().contiguous(), gv = sg.unpack().contiguous();
        Tensor go = grads[0].contiguous();
        Tensor gin = need_input ? zeros(iv.sizes(), iv.dtype()) : Tensor();
        Tensor ggrid = need_grid ? zeros(gv.sizes(), iv.dtype()) : Tensor();
        dispatch_dtype(iv.dtype(), op, [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* ip = iv.data_ptr<T>();
            const T* gop = go.data_ptr<T>();
            const auto src = points(gv.data_ptr<T>());
            if (need_input) {
              detail::plane_scatter(
                  are_deterministic_algorithms_enabled(),
                  n * c,
                  pts,
                  8,
                  gin.data_ptr<T>(),
                  vol,
                  [&](int64_t q, int64_t k0, int64_t k1, auto plane_add) {
                    const Point3<T>* sp = src.data() + (q / c) * pts;
                    for (int64_t k = k0; k < k1; ++k) {
                      const T g = gop[q * pts + k];
                      const Point3<T>& p = sp[k];
                      if (mode == GridSampleMode::Nearest) {
                        const int64_t x = int64_t(std::nearbyint(p.x.v)),
                                      y = int64_t(std::nearbyint(p.y.v)),
                                      z = int64_t(std::nearbyint(p.z.v));
                        if (inside(x, y, z)) {
                          plane_add((z * h + y) * w + x, g);
                        }
                        continue;
                      }
                      const T* wt = p.w;
                      for (int j = 0; j < 8; ++j) {
                        int64_t x = p.x0(), y = p.y0(), z = p.z0();
                        corner(j, x, y, z);
                        if (inside(x, y, z)) {
                          plane_add((z * h + y) * w + x, wt[j] * g);
                        }
                      }
                    }
                  });
            }
            if (!need_grid) {
              return;
            }
            // Grid gradient: each point on its own, channels in order.
            T* ggp = ggrid.data_ptr<T>();
            parallel_for(0, n * pts, 256, [&](int64_t p0, int64_t p1) {
              for (int64_t pi = p0; pi < p1; ++pi) {
                const int64_t b = pi / pts, k = pi % pts;
                const Point3<T>& p = src[size_t(pi)];
                const T ix = p.x.v, iy = p.y.v, iz = p.z.v;
                const int64_t x0 = p.x0(), y0 = p.y0(), z0 = p.z0();
                // Distances to the cell's far (1) and near (0) faces.
                const T dx1 = T(x0 + 1) - ix, dx0 = ix - T(x0);
                const T dy1 = T(y0 + 1) - iy, dy0 = iy - T(y0);
                const T dz1 = T(z0 + 1) - iz, dz0 = iz - T(z0);
                T gx = 0, gy = 0, gz = 0;
                for (int64_t ch = 0; ch < c; ++ch) {
                  const T* plane = ip + (b * c + ch) * vol;
                  const T g = gop[(b * c + ch) * pts + k];
                  for (int j = 0; j < 8; ++j) {
                    int64_t x = x0, y = y0, z = z0;
                    corner(j, x, y, z);
                    if (!inside(x, y, z)) {
                      continue;
                    }
                    const T v = plane[(z * h + y) * w + x];
                    const bool hx = j & 1, hy = (j >> 1) & 1, hz = j >> 2;
                    const T ex = hx ? dx0 : dx1, ey = hy ? dy0 : dy1,
                            ez = hz ? dz0 : dz1;
                    // +: the corner on the far side of that axis.
                    const T tx = v * ey * ez * g, ty = v * ex * ez * g,
                            tz = v * ex * ey * g;
                    gx = hx ? gx + tx : gx - tx;
                    gy = hy ? gy + ty : gy - ty;
                    gz = hz ? gz + tz : gz - tz;
                  }
                }
                ggp[3 * pi] = p.x.grad * gx;
                ggp[3 * pi + 1] = p.y.grad * gy;
                ggp[3 * pi + 2] = p.z.grad * gz;
              }
            });
          }
        });
        return autograd::GradList{gin, ggrid};
      });
}

} // namespace

Tensor grid_sample(
    const Tensor& input,
    const Tensor& grid,
    const GridSampleOptions& options) {
  const GridSampleMode mode = options.mode();
  const GridSamplePadding padding = options.padding_mode();
  const bool align_corners = options.align_corners();
  const char* op = "grid_sample";
  detail::OpScope scope(op, {input, grid});
  DITTO_CHECK(
      input.defined() && grid.defined(),
      ValueError,
      op,
      "undefined input or grid");
  DITTO_CHECK(
      is_floating(input.dtype()) && grid.dtype() == input.dtype(),
      TypeError,
      op,
      "expected floating input and grid of the same dtype, got ",
      input.dtype(),
      " and ",
      grid.dtype());
  if (input.dim() == 5) {
    return grid_sample_3d(scope, input, grid, mode, padding, align_corners);
  }
  DITTO_CHECK(
      input.dim() == 4 && grid.dim() == 4 && grid.size(3) == 2 &&
          grid.size(0) == input.size(0),
      ValueError,
      op,
      "expected input (N, C, H, W) and grid (N, H_out, W_out, 2), got sizes ",
      shape_str(input.sizes()),
      " and ",
      shape_str(grid.sizes()));
  DITTO_CHECK(
      input.size(2) > 0 && input.size(3) > 0,
      ValueError,
      op,
      "expected a non-empty spatial input, got sizes ",
      shape_str(input.sizes()));
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2),
                w = input.size(3), ho = grid.size(1), wo = grid.size(2);
  const Tensor in = input.contiguous();
  const Tensor gr = grid.contiguous();
  Tensor out = detail::new_tensor({n, c, ho, wo}, input.dtype());
  dispatch_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      const T* gp = gr.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      const auto src =
          source_coords(gp, n * ho * wo, h, w, padding, align_corners);
      parallel_for(0, n * c, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
          const Coord<T>* sp = src.data() + 2 * (q / c) * ho * wo;
          const T* plane = ip + q * h * w;
          auto at = [&](int64_t y, int64_t x) {
            return (y >= 0 && y < h && x >= 0 && x < w) ? plane[y * w + x]
                                                        : T(0);
          };
          for (int64_t k = 0; k < ho * wo; ++k) {
            const T x = sp[2 * k].v, y = sp[2 * k + 1].v;
            T v;
            if (mode == GridSampleMode::Nearest) {
              v = at(int64_t(std::nearbyint(y)), int64_t(std::nearbyint(x)));
            } else {
              const int64_t x0 = int64_t(std::floor(x)),
                            y0 = int64_t(std::floor(y));
              const T fx = x - T(x0), fy = y - T(y0);
              v = at(y0, x0) * ((1 - fx) * (1 - fy)) +
                  at(y0, x0 + 1) * (fx * (1 - fy)) +
                  at(y0 + 1, x0) * ((1 - fx) * fy) +
                  at(y0 + 1, x0 + 1) * (fx * fy);
            }
            opp[q * ho * wo + k] = v;
          }
        }
      });
    }
  });
  // PyTorch's output_mask: no work for a gradient nobody needs.
  const bool need_input = autograd::requires_grad(input);
  const bool need_grid = autograd::requires_grad(grid) &&
      mode != GridSampleMode::Nearest; // nearest gives the grid no gradient
  return scope.done(
      out,
      [=, si = scope.save(input), sg = scope.save(grid)](
          const autograd::GradList& grads) {
        Tensor iv = si.unpack().contiguous(), gv = sg.unpack().contiguous();
        Tensor go = grads[0].contiguous();
        Tensor gin = need_input ? zeros({n, c, h, w}, iv.dtype()) : Tensor();
        Tensor ggrid = need_grid ? zeros({n, ho, wo, 2}, iv.dtype()) : Tensor();
        dispatch_dtype(iv.dtype(), op, [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* ip = iv.data_ptr<T>();
            const T* op_ = go.data_ptr<T>();
            const auto src = source_coords(
                gv.data_ptr<T>(), n * ho * wo, h, w, padding, align_corners);
            // Input gradient: see Note [Plane scatters].
            if (need_input) {
              detail::plane_scatter(
                  are_deterministic_algorithms_enabled(),
                  n * c,
                  ho * wo,
                  4,
                  gin.data_ptr<T>(),
                  h * w,
                  [&](int64_t q, int64_t k0, int64_t k1, auto plane_add) {
                    const Coord<T>* sp = src.data() + 2 * (q / c) * ho * wo;
                    auto add = [&](int64_t y, int64_t x, T v) {
                      if (y >= 0 && y < h && x >= 0 && x < w) {
                        plane_add(y * w + x, v);
                      }
                    };
                    for (int64_t k = k0; k < k1; ++k) {
                      const T g = op_[q * ho * wo + k];
                      const T x = sp[2 * k].v, y = sp[2 * k + 1].v;
                      if (mode == GridSampleMode::Nearest) {
                        add(int64_t(std::nearbyint(y)),
                            int64_t(std::nearbyint(x)),
                            g);
                        continue;
                      }
                      const int64_t x0 = int64_t(std::floor(x)),
                                    y0 = int64_t(std::floor(y));
                      const T fx = x - T(x0), fy = y - T(y0);
                      add(y0, x0, g * ((1 - fx) * (1 - fy)));
                      add(y0, x0 + 1, g * (fx * (1 - fy)));
                      add(y0 + 1, x0, g * ((1 - fx) * fy));
                      add(y0 + 1, x0 + 1, g * (fx * fy));
                    }
                  });
            }
            if (!need_grid) {
              return;
            }
            // Grid gradient: each point on its own, channels in order.
            T* ggp = ggrid.data_ptr<T>();
            parallel_for(0, n * ho * wo, 1024, [&](int64_t p0, int64_t p1) {
              for (int64_t p = p0; p < p1; ++p) {
                const int64_t b = p / (ho * wo), k = p % (ho * wo);
                const Coord<T>& cx = src[size_t(2 * p)];
                const Coord<T>& cy = src[size_t(2 * p + 1)];
                const int64_t x0 = int64_t(std::floor(cx.v)),
                              y0 = int64_t(std::floor(cy.v));
                const T fx = cx.v - T(x0), fy = cy.v - T(y0);
                T dx = 0, dy = 0;
                for (int64_t ch = 0; ch < c; ++ch) {
                  const T* plane = ip + (b * c + ch) * h * w;
                  auto at = [&](int64_t y, int64_t x) {
                    return (y >= 0 && y < h && x >= 0 && x < w)
                        ? plane[y * w + x]
                        : T(0);
                  };
                  const T g = op_[(b * c + ch) * ho * wo + k];
                  const T v00 = at(y0, x0), v01 = at(y0, x0 + 1),
                          v10 = at(y0 + 1, x0), v11 = at(y0 + 1, x0 + 1);
                  dx += g * ((v01 - v00) * (1 - fy) + (v11 - v10) * fy);
                  dy += g * ((v10 - v00) * (1 - fx) + (v11 - v01) * fx);
                }
                ggp[2 * p] = dx * cx.grad;
                ggp[2 * p + 1] = dy * cy.grad;
              }
            });
          }
        });
        return autograd::GradList{gin, ggrid};
      });
}

Tensor affine_grid(const Tensor& theta, const Shape& size, bool align_corners) {
  const char* op = "affine_grid";
  detail::OpScope scope(op, {theta}, detail::OpScope::kComposite);
  DITTO_CHECK(
      theta.defined() && is_floating(theta.dtype()),
      TypeError,
      op,
      "expected a floating theta");
  DITTO_CHECK(
      size.size() == 4 && theta.dim() == 3 && theta.size(0) == size[0] &&
          theta.size(1) == 2 && theta.size(2) == 3,
      ValueError,
      op,
      "Expected a batch of 2D affine matrices of shape Nx2x3 for size ",
      shape_str(size),
      ". Got ",
      shape_str(theta.sizes()),
      ".");
  const int64_t n = size[0], h = size[2], w = size[3];
  DITTO_CHECK(h > 0 && w > 0, ValueError, op, "empty output size");
  // PyTorch's base grid: linspace(-1, 1) scaled by (s - 1) / s without
  // align_corners; rows (x, y, 1).
  auto steps = [&](int64_t s) {
    Tensor l = s == 1 ? zeros({1}, theta.dtype())
                      : linspace(-1.0, 1.0, s, theta.dtype());
    return align_corners ? l : mul(l, double(s - 1) / double(s));
  };
  Tensor xs = steps(w), ys = steps(h);
  Tensor base = detail::new_tensor({h, w, 3}, theta.dtype());
  base.select(2, 0).copy_(xs.reshape({1, w}).expand({h, w}));
  base.select(2, 1).copy_(ys.reshape({h, 1}).expand({h, w}));
  base.select(2, 2).fill_(1.0);
  // (N, H*W, 3) x (N, 3, 2) -> (N, H, W, 2)
  Tensor b = base.reshape({1, h * w, 3}).expand({n, h * w, 3});
  Tensor grid = bmm(b, theta.transpose(1, 2)).reshape({n, h, w, 2});
  return scope.done(grid);
}

} // namespace ditto::nn::functional

namespace ditto {
namespace {

// ATen's numbering of grid_sampler's modes (GridSamplerInterpolation,
// GridSamplerPadding) as the options; ValueError naming op and the number
// otherwise. grid_sampler_2d and _3d also take only their rank.
Tensor grid_sampler_of(
    const char* op,
    int64_t rank,
    const Tensor& input,
    const Tensor& grid,
    int64_t interpolation_mode,
    int64_t padding_mode,
    bool align_corners) {
  using nn::functional::GridSampleMode;
  using nn::functional::GridSamplePadding;
  DITTO_CHECK(
      interpolation_mode == 0 || interpolation_mode == 1,
      ValueError,
      op,
      "interpolation_mode ",
      interpolation_mode,
      " is not 0 (bilinear) or 1 (nearest)",
      interpolation_mode == 2 ? "; ditto has no bicubic sampling" : "");
  DITTO_CHECK(
      padding_mode >= 0 && padding_mode <= 2,
      ValueError,
      op,
      "padding_mode ",
      padding_mode,
      " is not 0 (zeros), 1 (border) or 2 (reflection)");
  DITTO_CHECK(
      rank == 0 || !input.defined() || input.dim() == rank,
      ValueError,
      op,
      "expected a ",
      rank,
      "-d input, got ",
      shape_str(input.sizes()));
  nn::functional::GridSampleOptions o;
  o.mode(
      interpolation_mode == 0 ? GridSampleMode::Bilinear
                              : GridSampleMode::Nearest);
  o.padding_mode(
      padding_mode == 0       ? GridSamplePadding::Zeros
          : padding_mode == 1 ? GridSamplePadding::Border
                              : GridSamplePadding::Reflection);
  o.align_corners(align_corners);
  return nn::functional::grid_sample(input, grid, o);
}

} // namespace

Tensor grid_sampler(
    const Tensor& input,
    const Tensor& grid,
    int64_t interpolation_mode,
    int64_t padding_mode,
    bool align_corners) {
  return grid_sampler_of(
      "grid_sampler",
      0,
      input,
      grid,
      interpolation_mode,
      padding_mode,
      align_corners);
}

Tensor grid_sampler_2d(
    const Tensor& input,
    const Tensor& grid,
    int64_t interpolation_mode,
    int64_t padding_mode,
    bool align_corners) {
  return grid_sampler_of(
      "grid_sampler_2d",
      4,
      input,
      grid,
      interpolation_mode,
      padding_mode,
      align_corners);
}

Tensor grid_sampler_3d(
    const Tensor& input,
    const Tensor& grid,
    int64_t interpolation_mode,
    int64_t padding_mode,
    bool align_corners) {
  return grid_sampler_of(
      "grid_sampler_3d",
      5,
      input,
      grid,
      interpolation_mode,
      padding_mode,
      align_corners);
}

Tensor affine_grid_generator(
    const Tensor& theta,
    const IntArg& size,
    bool align_corners) {
  DITTO_CHECK(
      size.size() != 5,
      NotImplementedError,
      "affine_grid",
      "3-D affine grids (size ",
      shape_str(size),
      ", theta Nx3x4) are not implemented in ditto");
  return nn::functional::affine_grid(theta, size, align_corners);
}

} // namespace ditto
