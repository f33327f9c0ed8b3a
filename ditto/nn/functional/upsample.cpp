// upsample2d (nearest, nearest-exact, bilinear): forward, and a backward
// through detail::plane_scatter (Note [Plane scatters]); interpolate, its
// PyTorch front end.

#include "ditto/nn/functional/vision.h"

#include <cmath>
#include <optional>

#include "ditto/core/error.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/factories.h"

namespace ditto::nn::functional {
namespace {

// Per output index along one dim: the two source cells and their weights.
template <typename T>
struct Tap {
  int64_t i0, i1;
  T l0, l1;
};

template <typename T>
std::vector<Tap<T>> taps(
    int64_t in,
    int64_t out,
    InterpolateMode mode,
    bool align_corners,
    std::optional<double> scale) {
  std::vector<Tap<T>> t(static_cast<size_t>(out));
  if (mode != InterpolateMode::Bilinear) {
    // PyTorch: a float32 scale (1 / scale_factor, or in / out) and a
    // float32 product (In = 2, Out = 82: output row 41 reads row 0, where
    // exact arithmetic reads row 1). PyTorch 1.13's float64 kernel with
    // several channels computes in double instead; ditto keeps one rule.
    const float s = scale ? float(1.0 / *scale) : float(in) / float(out);
    for (int64_t d = 0; d < out; ++d) {
      const float pos = mode == InterpolateMode::Nearest
          ? float(d) * s
          : (float(d) + 0.5f) * s;
      const int64_t src = std::min(int64_t(std::floor(pos)), in - 1);
      t[size_t(d)] = {src, src, T(1), T(0)};
    }
    return t;
  }
  T s;
  if (align_corners) {
    s = out > 1 ? T(in - 1) / T(out - 1) : T(0);
  } else {
    s = scale ? T(1.0 / *scale) : T(in) / T(out);
  }
  for (int64_t d = 0; d < out; ++d) {
    T src =
        align_corners ? s * T(d) : std::max(s * (T(d) + T(0.5)) - T(0.5), T(0));
    const int64_t i0 = int64_t(src);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const T l1 = src - T(i0);
    t[size_t(d)] = {i0, i1, T(1) - l1, l1};
  }
  return t;
}

} // namespace

Tensor upsample2d(
    const Tensor& x,
    int64_t out_h,
    int64_t out_w,
    InterpolateMode mode,
    bool align_corners,
    std::optional<double> scale_h,
    std::optional<double> scale_w) {
  const char* op = mode == InterpolateMode::Bilinear ? "upsample_bilinear2d"
                                                     : "upsample_nearest2d";
  detail::OpScope scope(op, {x});
  detail::check_pool_input(x, op);
  DITTO_CHECK(
      x.dim() == 4,
      ValueError,
      op,
      "expected a 4-D input (N, C, H, W), got sizes ",
      shape_str(x.sizes()));
  DITTO_CHECK(
      out_h > 0 && out_w > 0,
      ValueError,
      op,
      "Input and output sizes should be greater than 0, but got output "
      "(H: ",
      out_h,
      ", W: ",
      out_w,
      ")");
  DITTO_CHECK(
      !align_corners || mode == InterpolateMode::Bilinear,
      ValueError,
      op,
      "align_corners option can only be set with the interpolating modes: "
      "linear | bilinear | bicubic | trilinear");
  const int64_t h = x.size(2), w = x.size(3);
  const int64_t planes = x.size(0) * x.size(1);
  checked_numel({planes, out_h, out_w}, op);
  const Tensor in = x.contiguous();
  Tensor out =
      detail::new_tensor({x.size(0), x.size(1), out_h, out_w}, x.dtype());
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      auto th = taps<T>(h, out_h, mode, align_corners, scale_h);
      auto tw = taps<T>(w, out_w, mode, align_corners, scale_w);
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      const bool nearest = mode != InterpolateMode::Bilinear;
      parallel_for(0, planes, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const T* src = ip + p * h * w;
          T* dst = opp + p * out_h * out_w;
          for (int64_t i = 0; i < out_h; ++i) {
            const Tap<T>& a = th[size_t(i)];
            for (int64_t j = 0; j < out_w; ++j) {
              const Tap<T>& b = tw[size_t(j)];
              if (nearest) {
                dst[i * out_w + j] = src[a.i0 * w + b.i0];
              } else {
                dst[i * out_w + j] = a.l0 *
                        (b.l0 * src[a.i0 * w + b.i0] +
                         b.l1 * src[a.i0 * w + b.i1]) +
                    a.l1 *
                        (b.l0 * src[a.i1 * w + b.i0] +
                         b.l1 * src[a.i1 * w + b.i1]);
              }
            }
          }
        }
      });
    }
  });
  Shape in_sizes = x.sizes();
  return scope.done(out, [=](const autograd::GradList& g) {
    Tensor go = g[0].contiguous();
    Tensor gi = zeros(in_sizes, go.dtype());
    dispatch_dtype(go.dtype(), op, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        auto th = taps<T>(h, out_h, mode, align_corners, scale_h);
        auto tw = taps<T>(w, out_w, mode, align_corners, scale_w);
        const T* gp = go.data_ptr<T>();
        T* dp = gi.data_ptr<T>();
        detail::plane_scatter(
            are_deterministic_algorithms_enabled(),
            planes,
            out_h * out_w,
            4,
            dp,
            h * w,
            [&](int64_t p, int64_t k0, int64_t k1, auto add) {
              const T* s = gp + p * out_h * out_w;
              for (int64_t k = k0; k < k1; ++k) {
                const Tap<T>& a = th[size_t(k / out_w)];
                const Tap<T>& b = tw[size_t(k % out_w)];
                const T v = s[k];
                if (mode != InterpolateMode::Bilinear) {
                  add(a.i0 * w + b.i0, v);
                  continue;
                }
                add(a.i0 * w + b.i0, a.l0 * b.l0 * v);
                add(a.i0 * w + b.i1, a.l0 * b.l1 * v);
                add(a.i1 * w + b.i0, a.l1 * b.l0 * v);
                add(a.i1 * w + b.i1, a.l1 * b.l1 * v);
              }
            });
      }
    });
    return autograd::GradList{gi};
  });
}

