// Max, average, adaptive and unpooling over one, two or three dims,
// forward and backward: one engine for every dim count. The dims an op
// lacks are leading dims of size 1 (a 2-d pool is a 3-d one of depth 1),
// which changes neither the loop order nor a bit.

#include "ditto/nn/functional/pooling.h"

#include <array>
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
#include "ditto/ops/random.h"

namespace ditto::nn::functional {
namespace {

using detail::check_floating;

// Sizes or arguments of the pooled dims as (D, H, W).
using Dims = std::array<int64_t, 3>;

// d's element count; ValueError naming op on overflow.
int64_t volume(const Dims& d, const char* op) {
  return checked_mul(
      checked_mul(d[0], d[1], op, "the pooled volume"),
      d[2],
      op,
      "the pooled volume");
}

// v (one int for every dim, or one per dim) as Dims, the dims an n-d op
// lacks set to fill. ValueError naming op and what otherwise.
Dims dims_arg(
    const IntList& v,
    int n,
    int64_t fill,
    const char* op,
    const char* what) {
  static const char* const kCounts[] = {
      "", "one int", "one int or two ints", "one int or three ints"};
  DITTO_CHECK(
      v.size() == 1 || int(v.size()) == n,
      ValueError,
      op,
      what,
      " must be ",
      kCounts[n],
      ", got ",
      v.size(),
      " values");
  Dims out{fill, fill, fill};
  for (int i = 0; i < n; ++i) {
    out[size_t(3 - n + i)] = v[v.size() == 1 ? 0 : size_t(i)];
  }
  return out;
}

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

// The planes of one pooling call: x as (planes, D, H, W) contiguous.
struct Planes {
  int n = 0; // pooled dims
  int64_t planes = 0;
  Dims in{1, 1, 1};
};

// Checks x for an n-d pooling: floating, (N, C, spatial...) or (C,
// spatial...) with every dim but the batch non-empty.
Planes pool_planes(const Tensor& x, int n, const char* op) {
  check_floating(x, op);
  const int64_t nd = x.dim();
  bool nonempty = nd == n + 1 || nd == n + 2;
  for (int64_t i = nd == n + 2 ? 1 : 0; nonempty && i < nd; ++i) {
    nonempty = x.size(i) > 0;
  }
  DITTO_CHECK(
      nonempty,
      ValueError,
      op,
      "expected a non-empty ",
      n + 1,
      "D or ",
      n + 2,
      "D (batch mode) tensor, got sizes ",
      shape_str(x.sizes()));
  Planes p;
  p.n = n;
  for (int i = 0; i < n; ++i) {
    p.in[size_t(3 - n + i)] = x.size(nd - n + i);
  }
  p.planes = checked_numel(x.sizes(), op) / volume(p.in, op);
  return p;
}

// x's sizes with the last n dims replaced by out's.
Shape pooled_sizes(const Shape& x, int n, const Dims& out) {
  Shape s = x;
  for (int i = 0; i < n; ++i) {
    s[s.size() - size_t(n - i)] = out[size_t(3 - n + i)];
  }
  return s;
}

// One window per output cell along one dim: cells start, start + step, ...
// below end, and (average pooling) the window's length clipped to the
// padded input.
struct Win {
  int64_t start = 0, end = 1, step = 1, pad_len = 1;
};
using Windows = std::array<std::vector<Win>, 3>;

Dims out_dims(const Windows& w) {
  return {int64_t(w[0].size()), int64_t(w[1].size()), int64_t(w[2].size())};
}

// Max pooling's windows: dilated, the cells in the padding skipped.
std::vector<Win> max_windows(
    int64_t in,
    int64_t out,
    int64_t k,
    int64_t s,
    int64_t p,
    int64_t d) {
  std::vector<Win> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    int64_t a = i * s - p;
    const int64_t b = std::min(a + (k - 1) * d + 1, in);
    while (a < 0) {
      a += d;
    }
    w[size_t(i)] = {a, b, d, 0};
  }
  return w;
}

std::vector<Win> avg_windows(
    int64_t in,
    int64_t out,
    int64_t k,
    int64_t s,
    int64_t p) {
  std::vector<Win> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const int64_t a = i * s - p;
    const int64_t b = std::min(a + k, in + p);
    w[size_t(i)] = {std::max<int64_t>(a, 0), std::min(b, in), 1, b - a};
  }
  return w;
}

