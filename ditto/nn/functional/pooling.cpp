// Max and average pooling (fixed and adaptive windows), forward and
// backward.

#include "ditto/nn/functional/pooling.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "ditto/device/vulkan/kernels.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto::nn::functional {
namespace {

using detail::check_floating;
using detail::pair_arg;

// The output length of a pooling window along one dim (PyTorch's formula,
// with ceil_mode's rule that the last window starts inside the input or
// the left padding). ValueError naming op if it is below 1.
int64_t pooling_output_size(
    int64_t in,
    int64_t kernel,
    int64_t stride,
    int64_t pad,
    int64_t dilation,
    bool ceil_mode,
    const char* op) {
  // (in + 2p - d(k-1) - 1 + (ceil ? s-1 : 0)) / s + 1, every step checked.
  int64_t span = checked_add(
      checked_mul(dilation, kernel - 1, op, "the dilated kernel"),
      1,
      op,
      "the dilated kernel");
  int64_t padded =
      checked_add(in, checked_mul(2, pad, op, "the padding"), op, "the input");
  int64_t num = padded - span;
  if (ceil_mode) {
    num = checked_add(num, stride - 1, op, "the output size");
  }
  int64_t out = num < 0 ? 0 : num / stride + 1;
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + pad) {
    --out;
  }
  DITTO_CHECK(
      out >= 1,
      ValueError,
      op,
      "Output size is too small: input size ",
      in,
      " with kernel ",
      kernel,
      ", stride ",
      stride,
      ", padding ",
      pad,
      " and dilation ",
      dilation,
      " gives ",
      out);
  return out;
}

// Planes of one pooling call: x as (planes, H, W) contiguous.
struct PoolGeom {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

PoolGeom pool_geom(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    bool ceil_mode,
    const char* op) {
  check_floating(x, op);
  const int64_t nd = x.dim();
  DITTO_CHECK(
      (nd == 3 || nd == 4) && x.size(-1) > 0 && x.size(-2) > 0 &&
          (nd == 3 || x.size(1) > 0),
      ValueError,
      op,
      "expected a non-empty 3D or 4D (batch mode) tensor, got sizes ",
      shape_str(x.sizes()));
  PoolGeom g{};
  std::tie(g.kh, g.kw) = pair_arg(kernel_size, op, "kernel_size");
  std::tie(g.sh, g.sw) =
      stride.empty() ? std::pair{g.kh, g.kw} : pair_arg(stride, op, "stride");
  std::tie(g.ph, g.pw) = pair_arg(padding, op, "padding");
  std::tie(g.dh, g.dw) = pair_arg(dilation, op, "dilation");
  DITTO_CHECK(
      g.kh > 0 && g.kw > 0,
      ValueError,
      op,
      "kernel size should be greater than zero, but got kH: ",
      g.kh,
      " kW: ",
      g.kw);
  DITTO_CHECK(
      g.sh > 0 && g.sw > 0,
      ValueError,
      op,
      "stride should be greater than zero, but got dH: ",
      g.sh,
      " dW: ",
      g.sw);
  DITTO_CHECK(
      g.dh > 0 && g.dw > 0,
      ValueError,
      op,
      "dilation should be greater than zero, but got dilationH: ",
      g.dh,
      " dilationW: ",
      g.dw);
  DITTO_CHECK(
      g.ph >= 0 && g.pw >= 0 && g.ph <= g.kh / 2 && g.pw <= g.kw / 2,
      ValueError,
      op,
      "pad should be at most half of kernel size, but got pad=",
      g.ph < 0 || g.ph > g.kh / 2 ? g.ph : g.pw,
      " and kernel_size=",
      g.ph < 0 || g.ph > g.kh / 2 ? g.kh : g.kw);
  g.h = x.size(-2);
  g.w = x.size(-1);
  g.planes = checked_numel(x.sizes(), op) / (g.h * g.w);
  g.oh = pooling_output_size(g.h, g.kh, g.sh, g.ph, g.dh, ceil_mode, op);
  g.ow = pooling_output_size(g.w, g.kw, g.sw, g.pw, g.dw, ceil_mode, op);
  return g;
}

vulkan::PoolGeom device_geom(const PoolGeom& g) {
  return {
      g.planes,
      g.h,
      g.w,
      g.oh,
      g.ow,
      g.kh,
      g.kw,
      g.sh,
      g.sw,
      g.ph,
      g.pw,
      g.dh,
      g.dw};
}

Shape pooled_sizes(const Tensor& x, const PoolGeom& g) {
  Shape s = x.sizes();
  s[s.size() - 2] = g.oh;
  s[s.size() - 1] = g.ow;
  return s;
}

// Planes per parallel chunk: about 16K window reads each.
int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work_per_plane));
}

