// Average pooling (fixed and adaptive windows) and embedding lookups.

#include <cmath>
#include <limits>

#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/nn_ops.h"
#include "ditto/ops/op_util.h"
#include "ditto/ops/scatter_engine.h"

namespace ditto {
namespace {

// One window per output cell along one dim: [start, end) in the input,
// and the divisor.
struct Window {
  int64_t start, end;
  int64_t pad_start, pad_end; // the window clipped to the padded input
};

std::pair<int64_t, int64_t> two_of(
    const IntList& v,
    const char* op,
    const char* what) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == 2,
      ValueError,
      op,
      what,
      " must be one int or two ints, got ",
      v.size(),
      " values");
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

std::vector<Window> fixed_windows(
    int64_t in,
    int64_t out,
    int64_t k,
    int64_t s,
    int64_t p) {
  std::vector<Window> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    int64_t a = i * s - p;
    int64_t b = std::min(a + k, in + p);
    w[size_t(i)].pad_start = a;
    w[size_t(i)].pad_end = b;
    w[size_t(i)].start = std::max<int64_t>(a, 0);
    w[size_t(i)].end = std::min(b, in);
  }
  return w;
}

std::vector<Window> adaptive_windows(int64_t in, int64_t out) {
  std::vector<Window> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const int64_t a = (i * in) / out;
    const int64_t b = ((i + 1) * in + out - 1) / out;
    w[size_t(i)] = {a, b, a, b};
  }
  return w;
}

// Average pooling with the windows given per dim: forward and backward on
// (planes, H, W) contiguous. divisor(i, j) gives each cell's divisor.
template <typename Div>
Tensor pool_avg(
    const char* op,
    detail::OpScope& scope,
    const Tensor& x,
    const std::vector<Window>& wh,
    const std::vector<Window>& ww,
    Div divisor) {
  const int64_t h = x.size(-2), w = x.size(-1);
  const int64_t oh = int64_t(wh.size()), ow = int64_t(ww.size());
  const int64_t planes = x.numel() / (h * w);
  Shape out_sizes = x.sizes();
  out_sizes[out_sizes.size() - 2] = oh;
  out_sizes[out_sizes.size() - 1] = ow;
  const Tensor in = x.contiguous();
  Tensor out = detail::new_tensor(out_sizes, x.dtype());
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      parallel_for(0, planes, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const T* plane = ip + p * h * w;
          for (int64_t i = 0; i < oh; ++i) {
            for (int64_t j = 0; j < ow; ++j) {
              T sum = 0;
              for (int64_t a = wh[size_t(i)].start; a < wh[size_t(i)].end;
                   ++a) {
                for (int64_t b = ww[size_t(j)].start; b < ww[size_t(j)].end;
                     ++b) {
                  sum += plane[a * w + b];
                }
              }
              opp[(p * oh + i) * ow + j] = sum / T(divisor(i, j));
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
        const T* gp = go.data_ptr<T>();
        T* dp = gi.data_ptr<T>();
        const int64_t window = (wh.empty() ? 1 : wh[0].end - wh[0].start) *
            (ww.empty() ? 1 : ww[0].end - ww[0].start);
        detail::plane_scatter(
            are_deterministic_algorithms_enabled(),
            planes,
            oh * ow,
            window,
            dp,
            h * w,
            [&](int64_t p, int64_t k0, int64_t k1, auto add) {
              for (int64_t k = k0; k < k1; ++k) {
                const int64_t i = k / ow, j = k % ow;
                const T v = gp[p * oh * ow + k] / T(divisor(i, j));
                for (int64_t a = wh[size_t(i)].start; a < wh[size_t(i)].end;
                     ++a) {
                  for (int64_t b = ww[size_t(j)].start; b < ww[size_t(j)].end;
                       ++b) {
                    add(a * w + b, v);
                  }
                }
              }
            });
      }
    });
    return autograd::GradList{gi};
  });
}

void check_pool_input(const Tensor& x, const char* op) {
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      is_floating(x.dtype()),
      TypeError,
      op,
      "expected a floating tensor, got ",
      x.dtype());
  DITTO_CHECK(
      (x.dim() == 3 || x.dim() == 4) && x.numel() > 0,
      ValueError,
      op,
      "expected a non-empty 3D or 4D (batch mode) tensor, got sizes ",
      shape_str(x.sizes()));
}

} // namespace