std::vector<Win> adaptive_windows(int64_t in, int64_t out) {
  std::vector<Win> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    // PyTorch's start_index/end_index, in 128 bits: i * in can pass 2^63.
    const int64_t a = int64_t((__int128(i) * in) / out);
    const int64_t b = int64_t(((__int128(i) + 1) * in + out - 1) / out);
    w[size_t(i)] = {a, b, 1, b - a};
  }
  return w;
}

// The fixed windows of a max or average pooling call (kernel_size, stride,
// padding, dilation as the op takes them), checked as PyTorch checks them.
struct Fixed {
  Dims k, s, p, d, out;
};

Fixed fixed_geometry(
    const Planes& g,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode,
    const char* op) {
  const int n = g.n;
  Fixed f;
  f.k = dims_arg(kernel_size, n, 1, op, "kernel_size");
  f.s = stride.empty() ? f.k : dims_arg(stride, n, 1, op, "stride");
  f.p = dims_arg(padding, n, 0, op, "padding");
  f.d = dims_arg(dilation, n, 1, op, "dilation");
  for (size_t i = size_t(3 - n); i < 3; ++i) {
    DITTO_CHECK(
        f.k[i] > 0,
        ValueError,
        op,
        "kernel size should be greater than zero, but got ",
        shape_str(kernel_size));
    DITTO_CHECK(
        f.s[i] > 0,
        ValueError,
        op,
        "stride should be greater than zero, but got ",
        shape_str(stride));
    DITTO_CHECK(
        f.d[i] > 0,
        ValueError,
        op,
        "dilation should be greater than zero, but got ",
        shape_str(dilation));
    DITTO_CHECK(
        f.p[i] >= 0 && f.p[i] <= f.k[i] / 2,
        ValueError,
        op,
        "pad should be at most half of kernel size, but got pad=",
        f.p[i],
        " and kernel_size=",
        f.k[i]);
  }
  for (size_t i = 0; i < 3; ++i) {
    f.out[i] = pooling_output_size(
        g.in[i], f.k[i], f.s[i], f.p[i], f.d[i], ceil_mode, op);
  }
  return f;
}

// Planes per parallel chunk: about 16K window reads each.
int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work_per_plane));
}

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