// One window per output cell along one dim: [start, end) in the input,
// and the divisor.
struct Window {
  int64_t start, end;
  int64_t pad_start, pad_end; // the window clipped to the padded input
};

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
    // PyTorch's start_index/end_index, in 128 bits: i * in can pass 2^63.
    const int64_t a = int64_t((__int128(i) * in) / out);
    const int64_t b = int64_t(((__int128(i) + 1) * in + out - 1) / out);
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
    Div divisor,
    Tensor out = {}) { // allocated here unless given
  const int64_t h = x.size(-2), w = x.size(-1);
  const int64_t oh = int64_t(wh.size()), ow = int64_t(ww.size());
  const int64_t planes = x.numel() / (h * w);
  Shape out_sizes = x.sizes();
  out_sizes[out_sizes.size() - 2] = oh;
  out_sizes[out_sizes.size() - 1] = ow;
  const Tensor in = x.contiguous();
  if (!out.defined()) {
    out = detail::new_tensor(out_sizes, x.dtype());
  }
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
  detail::check_pool_input(x, op);
  auto [kh, kw] = detail::pair_arg(kernel_size, op, "kernel_size");
  auto [sh, sw] = stride.empty() ? std::pair{kh, kw}
                                 : detail::pair_arg(stride, op, "stride");
  auto [ph, pw] = detail::pair_arg(padding, op, "padding");
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
  detail::check_pool_input(x, op);
  auto [oh, ow] = detail::pair_arg(output_size, op, "output_size");
  DITTO_CHECK(
      oh > 0 && ow > 0,
      ValueError,
      op,
      "output size must be positive, got ",
      shape_str(output_size));
  // The output first (countable, then allocated: OutOfMemoryError for an
  // absurd size), then the window lists, which are never larger.
  Shape out_sizes = x.sizes();
  out_sizes[out_sizes.size() - 2] = oh;
  out_sizes[out_sizes.size() - 1] = ow;
  checked_numel(out_sizes, op);
  Tensor out = detail::new_tensor(out_sizes, x.dtype());
  auto wh = adaptive_windows(x.size(-2), oh);
  auto ww = adaptive_windows(x.size(-1), ow);
  auto divisor = [wh, ww](int64_t i, int64_t j) {
    return (wh[size_t(i)].end - wh[size_t(i)].start) *
        (ww[size_t(j)].end - ww[size_t(j)].start);
  };
  return pool_avg(op, scope, x, wh, ww, divisor, out);
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    bool ceil_mode) {
  const char* op = "max_pool2d";
  detail::OpScope scope(op, {x});
  const PoolGeom g =
      pool_geom(x, kernel_size, stride, padding, dilation, ceil_mode, op);
  const Tensor in = x.contiguous();
  Tensor out = detail::new_tensor(pooled_sizes(x, g), x.dtype(), x.device());
  Tensor idx = detail::new_tensor(pooled_sizes(x, g), kInt64, x.device());
  if (!x.is_cpu()) {
    vulkan::max_pool2d(device_geom(g), out, idx, in, op);
  }
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      if (!x.is_cpu()) {
        return;
      }
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      int64_t* xp = idx.data_ptr<int64_t>();
      parallel_for(
          0,
          g.planes,
          plane_grain(g.oh * g.ow * g.kh * g.kw),
          [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              const T* plane = ip + p * g.h * g.w;
              T* o = opp + p * g.oh * g.ow;
              int64_t* oi = xp + p * g.oh * g.ow;
              for (int64_t i = 0; i < g.oh; ++i) {
                int64_t h0 = i * g.sh - g.ph;
                int64_t h1 = std::min(h0 + (g.kh - 1) * g.dh + 1, g.h);
                while (h0 < 0) {
                  h0 += g.dh;
                }
                for (int64_t j = 0; j < g.ow; ++j) {
                  int64_t w0 = j * g.sw - g.pw;
                  int64_t w1 = std::min(w0 + (g.kw - 1) * g.dw + 1, g.w);
                  while (w0 < 0) {
                    w0 += g.dw;
                  }
                  int64_t best_i = h0 * g.w + w0;
                  T best = -std::numeric_limits<T>::infinity();
                  for (int64_t hh = h0; hh < h1; hh += g.dh) {
                    for (int64_t ww = w0; ww < w1; ww += g.dw) {
                      const T v = plane[hh * g.w + ww];
                      if (v > best || std::isnan(v)) {
                        best = v;
                        best_i = hh * g.w + ww;
                      }
                    }
                  }
                  o[i * g.ow + j] = best;
                  oi[i * g.ow + j] = best_i;
                }
              }
            }
          });
    }
  });
  Shape in_sizes = x.sizes();
  scope.done(
      {out, idx},
      [in_sizes, si = scope.save(idx)](const autograd::GradList& go) {
        return autograd::GradList{
            max_pool2d_backward(go[0], si.unpack(), in_sizes)};
      });
  return {out, idx};
}