Tensor interpolate(const Tensor& x, const InterpolateOptions& o) {
  const char* op = "interpolate";
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      x.dim() == 4,
      ValueError,
      op,
      "only 4-D input (N, C, H, W) is supported, got sizes ",
      shape_str(x.sizes()));
  DITTO_CHECK(
      o.size().empty() != o.scale_factor().empty(),
      ValueError,
      op,
      "only one of size or scale_factor should be defined");
  DITTO_CHECK(
      !(o.align_corners() && o.mode() != InterpolateMode::Bilinear),
      ValueError,
      op,
      "align_corners option can only be set with the interpolating modes: "
      "linear | bilinear | bicubic | trilinear");
  int64_t oh = 0, ow = 0;
  std::optional<double> sh, sw;
  if (!o.size().empty()) {
    DITTO_CHECK(
        o.size().size() <= 2, ValueError, op, "size must be one or two values");
    oh = o.size()[0];
    ow = o.size().size() == 2 ? o.size()[1] : oh;
  } else {
    const auto& f = o.scale_factor();
    DITTO_CHECK(
        f.size() <= 2 && f[0] > 0 && f.back() > 0 && std::isfinite(f[0]) &&
            std::isfinite(f.back()),
        ValueError,
        op,
        "scale_factor must be one or two positive finite values");
    const double fh = f[0], fw = f.size() == 2 ? f[1] : f[0];
    const double eh = std::floor(double(x.size(2)) * fh);
    const double ew = std::floor(double(x.size(3)) * fw);
    DITTO_CHECK(
        eh < 9.2e18 && ew < 9.2e18,
        ValueError,
        op,
        "scale_factor gives an output size beyond int64");
    oh = int64_t(eh);
    ow = int64_t(ew);
    if (!o.recompute_scale_factor()) {
      sh = fh;
      sw = fw;
    }
  }
  return upsample2d(
      x, oh, ow, o.mode(), o.align_corners().value_or(false), sh, sw);
}

} // namespace ditto::nn::functional
