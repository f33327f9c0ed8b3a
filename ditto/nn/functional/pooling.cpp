// Max, average, adaptive and unpooling over one, two or three dims,
// forward and backward: one engine for every dim count. The dims an op
// lacks are leading dims of size 1 (a 2-d pool is a 3-d one of depth 1),
// which changes neither the loop order nor a bit.

#include "ditto/nn/functional/pooling.h"
#include "ditto/nn/functional/detail/pool_engine.h"

#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "ditto/kernels/device_kernels.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"

namespace ditto::nn::functional {
namespace pool {

using detail::check_floating;

// Max pooling over windows w of x (planes of g.in): out and indices
// allocated here, with sizes sizes.
void pool_max(
    const char* op,
    const Tensor& in,
    const Planes& g,
    const Windows& w,
    const Tensor& out,
    const Tensor& idx) {
  const int64_t osize = volume(out_dims(w), op), isize = volume(g.in, op);
  dispatch_dtype(in.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      int64_t* xp = idx.data_ptr<int64_t>();
      parallel_for(
          0,
          g.planes,
          plane_grain(osize * window_cells(w)),
          [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              max_plane(
                  ip + p * isize,
                  g.in,
                  w,
                  osize,
                  opp + p * osize,
                  xp + p * osize);
            }
          });
    }
  });
}

// How an average pooling turns a window's sum into its mean (and an
// output gradient into each cell's share): one division by the divisor
// (the override, or the window's cells, in the padded input or not), or
// adaptive pooling's division by each dim's length in turn.
struct Mean {
  bool adaptive = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override = std::nullopt;

  template <typename T>
  T operator()(T v, const Win& a, const Win& b, const Win& c) const {
    if (adaptive) {
      return v / T(a.end - a.start) / T(b.end - b.start) / T(c.end - c.start);
    }
    const int64_t d = divisor_override ? *divisor_override
        : count_include_pad
        ? a.pad_len * b.pad_len * c.pad_len
        : (a.end - a.start) * (b.end - b.start) * (c.end - c.start);
    return v / T(d);
  }
};

// Average pooling over windows w of x: forward and backward.
Tensor pool_avg(
    const char* op,
    detail::OpScope& scope,
    const Tensor& x,
    const Planes& g,
    const Windows& w,
    const Mean& mean,
    Tensor out = {}) { // allocated here unless given
  const Dims od = out_dims(w);
  const int64_t osize = volume(od, op), isize = volume(g.in, op);
  const Tensor in = x.contiguous();
  if (!out.defined()) {
    out = detail::new_tensor(pooled_sizes(x.sizes(), g.n, od), x.dtype());
  }
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      parallel_for(
          0,
          g.planes,
          plane_grain(osize * window_cells(w)),
          [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              const T* plane = ip + p * isize;
              T* o = opp + p * osize;
              for_outputs(
                  w,
                  0,
                  osize,
                  [&](int64_t k, const Win& a, const Win& b, const Win& c) {
                    T sum = 0;
                    for_window(
                        g.in, a, b, c, [&](int64_t i) { sum += plane[i]; });
                    o[k] = mean(sum, a, b, c);
                  });
            }
          });
    }
  });
  Shape in_sizes = x.sizes();
  return scope.done(out, [=](const autograd::GradList& gr) {
    Tensor go = gr[0].contiguous();
    Tensor gi = zeros(in_sizes, go.dtype());
    dispatch_dtype(go.dtype(), op, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* gp = go.data_ptr<T>();
        T* dp = gi.data_ptr<T>();
        detail::plane_scatter(
            are_deterministic_algorithms_enabled(),
            g.planes,
            osize,
            window_cells(w),
            dp,
            isize,
            [&](int64_t p, int64_t k0, int64_t k1, auto add) {
              for_outputs(
                  w,
                  k0,
                  k1,
                  [&](int64_t k, const Win& a, const Win& b, const Win& c) {
                    const T v = mean(gp[p * osize + k], a, b, c);
                    for_window(g.in, a, b, c, [&](int64_t i) { add(i, v); });
                  });
            });
      }
    });
    return autograd::GradList{gi};
  });
}