Tensor avg_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride,
    const IntList& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  detail::OpScope scope(op, {x});
  check_pool_input(x, op);
  auto [kh, kw] = two_of(kernel_size, op, "kernel_size");
  auto [sh, sw] =
      stride.empty() ? std::pair{kh, kw} : two_of(stride, op, "stride");
  auto [ph, pw] = two_of(padding, op, "padding");
  DITTO_CHECK(
      kh > 0 && kw > 0 && sh > 0 && sw > 0,
      ValueError,
      op,
      "kernel size and stride must be greater than zero");
  DITTO_CHECK(
      ph >= 0 && pw >= 0 && ph <= kh / 2 && pw <= kw / 2,
      ValueError,
      op,
      "pad should be at most half of kernel size, but got pad=",
      ph > kh / 2 || ph < 0 ? ph : pw,
      " and kernel_size=",
      ph > kh / 2 || ph < 0 ? kh : kw);
  DITTO_CHECK(
      !divisor_override || *divisor_override != 0,
      ValueError,
      op,
      "divisor must be not zero");
  const int64_t h = x.size(-2), w = x.size(-1);
  const int64_t oh = pooling_output_size(h, kh, sh, ph, 1, ceil_mode, op);
  const int64_t ow = pooling_output_size(w, kw, sw, pw, 1, ceil_mode, op);
  auto wh = fixed_windows(h, oh, kh, sh, ph);
  auto ww = fixed_windows(w, ow, kw, sw, pw);
  auto divisor = [wh, ww, count_include_pad, divisor_override](
                     int64_t i, int64_t j) -> int64_t {
    if (divisor_override) {
      return *divisor_override;
    }
    const Window& a = wh[size_t(i)];
    const Window& b = ww[size_t(j)];
    return count_include_pad
        ? (a.pad_end - a.pad_start) * (b.pad_end - b.pad_start)
        : (a.end - a.start) * (b.end - b.start);
  };
  return pool_avg(op, scope, x, wh, ww, divisor);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size) {
  const char* op = "adaptive_avg_pool2d";
  detail::OpScope scope(op, {x});
  check_pool_input(x, op);
  auto [oh, ow] = two_of(output_size, op, "output_size");
  DITTO_CHECK(
      oh > 0 && ow > 0,
      ValueError,
      op,
      "output size must be positive, got ",
      shape_str(output_size));
  auto wh = adaptive_windows(x.size(-2), oh);
  auto ww = adaptive_windows(x.size(-1), ow);
  auto divisor = [wh, ww](int64_t i, int64_t j) {
    return (wh[size_t(i)].end - wh[size_t(i)].start) *
        (ww[size_t(j)].end - ww[size_t(j)].start);
  };
  return pool_avg(op, scope, x, wh, ww, divisor);
}

Tensor embedding(
    const Tensor& weight,
    const Tensor& indices,
    std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  detail::OpScope scope(op, {weight});
  DITTO_CHECK(
      weight.defined() && weight.dim() == 2,
      ValueError,
      op,
      "'weight' must be 2-D");
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64,
      TypeError,
      op,
      "Expected tensor for argument #1 'indices' to have scalar type Long");
  Tensor flat = indices.reshape({-1});
  Tensor rows = ::ditto::index_select(weight, 0, flat);
  Shape out_sizes = indices.sizes();
  out_sizes.push_back(weight.size(1));
  Tensor out = rows.reshape(out_sizes);
  const int64_t num = weight.size(0);
  return scope.done(out, [flat, num, padding_idx](const autograd::GradList& g) {
    Tensor go = g[0].reshape({flat.numel(), -1});
    Tensor idx = flat;
    if (padding_idx) {
      Tensor keep = ne(flat, *padding_idx);
      idx = masked_select(flat, keep);
      go = index_select(go, 0, masked_select(arange(flat.numel()), keep));
    }
    Tensor gw = zeros({num, go.size(1)}, go.dtype());
    gw.index_add_(0, idx, go);
    return autograd::GradList{gw};
  });
}

} // namespace ditto

#include "ditto/ops/conv.h"
#include "ditto/ops/reduce.h"