// The cells a window reads (the first window's: all are alike or
// smaller, for sizing chunks).
int64_t window_cells(const Windows& w) {
  int64_t cells = 1;
  for (const auto& v : w) {
    cells *=
        v.empty() ? 1 : (v[0].end - v[0].start + v[0].step - 1) / v[0].step;
  }
  return std::max<int64_t>(1, cells);
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

// Every index of ix (contiguous int64) in [0, size): otherwise IndexError
// naming op and the first bad index in index order, whatever the thread
// count, with PyTorch's words for an index outside its plane.
void check_plane_indices(const Tensor& ix, int64_t size, const char* op) {
  const int64_t* xp = ix.data_ptr<int64_t>();
  std::atomic<int64_t> first_bad{INT64_MAX};
  parallel_for(0, ix.numel(), 65536, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (xp[i] < 0 || xp[i] >= size) {
        int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  const int64_t bad = first_bad.load();
  DITTO_CHECK(
      bad == INT64_MAX,
      IndexError,
      op,
      "Found an invalid max index: ",
      bad == INT64_MAX ? 0 : xp[bad],
      " (a plane has ",
      size,
      " elements)");
}

// The gradient of a max pooling over n dims: grad_out added into zeros of
// input_sizes at indices, under op's name.
Tensor max_backward(
    const char* op,
    int n,
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes) {
  detail::OpScope scope(op, {grad_out, indices});
  check_floating(grad_out, op);
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64 &&
          indices.sizes() == grad_out.sizes() &&
          input_sizes.size() >= size_t(n) &&
          grad_out.dim() == int64_t(input_sizes.size()),
      ValueError,
      op,
      "indices (int64, the shape of grad_out ",
      shape_str(grad_out.sizes()),
      ") and input sizes ",
      shape_str(input_sizes),
      " do not match");
  Dims in{1, 1, 1}, out{1, 1, 1};
  for (int i = 0; i < n; ++i) {
    in[size_t(3 - n + i)] = input_sizes[input_sizes.size() - size_t(n - i)];
    out[size_t(3 - n + i)] = grad_out.size(grad_out.dim() - n + i);
  }
  const int64_t isize = volume(in, op), osize = volume(out, op);
  const int64_t planes = osize == 0 ? 0 : grad_out.numel() / osize;
  Tensor gi = zeros(input_sizes, grad_out.dtype(), grad_out.device());
  const Tensor go = grad_out.contiguous();
  const Tensor ix = indices.contiguous();
  if (!gi.is_cpu()) {
    // The serial loop per plane (deterministic), else atomic additions.
    vulkan::max_pool2d_backward(
        {planes, in[1], in[2], out[1], out[2]},
        gi,
        ix,
        go,
        are_deterministic_algorithms_enabled(),
        op);
    return scope.done(gi);
  }
  check_plane_indices(ix, isize, op);
  const int64_t* xp = ix.data_ptr<int64_t>();
  dispatch_dtype(gi.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* gp = go.data_ptr<T>();
      T* dp = gi.data_ptr<T>();
      detail::plane_scatter(
          are_deterministic_algorithms_enabled(),
          planes,
          osize,
          1,
          dp,
          isize,
          [&](int64_t p, int64_t k0, int64_t k1, auto add) {
            for (int64_t k = p * osize + k0; k < p * osize + k1; ++k) {
              add(xp[k], gp[k]);
            }
          });
    }
  });
  return scope.done(gi);
}

// The public backward that max pooling over n dims records.
const char* max_backward_name(int n) {
  return n == 3 ? "max_pool3d_backward" : "max_pool2d_backward";
}

