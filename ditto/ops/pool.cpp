// Average pooling (fixed and adaptive windows), forward and backward.

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "ditto/ops/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/nn_ops.h"

namespace ditto {
namespace {

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

} // namespace ditto
