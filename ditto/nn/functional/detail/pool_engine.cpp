// The pooling engine's shared pieces (detail/pool_engine.h): argument and
// geometry checks as PyTorch's, windows, and the max backward.

#include "ditto/nn/functional/detail/pool_engine.h"

#include <algorithm>
#include <atomic>

#include "ditto/kernels/device_kernels.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/factories.h"

namespace ditto::nn::functional::pool {

using detail::check_floating;

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
    kernels::device_kernels(gi, "max_pool2d_backward")
        .max_pool2d_backward(
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

} // namespace ditto::nn::functional::pool