// Max pooling of x over windows w: the output and indices, with the
// backward of max_backward.
std::pair<Tensor, Tensor> max_with_indices(
    const char* op,
    detail::OpScope& scope,
    const Tensor& x,
    const Planes& g,
    const Windows& w,
    const std::optional<kernels::PoolGeom>& device,
    Tensor out = {}, // both allocated here unless given
    Tensor idx = {}) {
  const Tensor in = x.contiguous();
  if (!out.defined()) {
    const Shape sizes = pooled_sizes(x.sizes(), g.n, out_dims(w));
    out = detail::new_tensor(sizes, x.dtype(), x.device());
    idx = detail::new_tensor(sizes, kInt64, x.device());
  }
  if (!x.is_cpu()) {
    // Only max_pool2d has a device kernel (Note [Ops on a device]).
    kernels::device_kernels(out, op).max_pool2d(
        device.value(), out, idx, in, op);
  } else {
    pool_max(op, in, g, w, out, idx);
  }
  const int n = g.n;
  scope.done(
      {out, idx},
      [n, in_sizes = x.sizes(), si = scope.save(idx)](
          const autograd::GradList& go) {
        return autograd::GradList{max_backward(
            max_backward_name(n), n, go[0], si.unpack(), in_sizes)};
      });
  return {out, idx};
}

std::pair<Tensor, Tensor> max_pool_nd(
    const char* op,
    int n,
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    // Note [Storage dtypes]: exact (values are picked, not computed).
    auto r = max_pool_nd(
        op,
        n,
        detail::upcast(x),
        kernel_size,
        stride,
        padding,
        dilation,
        ceil_mode);
    return {r.first.to(x.dtype()), r.second};
  }
  detail::OpScope scope(op, {x});
  const Planes g = pool_planes(x, n, op);
  const Fixed f =
      fixed_geometry(g, kernel_size, stride, padding, dilation, ceil_mode, op);
  Windows w;
  for (size_t i = 0; i < 3; ++i) {
    w[i] = max_windows(g.in[i], f.out[i], f.k[i], f.s[i], f.p[i], f.d[i]);
  }
  const kernels::PoolGeom device{
      g.planes,
      g.in[1],
      g.in[2],
      f.out[1],
      f.out[2],
      f.k[1],
      f.k[2],
      f.s[1],
      f.s[2],
      f.p[1],
      f.p[2],
      f.d[1],
      f.d[2]};
  return max_with_indices(op, scope, x, g, w, device);
}

Tensor avg_pool_nd(
    const char* op,
    int n,
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  detail::OpScope scope(op, {x});
  const Planes g = pool_planes(x, n, op);
  const Fixed f =
      fixed_geometry(g, kernel_size, stride, padding, {1}, ceil_mode, op);
  DITTO_CHECK(
      !divisor_override || *divisor_override != 0,
      ValueError,
      op,
      "divisor must be not zero");
  Windows w;
  for (size_t i = 0; i < 3; ++i) {
    w[i] = avg_windows(g.in[i], f.out[i], f.k[i], f.s[i], f.p[i]);
  }
  return pool_avg(
      op,
      scope,
      x,
      g,
      w,
      Mean{
          .adaptive = false,
          .count_include_pad = count_include_pad,
          .divisor_override = divisor_override});
}

// The output sizes of an adaptive pooling call, checked (positive and
// countable). The caller allocates the output before the bins, which are
// as long as its dims: an absurd size raises OutOfMemoryError there.
Shape adaptive_sizes(
    const Tensor& x,
    const Planes& g,
    const IntList& output_size,
    const char* op) {
  const Dims out = dims_arg(output_size, g.n, 1, op, "output_size");
  for (size_t i = 0; i < 3; ++i) {
    DITTO_CHECK(
        out[i] > 0,
        ValueError,
        op,
        "output size must be positive, got ",
        shape_str(output_size));
  }
  Shape sizes = pooled_sizes(x.sizes(), g.n, out);
  checked_numel(sizes, op);
  return sizes;
}