Tensor max_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    bool ceil_mode) {
  detail::OpScope scope("max_pool2d", {x}, detail::OpScope::kComposite);
  return scope.done(max_pool2d_with_indices(
                        x, kernel_size, stride, padding, dilation, ceil_mode)
                        .first);
}

Tensor max_pool2d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes) {
  const char* op = "max_pool2d_backward";
  detail::OpScope scope(op, {grad_out, indices});
  check_floating(grad_out, op);
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64 &&
          indices.sizes() == grad_out.sizes() && input_sizes.size() >= 2 &&
          grad_out.dim() == int64_t(input_sizes.size()),
      ValueError,
      op,
      "indices (int64, the shape of grad_out ",
      shape_str(grad_out.sizes()),
      ") and input sizes ",
      shape_str(input_sizes),
      " do not match");
  const int64_t hw =
      input_sizes[input_sizes.size() - 2] * input_sizes[input_sizes.size() - 1];
  const int64_t ohw = grad_out.size(-2) * grad_out.size(-1);
  const int64_t planes = ohw == 0 ? 0 : grad_out.numel() / ohw;
  Tensor gi = zeros(input_sizes, grad_out.dtype(), grad_out.device());
  const Tensor go = grad_out.contiguous();
  const Tensor ix = indices.contiguous();
  if (!gi.is_cpu()) {
    // The serial loop per plane (deterministic), else atomic additions.
    const int64_t h = input_sizes[input_sizes.size() - 2];
    const int64_t w = input_sizes[input_sizes.size() - 1];
    vulkan::max_pool2d_backward(
        {planes, h, w, grad_out.size(-2), grad_out.size(-1)},
        gi,
        ix,
        go,
        are_deterministic_algorithms_enabled(),
        op);
    return scope.done(gi);
  }
  const int64_t* xp = ix.data_ptr<int64_t>();
  // The first bad index in index order, whatever the thread count.
  std::atomic<int64_t> first_bad{INT64_MAX};
  parallel_for(0, ix.numel(), 65536, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (xp[i] < 0 || xp[i] >= hw) {
        int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  if (first_bad.load() != INT64_MAX) {
    const int64_t i = first_bad.load();
    DITTO_CHECK(
        xp[i] >= 0 && xp[i] < hw,
        IndexError,
        op,
        "index ",
        xp[i],
        " is out of bounds for a plane of ",
        hw,
        " elements");
  }
  dispatch_dtype(gi.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* gp = go.data_ptr<T>();
      T* dp = gi.data_ptr<T>();
      detail::plane_scatter(
          are_deterministic_algorithms_enabled(),
          planes,
          ohw,
          1,
          dp,
          hw,
          [&](int64_t p, int64_t k0, int64_t k1, auto add) {
            for (int64_t k = p * ohw + k0; k < p * ohw + k1; ++k) {
              add(xp[k], gp[k]);
            }
          });
    }
  });
  return scope.done(gi);
}

} // namespace ditto::nn::functional
