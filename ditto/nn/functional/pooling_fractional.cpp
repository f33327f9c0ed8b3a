// Fractional max pooling (PyTorch 1.13's CPU kernel and its draws) and max
// unpooling over two and three dims, on the pooling engine of pooling.cpp
// (detail/pool_engine.h).

#include <atomic>
#include <cmath>
#include <limits>

#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/functional/detail/pool_engine.h"
#include "ditto/nn/functional/pooling.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"

namespace ditto::nn::functional {
namespace pool {
namespace {

using detail::check_floating;

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

// Max unpooling's indices: int64, of the input's shape.
void check_unpool_indices(
    const Tensor& x,
    const Tensor& indices,
    const char* op) {
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
}

Tensor unpool_into(
    const char* op,
    const Tensor& x,
    const Tensor& indices,
    const Planes& g,
    int n,
    const Dims& out,
    detail::OpScope& scope);

// Max unpooling over n dims: the size from kernel_size, stride and padding,
// or output_size within stride of it (nn::functional's).
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
  check_unpool_indices(x, indices, op);
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
  return unpool_into(op, x, indices, g, n, out, scope);
}

// Max unpooling to the last n dims' sizes output_size (one value for every
// dim, or one per dim), ATen's.
Tensor max_unpool_sized(
    const char* op,
    int n,
    const Tensor& x,
    const Tensor& indices,
    const IntArg& output_size) {
  detail::OpScope scope(op, {x, indices});
  const Planes g = pool_planes(x, n, op);
  check_unpool_indices(x, indices, op);
  const Dims out = dims_arg(output_size, n, 1, op, "output_size");
  for (size_t i = size_t(3 - n); i < 3; ++i) {
    DITTO_CHECK(
        out[i] > 0,
        ValueError,
        op,
        "output_size must be positive, got ",
        shape_str(output_size));
  }
  return unpool_into(op, x, indices, g, n, out, scope);
}

// Each input element written at its index in its plane of out.
Tensor unpool_into(
    const char* op,
    const Tensor& x,
    const Tensor& indices,
    const Planes& g,
    int n,
    const Dims& out,
    detail::OpScope& scope) {
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
} // namespace pool

using namespace pool;

Tensor max_unpool1d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_size) {
  return max_unpool_nd(
      "max_unpool1d", 1, x, indices, kernel_size, stride, padding, output_size);
}

Tensor max_unpool2d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_size) {
  return max_unpool_nd(
      "max_unpool2d", 2, x, indices, kernel_size, stride, padding, output_size);
}

Tensor max_unpool3d(
    const Tensor& x,
    const Tensor& indices,
    const IntArg& kernel_size,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& output_size) {
  return max_unpool_nd(
      "max_unpool3d", 3, x, indices, kernel_size, stride, padding, output_size);
}

} // namespace ditto::nn::functional

// ATen's max unpooling (composite/pooling.ops.toml): the output size given;
// max_unpool3d's stride and padding are checked, as ATen's (its CUDA
// kernel's), not used.
namespace ditto {

Tensor max_unpool2d(
    const Tensor& self,
    const Tensor& indices,
    const IntArg& output_size) {
  return nn::functional::pool::max_unpool_sized(
      "max_unpool2d", 2, self, indices, output_size);
}

Tensor max_unpool3d(
    const Tensor& self,
    const Tensor& indices,
    const IntArg& output_size,
    const IntArg& stride,
    const IntArg& padding) {
  const char* op = "max_unpool3d";
  DITTO_CHECK(
      stride.size() == 3 && padding.size() == 3,
      ValueError,
      op,
      "There should be exactly three elements (depth, height, width) in "
      "stride and padding, got ",
      shape_str(stride),
      " and ",
      shape_str(padding));
  for (size_t i = 0; i < 3; ++i) {
    DITTO_CHECK(
        stride[i] > 0 && padding[i] >= 0,
        ValueError,
        op,
        "strides should be greater than zero and padding at least zero, "
        "got stride=",
        shape_str(stride),
        ", padding=",
        shape_str(padding));
  }
  return nn::functional::pool::max_unpool_sized(
      op, 3, self, indices, output_size);
}

// ATen's fractional max pooling: output_size given.
std::tuple<Tensor, Tensor> fractional_max_pool2d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& output_size,
    const std::optional<Tensor>& random_samples) {
  return nn::functional::pool::fractional_max_nd(
      "fractional_max_pool2d",
      2,
      self,
      kernel_size,
      output_size,
      {},
      random_samples.value_or(Tensor()));
}

std::tuple<Tensor, Tensor> fractional_max_pool3d(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& output_size,
    const std::optional<Tensor>& random_samples) {
  return nn::functional::pool::fractional_max_nd(
      "fractional_max_pool3d",
      3,
      self,
      kernel_size,
      output_size,
      {},
      random_samples.value_or(Tensor()));
}

} // namespace ditto

namespace ditto::nn::functional {

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
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

std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
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
  return std::get<0>(fractional_max_pool2d_with_indices(
      x, kernel_size, output_size, output_ratio, random_samples));
}

Tensor fractional_max_pool3d(
    const Tensor& x,
    const IntArg& kernel_size,
    const IntList& output_size,
    const std::vector<double>& output_ratio,
    const Tensor& random_samples) {
  return std::get<0>(fractional_max_pool3d_with_indices(
      x, kernel_size, output_size, output_ratio, random_samples));
}

} // namespace ditto::nn::functional