// The bins of an adaptive pooling call, out its output.
Windows adaptive_bins(const Planes& g, const Tensor& out) {
  Windows w;
  for (int i = 0; i < g.n; ++i) {
    w[size_t(3 - g.n + i)] = adaptive_windows(
        g.in[size_t(3 - g.n + i)], out.size(out.dim() - g.n + i));
  }
  for (size_t i = 0; i < size_t(3 - g.n); ++i) {
    w[i] = adaptive_windows(1, 1);
  }
  return w;
}

Tensor adaptive_avg_nd(
    const char* op,
    int n,
    const Tensor& x,
    const IntList& output_size) {
  detail::OpScope scope(op, {x});
  const Planes g = pool_planes(x, n, op);
  Tensor out =
      detail::new_tensor(adaptive_sizes(x, g, output_size, op), x.dtype());
  return pool_avg(
      op, scope, x, g, adaptive_bins(g, out), Mean{.adaptive = true}, out);
}

std::pair<Tensor, Tensor> adaptive_max_nd(
    const char* op,
    int n,
    const Tensor& x,
    const IntList& output_size) {
  detail::OpScope scope(op, {x});
  const Planes g = pool_planes(x, n, op);
  const Shape sizes = adaptive_sizes(x, g, output_size, op);
  Tensor out = detail::new_tensor(sizes, x.dtype());
  Tensor idx = detail::new_tensor(sizes, kInt64);
  return max_with_indices(
      op, scope, x, g, adaptive_bins(g, out), std::nullopt, out, idx);
}

} // namespace pool

} // namespace ditto::nn::functional