namespace ditto {

Tensor conv_transpose2d(
    const Tensor& x,
    const Tensor& weight,
    const Tensor& bias,
    const IntList& stride,
    const IntList& padding,
    const IntList& output_padding,
    int64_t groups,
    const IntList& dilation) {
  const char* op = "conv_transpose2d";
  detail::OpScope scope(op, {x, weight, bias});
  DITTO_CHECK(
      x.defined() && weight.defined(),
      ValueError,
      op,
      "undefined input or weight");
  DITTO_CHECK(
      x.dim() == 4 && weight.dim() == 4,
      ValueError,
      op,
      "expected a 4-D input and a 4-D weight, got sizes ",
      shape_str(x.sizes()),
      " and ",
      shape_str(weight.sizes()));
  DITTO_CHECK(
      groups > 0 && weight.size(0) % groups == 0,
      ValueError,
      op,
      "weight's first dim ",
      weight.size(0),
      " must be divisible by groups ",
      groups);
  DITTO_CHECK(
      x.size(1) == weight.size(0),
      ValueError,
      op,
      "expected input with ",
      weight.size(0),
      " channels, got ",
      x.size(1));
  auto [sh, sw] = two_of(stride, op, "stride");
  auto [ph, pw] = two_of(padding, op, "padding");
  auto [oph, opw] = two_of(output_padding, op, "output_padding");
  auto [dh, dw] = two_of(dilation, op, "dilation");
  DITTO_CHECK(
      sh > 0 && sw > 0 && dh > 0 && dw > 0 && ph >= 0 && pw >= 0,
      ValueError,
      op,
      "stride and dilation must be positive and padding non-negative");
  DITTO_CHECK(
      oph >= 0 && opw >= 0 && (oph < sh || oph < dh) && (opw < sw || opw < dw),
      ValueError,
      op,
      "output padding must be smaller than either stride or dilation, got "
      "output_padding=",
      shape_str({oph, opw}));
  const int64_t cout = weight.size(1) * groups;
  auto out_len = [&](int64_t in,
                     int64_t s,
                     int64_t p,
                     int64_t d,
                     int64_t k,
                     int64_t opad) {
    int64_t v = checked_mul(in - 1, s, op, "the output size");
    v = checked_add(v, -2 * p, op, "the output size");
    v = checked_add(
        v, checked_mul(d, k - 1, op, "the output size"), op, "the output size");
    return checked_add(v, opad + 1, op, "the output size");
  };
  const int64_t ho = out_len(x.size(2), sh, ph, dh, weight.size(2), oph);
  const int64_t wo = out_len(x.size(3), sw, pw, dw, weight.size(3), opw);
  DITTO_CHECK(
      ho > 0 && wo > 0,
      ValueError,
      op,
      "the output size (",
      ho,
      ", ",
      wo,
      ") is too small");
  DITTO_CHECK(
      !bias.defined() || (bias.dim() == 1 && bias.size(0) == cout),
      ValueError,
      op,
      "expected a bias of size {",
      cout,
      "}");
  const IntList st{sh, sw}, pd{ph, pw}, dl{dh, dw};
  Tensor y = conv2d_backward_input(
      x, weight, {x.size(0), cout, ho, wo}, st, pd, dl, groups);
  if (bias.defined()) {
    y.add_(bias.reshape({1, cout, 1, 1}));
  }
  return scope.done(
      y,
      [st,
       pd,
       dl,
       groups,
       has_b = bias.defined(),
       sx = scope.save(x),
       sw_ = scope.save(weight)](const autograd::GradList& g) {
        Tensor go = g[0];
        Tensor xv = sx.unpack(), wv = sw_.unpack();
        Tensor gx = conv2d(go, wv, {}, st, pd, dl, groups);
        Tensor gw =
            conv2d_backward_weight(xv, go, wv.sizes(), st, pd, dl, groups);
        Tensor gb = has_b ? go.sum({0, 2, 3}) : Tensor();
        return autograd::GradList{gx, gw, gb};
      });
}

} // namespace ditto

namespace ditto {
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
  check_pool_input(x, op);
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

} // namespace ditto

namespace ditto {
namespace {

// ATen's calc_erfinv (c10 Math.h), as GCC compiles it for PyTorch's AVX2
// kernels: the polynomials' a * z + b contracted into fused multiply-adds.
template <typename T>
T calc_erfinv(T y) {
  constexpr T kCentral = T(0.7);
  const T a[4] = {
      T(0.886226899), T(-1.645349621), T(0.914624893), T(-0.140543331)};
  const T b[4] = {
      T(-2.118377725), T(1.442710462), T(-0.329097515), T(0.012229801)};
  const T c[4] = {
      T(-1.970840454), T(-1.624906493), T(3.429567803), T(1.641345311)};
  const T d[2] = {T(3.543889200), T(1.637067800)};
  const T ya = std::abs(y);
  if (ya > T(1)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (ya == T(1)) {
    return std::copysign(std::numeric_limits<T>::infinity(), y);
  }
  T x;
  if (ya <= kCentral) {
    const T z = y * y;
    const T num = std::fma(std::fma(std::fma(a[3], z, a[2]), z, a[1]), z, a[0]);
    const T dem = std::fma(
        std::fma(std::fma(std::fma(b[3], z, b[2]), z, b[1]), z, b[0]), z, T(1));
    x = y * num / dem;
  } else {
    const T z = std::sqrt(-std::log((T(1) - ya) / T(2)));
    const T num = std::fma(std::fma(std::fma(c[3], z, c[2]), z, c[1]), z, c[0]);
    const T dem = std::fma(std::fma(d[1], z, d[0]), z, T(1));
    x = std::copysign(num, y) / dem;
  }
  const T k = T(2) / T(std::sqrt(3.14159265358979323846));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  return x;
}

} // namespace

Tensor erfinv(const Tensor& x) {
  const char* op = "erfinv";
  detail::OpScope scope(op, {x});
  DITTO_CHECK(x.defined(), ValueError, op, "undefined tensor");
  const Tensor in =
      x.to(is_floating(x.dtype()) ? x.dtype() : kFloat32).contiguous();
  Tensor out = detail::new_tensor(x.sizes(), in.dtype());
  dispatch_dtype(in.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      parallel_for(0, in.numel(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          opp[i] = calc_erfinv(ip[i]);
        }
      });
    }
  });
  return scope.done(out, [sy = scope.save(out)](const autograd::GradList& g) {
    // d/dx erfinv(x) = sqrt(pi)/2 exp(erfinv(x)^2)
    Tensor y = sy.unpack();
    return autograd::GradList{
        mul(g[0], mul(exp(mul(y, y)), 0.8862269254527580))};
  });
}

} // namespace ditto