// Max pooling of x over windows w: the output and indices, with the
// backward of max_backward.
std::pair<Tensor, Tensor> max_with_indices(
    const char* op,
    detail::OpScope& scope,
    const Tensor& x,
    const Planes& g,
    const Windows& w,
    const std::optional<vulkan::PoolGeom>& device,
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
    vulkan::max_pool2d(device.value(), out, idx, in, op);
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
  const vulkan::PoolGeom device{
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

// Note [Fractional windows]
// Fractional max pooling (Graham, 2014) as PyTorch 1.13's CPU kernel: each
// plane (sample, channel) has n random samples u in [0, 1), drawn as
// rand(N, C, n) in the input's dtype from the default generator unless
// given (PyTorch's _random_samples), one per pooled dim: (W, H) for two
// dims, (T, H, W) for three, as PyTorch's kernels read them.
// Along a dim of In cells pooled to Out windows of k cells, window i starts
// at int((i + u) a) - int(u a) with a = (In - k) / (Out - 1), computed in
// the input's dtype, and the last starts at In - k. Each window's max is
// max pooling's (first of equal maxima, NaN wins), so the gradient is
// max_pool2d_backward's / max_pool3d_backward's: windows may overlap, and
// each plane's gradient is added in output order by one thread in the
// deterministic mode.
template <typename T>
std::vector<Win> fractional_windows(T u, int64_t in, int64_t out, int64_t k) {
  std::vector<Win> w(static_cast<size_t>(out));
  if (out > 1) {
    const T alpha = T(in - k) / T(out - 1);
    for (int64_t i = 0; i + 1 < out; ++i) {
      const int64_t a = int64_t((T(i) + u) * alpha) - int64_t(u * alpha);
      w[size_t(i)] = {a, a + k, 1, k};
    }
  }
  if (out > 0) {
    w[size_t(out - 1)] = {in - k, in, 1, k};
  }
  return w;
}

std::pair<Tensor, Tensor> fractional_max_nd(
    const char* op,
    int n,
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size,
    const std::vector<double>& output_ratio,
    const Tensor& random_samples) {
  detail::OpScope scope(op, {x, random_samples});
  const Planes g = pool_planes(x, n, op);
  const Dims k = dims_arg(kernel_size, n, 1, op, "kernel_size");
  Dims out{1, 1, 1};
  if (!output_size.empty()) {
    out = dims_arg(output_size, n, 1, op, "output_size");
  } else {
    DITTO_CHECK(
        !output_ratio.empty(),
        ValueError,
        op,
        "requires specifying either an output_size or an output_ratio");
    DITTO_CHECK(
        output_ratio.size() == 1 || output_ratio.size() == size_t(n),
        ValueError,
        op,
        "output_ratio must have 1 or ",
        n,
        " values, got ",
        output_ratio.size());
    for (int i = 0; i < n; ++i) {
      const double r = output_ratio[output_ratio.size() == 1 ? 0 : size_t(i)];
      const int64_t in = g.in[size_t(3 - n + i)];
      DITTO_CHECK(
          r > 0 && r < 1,
          ValueError,
          op,
          "output_ratio must be between 0 and 1, got ",
          r);
      // Python's int(size * ratio).
      out[size_t(3 - n + i)] = int64_t(double(in) * r);
    }
  }
  static const char* kNames[] = {"time", "height", "width"};
  for (int i = 3 - n; i < 3; ++i) {
    DITTO_CHECK(
        k[size_t(i)] > 0,
        ValueError,
        op,
        "kernel_size must be positive, got ",
        shape_str(kernel_size));
    DITTO_CHECK(
        out[size_t(i)] >= 0,
        ValueError,
        op,
        "output_size must not be negative, got ",
        shape_str(output_size));
    // A window of k cells at each of Out starts within In cells.
    DITTO_CHECK(
        k[size_t(i)] <= g.in[size_t(i)] &&
            out[size_t(i)] <= g.in[size_t(i)] - k[size_t(i)] + 1,
        ValueError,
        op,
        "pool ",
        kNames[i],
        " ",
        k[size_t(i)],
        " too large relative to input ",
        kNames[i],
        " ",
        g.in[size_t(i)],
        " for output size ",
        out[size_t(i)]);
  }
  const int64_t batch = x.dim() == n + 1 ? 1 : x.size(0);
  const int64_t channels = x.size(x.dim() - n - 1);
  const Shape sample_sizes{batch, channels, n};
  Tensor u = random_samples;
  if (u.defined()) {
    DITTO_CHECK(
        u.dtype() == x.dtype() && u.sizes() == sample_sizes,
        ValueError,
        op,
        "_random_samples must be ",
        shape_str(sample_sizes),
        " of the input's dtype ",
        x.dtype(),
        ", got ",
        shape_str(u.sizes()),
        " ",
        u.dtype());
    u = u.contiguous();
  } else {
    u = rand(sample_sizes, x.dtype());
  }
  const Shape sizes = pooled_sizes(x.sizes(), n, out);
  checked_numel(sizes, op);
  Tensor result = detail::new_tensor(sizes, x.dtype());
  Tensor idx = detail::new_tensor(sizes, kInt64);
  const Tensor in = x.contiguous();
  const int64_t osize = volume(out, op), isize = volume(g.in, op);
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* up = u.data_ptr<T>();
      for (int64_t i = 0; i < u.numel(); ++i) {
        DITTO_CHECK(
            up[i] >= T(0) && up[i] < T(1),
            ValueError,
            op,
            "_random_samples must lie in [0, 1), got ",
            double(up[i]));
      }
      const T* ip = in.data_ptr<T>();
      T* opp = result.data_ptr<T>();
      int64_t* xp = idx.data_ptr<int64_t>();
      parallel_for(
          0,
          g.planes,
          plane_grain(osize * volume(k, op)),
          [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
              Windows w;
              for (int i = 0; i < 3; ++i) {
                w[size_t(i)] = i < 3 - n
                    ? adaptive_windows(1, 1)
                    : fractional_windows(
                          up[p * n +
                             (n == 2 ? 2 - i : i)], // (W, H) or (T, H, W)
                          g.in[size_t(i)],
                          out[size_t(i)],
                          k[size_t(i)]);
              }
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
  scope.done(
      {result, idx},
      [n, in_sizes = x.sizes(), si = scope.save(idx)](
          const autograd::GradList& go) {
        return autograd::GradList{
            max_backward(max_backward_name(n), n, go[0], si.unpack(), in_sizes),
            Tensor()};
      });
  return {result, idx};
}

// Max unpooling over n dims.
Tensor max_unpool_nd(
    const char* op,
    int n,
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntList& output_size) {
  detail::OpScope scope(op, {x, indices});
  const Planes g = pool_planes(x, n, op);
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64,
      TypeError,
      op,
      "elements in indices should be type int64, got ",
      indices.defined() ? dtype_name(indices.dtype()) : "an undefined tensor");
  DITTO_CHECK(
      indices.sizes() == x.sizes(),
      ValueError,
      op,
      "expected indices of the input's shape ",
      shape_str(x.sizes()),
      ", got ",
      shape_str(indices.sizes()));
  const Dims k = dims_arg(kernel_size, n, 1, op, "kernel_size");
  const Dims s = stride.empty() ? k : dims_arg(stride, n, 1, op, "stride");
  const Dims p = dims_arg(padding, n, 0, op, "padding");
  Dims out{1, 1, 1};
  for (size_t i = size_t(3 - n); i < 3; ++i) {
    DITTO_CHECK(
        k[i] > 0 && s[i] > 0 && p[i] >= 0,
        ValueError,
        op,
        "kernel size and stride must be greater than zero and padding at "
        "least zero, got kernel_size=",
        shape_str(kernel_size),
        ", stride=",
        shape_str(stride),
        ", padding=",
        shape_str(padding));
    out[i] = checked_add(
                 checked_mul(g.in[i] - 1, s[i], op, "the unpooled size"),
                 k[i],
                 op,
                 "the unpooled size") -
        checked_mul(2, p[i], op, "the padding");
  }
  if (!output_size.empty()) {
    // PyTorch's _unpool_output_size: the last n sizes given (n or n + 2),
    // each strictly within stride of the default.
    DITTO_CHECK(
        int(output_size.size()) == n || int(output_size.size()) == n + 2,
        ValueError,
        op,
        "output_size should be a sequence containing ",
        n,
        " or ",
        n + 2,
        " elements, but it has a length of ",
        output_size.size());
    for (int i = 0; i < n; ++i) {
      const int64_t want = output_size[output_size.size() - size_t(n - i)];
      const size_t d = size_t(3 - n + i);
      DITTO_CHECK(
          want > out[d] - s[d] && want < out[d] + s[d],
          ValueError,
          op,
          "invalid output_size ",
          shape_str(output_size),
          " (dim ",
          i,
          " must be between ",
          out[d] - s[d],
          " and ",
          out[d] + s[d],
          ")");
      out[d] = want;
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    DITTO_CHECK(
        out[i] > 0,
        ValueError,
        op,
        "the unpooled size is not positive: kernel_size=",
        shape_str(kernel_size),
        ", stride=",
        shape_str(stride),
        ", padding=",
        shape_str(padding),
        " on an input of sizes ",
        shape_str(x.sizes()));
  }
  const Shape out_sizes = pooled_sizes(x.sizes(), n, out);
  checked_numel(out_sizes, op);
  const int64_t osize = volume(out, op), isize = volume(g.in, op);
  const Tensor ix = indices.contiguous();
  // Every index checked before the output exists: PyTorch's message.
  check_plane_indices(ix, osize, op);
  const Tensor in = x.contiguous();
  Tensor y = zeros(out_sizes, x.dtype());
  const int64_t* xp = ix.data_ptr<int64_t>();
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* yp = y.data_ptr<T>();
      parallel_for(
          0, g.planes, plane_grain(isize), [&](int64_t p0, int64_t p1) {
            for (int64_t pl = p0; pl < p1; ++pl) {
              T* plane = yp + pl * osize;
              for (int64_t i = pl * isize; i < (pl + 1) * isize; ++i) {
                plane[xp[i]] = ip[i];
              }
            }
          });
    }
  });
  return scope.done(
      y,
      [planes = g.planes,
       isize,
       osize,
       in_sizes = x.sizes(),
       si = scope.save(ix)](const autograd::GradList& gr) {
        // The gradient at each input element: grad_out at its index.
        const Tensor go = gr[0].contiguous();
        const Tensor idx = si.unpack();
        Tensor gi = detail::new_tensor(in_sizes, go.dtype());
        const int64_t* xp = idx.data_ptr<int64_t>();
        dispatch_dtype(go.dtype(), "max_unpool backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* gp = go.data_ptr<T>();
            T* dp = gi.data_ptr<T>();
            parallel_for(
                0, planes, plane_grain(isize), [&](int64_t p0, int64_t p1) {
                  for (int64_t pl = p0; pl < p1; ++pl) {
                    for (int64_t i = pl * isize; i < (pl + 1) * isize; ++i) {
                      dp[i] = gp[pl * osize + xp[i]];
                    }
                  }
                });
          }
        });
        return autograd::GradList{gi, Tensor()};
      });
}

} // namespace

