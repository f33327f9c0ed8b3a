// grid_sample and affine_grid.

#include "ditto/nn/functional/vision.h"

#include <cmath>

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
    // clip to [0, size - 1]; no gradient where clipped.
    if (c.v <= T(0)) {
      c = {T(0), T(0)};
    } else if (c.v >= T(size - 1)) {
      c = {T(size - 1), T(0)};
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