// The ATen forms (composite/pooling.ops.toml); nn::functional names them.
namespace ditto {

using namespace nn::functional::pool;

namespace {

std::tuple<Tensor, Tensor> as_tuple(std::pair<Tensor, Tensor> r) {
  return {std::move(r.first), std::move(r.second)};
}

// The plain max poolings are composite: the with_indices op records.
Tensor max_values(
    const char* op,
    int n,
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  detail::OpScope scope(op, {x}, detail::OpScope::kComposite);
  return scope.done(
      max_pool_nd(op, n, x, kernel_size, stride, padding, dilation, ceil_mode)
          .first);
}

} // namespace

std::tuple<Tensor, Tensor> max_pool1d_with_indices(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return as_tuple(max_pool_nd(
      "max_pool1d",
      1,
      self,
      kernel_size,
      stride,
      padding,
      dilation,
      ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return as_tuple(max_pool_nd(
      "max_pool2d",
      2,
      self,
      kernel_size,
      stride,
      padding,
      dilation,
      ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return as_tuple(max_pool_nd(
      "max_pool3d",
      3,
      self,
      kernel_size,
      stride,
      padding,
      dilation,
      ceil_mode));
}

Tensor max_pool1d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return max_values(
      "max_pool1d", 1, self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool2d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return max_values(
      "max_pool2d", 2, self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool3d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return max_values(
      "max_pool3d", 3, self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool1d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad) {
  return avg_pool_nd(
      "avg_pool1d",
      1,
      self,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      std::nullopt);
}

Tensor avg_pool2d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  if (detail::is_storage(self) && is_floating(self.dtype())) {
    return avg_pool2d(
               detail::upcast(self),
               kernel_size,
               stride,
               padding,
               ceil_mode,
               count_include_pad,
               divisor_override)
        .to(self.dtype());
  }
  return avg_pool_nd(
      "avg_pool2d",
      2,
      self,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      divisor_override);
}

Tensor avg_pool3d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  return avg_pool_nd(
      "avg_pool3d",
      3,
      self,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      divisor_override);
}

Tensor adaptive_avg_pool1d(const Tensor& self, const IntArg& output_size) {
  return adaptive_avg_nd("adaptive_avg_pool1d", 1, self, output_size);
}

Tensor adaptive_avg_pool2d(const Tensor& self, const IntArg& output_size) {
  return adaptive_avg_nd("adaptive_avg_pool2d", 2, self, output_size);
}

Tensor adaptive_avg_pool3d(const Tensor& self, const IntArg& output_size) {
  return adaptive_avg_nd("adaptive_avg_pool3d", 3, self, output_size);
}

namespace {

// ATen's max pooling gradient: grad_output must have the pooled size of
// self under the pooling's arguments; the indices place it.
Tensor max_pool_backward_of(
    const char* op,
    int n,
    const Tensor& grad_output,
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode,
    const Tensor& indices) {
  const Planes g = pool_planes(self, n, op);
  const Fixed f =
      fixed_geometry(g, kernel_size, stride, padding, dilation, ceil_mode, op);
  const Shape want = pooled_sizes(self.sizes(), n, f.out);
  DITTO_CHECK(
      grad_output.defined() && grad_output.sizes() == want,
      ValueError,
      op,
      "expected grad_output of the pooled sizes ",
      shape_str(want),
      ", got ",
      grad_output.defined() ? shape_str(grad_output.sizes())
                            : std::string("an undefined tensor"));
  return max_backward(
      n == 3 ? "max_pool3d_backward" : "max_pool2d_backward",
      n,
      grad_output,
      indices,
      self.sizes());
}

} // namespace

Tensor max_pool2d_with_indices_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode,
    const Tensor& indices) {
  return max_pool_backward_of(
      "max_pool2d_with_indices_backward",
      2,
      grad_output,
      self,
      kernel_size,
      stride,
      padding,
      dilation,
      ceil_mode,
      indices);
}

Tensor max_pool3d_with_indices_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode,
    const Tensor& indices) {
  return max_pool_backward_of(
      "max_pool3d_with_indices_backward",
      3,
      grad_output,
      self,
      kernel_size,
      stride,
      padding,
      dilation,
      ceil_mode,
      indices);
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(
    const Tensor& self,
    const IntArg& output_size) {
  return as_tuple(adaptive_max_nd("adaptive_max_pool1d", 1, self, output_size));
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(
    const Tensor& self,
    const IntArg& output_size) {
  return as_tuple(adaptive_max_nd("adaptive_max_pool2d", 2, self, output_size));
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(
    const Tensor& self,
    const IntArg& output_size) {
  return as_tuple(adaptive_max_nd("adaptive_max_pool3d", 3, self, output_size));
}

} // namespace ditto

namespace ditto::nn::functional {

Tensor max_pool2d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const IntArg& input_sizes) {
  return pool::max_backward(
      "max_pool2d_backward", 2, grad_out, indices, input_sizes);
}

Tensor max_pool3d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const IntArg& input_sizes) {
  return pool::max_backward(
      "max_pool3d_backward", 3, grad_out, indices, input_sizes);
}

// LibTorch's: the tuple as ATen's adaptive max pooling, or the values.
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& x,
    const IntArg& output_size) {
  return ::ditto::adaptive_max_pool1d(x, output_size);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& output_size) {
  return ::ditto::adaptive_max_pool2d(x, output_size);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& x,
    const IntArg& output_size) {
  return ::ditto::adaptive_max_pool3d(x, output_size);
}

Tensor adaptive_max_pool1d(const Tensor& x, const IntArg& output_size) {
  detail::OpScope scope(
      "adaptive_max_pool1d", {x}, detail::OpScope::kComposite);
  return scope.done(std::get<0>(::ditto::adaptive_max_pool1d(x, output_size)));
}

Tensor adaptive_max_pool2d(const Tensor& x, const IntArg& output_size) {
  detail::OpScope scope(
      "adaptive_max_pool2d", {x}, detail::OpScope::kComposite);
  return scope.done(std::get<0>(::ditto::adaptive_max_pool2d(x, output_size)));
}

Tensor adaptive_max_pool3d(const Tensor& x, const IntArg& output_size) {
  detail::OpScope scope(
      "adaptive_max_pool3d", {x}, detail::OpScope::kComposite);
  return scope.done(std::get<0>(::ditto::adaptive_max_pool3d(x, output_size)));
}

} // namespace ditto::nn::functional