std::pair<Tensor, Tensor> max_pool1d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return max_pool_nd(
      "max_pool1d", 1, x, kernel_size, stride, padding, dilation, ceil_mode);
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return max_pool_nd(
      "max_pool2d", 2, x, kernel_size, stride, padding, dilation, ceil_mode);
}

std::pair<Tensor, Tensor> max_pool3d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  return max_pool_nd(
      "max_pool3d", 3, x, kernel_size, stride, padding, dilation, ceil_mode);
}

// The plain forms are composite: the with_indices op records.
Tensor max_pool1d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  detail::OpScope scope("max_pool1d", {x}, detail::OpScope::kComposite);
  return scope.done(max_pool1d_with_indices(
                        x, kernel_size, stride, padding, dilation, ceil_mode)
                        .first);
}

Tensor max_pool2d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  detail::OpScope scope("max_pool2d", {x}, detail::OpScope::kComposite);
  return scope.done(max_pool2d_with_indices(
                        x, kernel_size, stride, padding, dilation, ceil_mode)
                        .first);
}

Tensor max_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool ceil_mode) {
  detail::OpScope scope("max_pool3d", {x}, detail::OpScope::kComposite);
  return scope.done(max_pool3d_with_indices(
                        x, kernel_size, stride, padding, dilation, ceil_mode)
                        .first);
}

Tensor max_pool2d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes) {
  return max_backward("max_pool2d_backward", 2, grad_out, indices, input_sizes);
}

Tensor max_pool3d_backward(
    const Tensor& grad_out,
    const Tensor& indices,
    const Shape& input_sizes) {
  return max_backward("max_pool3d_backward", 3, grad_out, indices, input_sizes);
}

Tensor avg_pool1d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad) {
  return avg_pool_nd(
      "avg_pool1d",
      1,
      x,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      std::nullopt);
}

Tensor avg_pool2d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    return avg_pool2d(
               detail::upcast(x),
               kernel_size,
               stride,
               padding,
               ceil_mode,
               count_include_pad,
               divisor_override)
        .to(x.dtype());
  }
  return avg_pool_nd(
      "avg_pool2d",
      2,
      x,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      divisor_override);
}

Tensor avg_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  return avg_pool_nd(
      "avg_pool3d",
      3,
      x,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      divisor_override);
}

Tensor adaptive_avg_pool1d(const Tensor& x, const IntList& output_size) {
  return adaptive_avg_nd("adaptive_avg_pool1d", 1, x, output_size);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size) {
  return adaptive_avg_nd("adaptive_avg_pool2d", 2, x, output_size);
}

Tensor adaptive_avg_pool3d(const Tensor& x, const IntList& output_size) {
  return adaptive_avg_nd("adaptive_avg_pool3d", 3, x, output_size);
}

std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(
    const Tensor& x,
    const IntList& output_size) {
  return adaptive_max_nd("adaptive_max_pool1d", 1, x, output_size);
}

std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& x,
    const IntList& output_size) {
  return adaptive_max_nd("adaptive_max_pool2d", 2, x, output_size);
}

std::pair<Tensor, Tensor> adaptive_max_pool3d_with_indices(
    const Tensor& x,
    const IntList& output_size) {
  return adaptive_max_nd("adaptive_max_pool3d", 3, x, output_size);
}

Tensor adaptive_max_pool1d(const Tensor& x, const IntList& output_size) {
  detail::OpScope scope(
      "adaptive_max_pool1d", {x}, detail::OpScope::kComposite);
  return scope.done(adaptive_max_pool1d_with_indices(x, output_size).first);
}

Tensor adaptive_max_pool2d(const Tensor& x, const IntList& output_size) {
  detail::OpScope scope(
      "adaptive_max_pool2d", {x}, detail::OpScope::kComposite);
  return scope.done(adaptive_max_pool2d_with_indices(x, output_size).first);
}

Tensor adaptive_max_pool3d(const Tensor& x, const IntList& output_size) {
  detail::OpScope scope(
      "adaptive_max_pool3d", {x}, detail::OpScope::kComposite);
  return scope.done(adaptive_max_pool3d_with_indices(x, output_size).first);
}

Tensor max_unpool1d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntList& output_size) {
  return max_unpool_nd(
      "max_unpool1d", 1, x, indices, kernel_size, stride, padding, output_size);
}

Tensor max_unpool2d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntList& output_size) {
  return max_unpool_nd(
      "max_unpool2d", 2, x, indices, kernel_size, stride, padding, output_size);
}

Tensor max_unpool3d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntList& output_size) {
  return max_unpool_nd(
      "max_unpool3d", 3, x, indices, kernel_size, stride, padding, output_size);
}

std::pair<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size,
    const std::vector<double>& output_ratio,
    const Tensor& random_samples) {
  return fractional_max_nd(
      "fractional_max_pool2d",
      2,
      x,
      kernel_size,
      output_size,
      output_ratio,
      random_samples);
}

std::pair<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size,
    const std::vector<double>& output_ratio,
    const Tensor& random_samples) {
  return fractional_max_nd(
      "fractional_max_pool3d",
      3,
      x,
      kernel_size,
      output_size,
      output_ratio,
      random_samples);
}

Tensor fractional_max_pool2d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size,
    const std::vector<double>& output_ratio,
    const Tensor& random_samples) {
  return fractional_max_pool2d_with_indices(
             x, kernel_size, output_size, output_ratio, random_samples)
      .first;
}

Tensor fractional_max_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size,
    const std::vector<double>& output_ratio,
    const Tensor& random_samples) {
  return fractional_max_pool3d_with_indices(
             x, kernel_size, output_size, output_ratio, random_samples)
      .first;
}

} // namespace ditto::nn::functional
