// upsample over one, two or three dims (nearest, nearest-exact, linear,
// bicubic, antialiased linear and cubic): forward, and a backward through
// detail::plane_scatter (Note [Plane scatters]). interpolate, its PyTorch
// front end, is in interpolate.cpp.
//
// Note [PyTorch's interpolation bits]: PyTorch 1.13 builds its
// interpolation kernels once per CPU capability, and GCC contracts their
// multiply-adds into FMA in the AVX2 build (the one nearly every x86 CPU
// runs); a CPU without AVX2 gets other bits. ditto computes the AVX2
// build's arithmetic on every CPU, writing each contracted operation as
// std::fma: the forward sums t0 * w0 + t1 * w1 as fma(t0, w0, t1 * w1),
// then fma(t, w, sum) for each further cell; the linear backward
// adds fma(weights, grad, cell). The bicubic backward is built without
// FMA in PyTorch (another source file), and is computed without here. The
// positions are double expressions rounded to float, as PyTorch's are.
// tests/nn/interp_golden_test.cpp checks every mode against PyTorch's AVX2
// bits.

#include "ditto/nn/functional/vision.h"

#include <array>
#include <cmath>
#include <optional>

#include "ditto/core/error.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/functional/pooling.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/factories.h"

namespace ditto::nn::functional {
namespace {

// The dims of one call as (D, H, W), the ones the op lacks set to 1.
using Dims = std::array<int64_t, 3>;

enum class Kind { kNearest, kNearestExact, kLinear, kCubic };

Kind kind_of(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Nearest:
      return Kind::kNearest;
    case InterpolateMode::NearestExact:
      return Kind::kNearestExact;
    case InterpolateMode::Bicubic:
      return Kind::kCubic;
    default:
      return Kind::kLinear;
  }
}

// The cells and weights each output index of one dim reads: count[o]
// cells idx[o * k + j] with weights w[o * k + j].
template <typename T>
struct Taps {
  int64_t k = 1;
  // The antialiased sums start with a product (t0 * w0, then one fma per
  // cell); the others with fma(t0, w0, t1 * w1).
  bool chain = false;
  std::vector<int64_t> idx;
  std::vector<T> w;
  std::vector<int64_t> count;

  Taps(int64_t out, int64_t taps)
      : k(taps),
        idx(size_t(out * taps), 0),
        w(size_t(out * taps), T(0)),
        count(size_t(out), taps) {}
};

// PyTorch's area_pixel_compute_scale (in T).
template <typename T>
T area_scale(int64_t in, int64_t out, bool align, std::optional<double> s) {
  if (align) {
    return out > 1 ? T(in - 1) / T(out - 1) : T(0);
  }
  return s && *s > 0 ? T(1.0 / *s) : T(in) / T(out);
}

// PyTorch's area_pixel_compute_source_index in double (its CPU
// accumulation type for float, which the linear modes use), clamped at 0.
inline double linear_source(double scale, int64_t o, bool align) {
  if (align) {
    return scale * double(o);
  }
  const double src = scale * (double(o) + 0.5) - 0.5;
  return src < 0 ? 0.0 : src;
}

// The cubic modes' cell and fraction: from a double position for the
// forward (as the linear modes), in T for PyTorch's bicubic backward
// (another source file, without FMA).
template <typename T>
std::pair<int64_t, T> cubic_source(T scale, int64_t o, bool align, bool fwd) {
  if (fwd) {
    // The index from the position rounded to float (PyTorch's floorf of a
    // double), the fraction from the double: it can be slightly negative.
    const double real = align ? double(scale) * double(o)
                              : double(scale) * (double(o) + 0.5) - 0.5;
    const int64_t i = int64_t(std::floor(float(real)));
    return {i, T(real - double(i))};
  }
  const T real = align ? scale * T(o) : scale * (T(o) + T(0.5)) - T(0.5);
  const int64_t i = int64_t(std::floor(real));
  return {i, real - T(i)};
}

// Keys' cubic convolution weights (a = A), as PyTorch's
// cubic_convolution1/2: ((a + 2) x - (a + 3)) x x + 1 and
// ((a x - 5a) x + 8a) x - 4a, with the multiply-adds fused where PyTorch's
// AVX2 build fuses them (fused: the first of the first, the first two of
// the second, found against its weights) or none.
template <typename T>
T cubic1(T x, T a, bool fused) {
  if (fused) {
    return std::fma(a + T(2), x, -(a + T(3))) * x * x + T(1);
  }
  return ((a + T(2)) * x - (a + T(3))) * x * x + T(1);
}

template <typename T>
T cubic2(T x, T a, bool fused) {
  if (fused) {
    return std::fma(std::fma(a, x, -(T(5) * a)), x, T(8) * a) * x - T(4) * a;
  }
  return ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a;
}

// The four weights of cubic interpolation at fraction t.
template <typename T>
std::array<T, 4> cubic_weights(T t, bool fused) {
  const T a = T(-0.75);
  const T x2 = T(1) - t;
  return {
      cubic2(T(t + T(1)), a, fused),
      cubic1(t, a, fused),
      cubic1(x2, a, fused),
      cubic2(T(x2 + T(1)), a, fused)};
}

// The taps of one dim. fused picks the cubic weights of PyTorch's forward
// (AVX2 build) or of its bicubic backward.
template <typename T>
Taps<T> dim_taps(
    Kind kind,
    int64_t in,
    int64_t out,
    bool align,
    std::optional<double> scale,
    bool fused) {
  if (kind == Kind::kNearest || kind == Kind::kNearestExact) {
    Taps<T> t(out, 1);
    const float s =
        scale && *scale > 0 ? float(1.0 / *scale) : float(in) / float(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t src;
      if (kind == Kind::kNearestExact) {
        src = int64_t(std::floor(float((double(o) + 0.5) * double(s))));
      } else if (out == in) {
        src = o; // PyTorch's nearest_idx special cases
      } else if (out == 2 * in) {
        src = o >> 1;
      } else {
        src = int64_t(std::floor(float(o) * s));
      }
      t.idx[size_t(o)] = std::min(src, in - 1);
      t.w[size_t(o)] = T(1);
    }
    return t;
  }
  const T s = area_scale<T>(in, out, align, scale);
  if (kind == Kind::kLinear) {
    Taps<T> t(out, 2);
    for (int64_t o = 0; o < out; ++o) {
      // PyTorch's compute_source_index_and_lambda (a copy when the sizes
      // are equal).
      const double real = out == in ? double(o) : linear_source(s, o, align);
      const int64_t i0 = int64_t(real);
      const T l1 = out == in ? T(0) : T(real - double(i0));
      t.idx[size_t(2 * o)] = i0;
      t.idx[size_t(2 * o + 1)] = out == in ? i0 : i0 + (i0 < in - 1 ? 1 : 0);
      t.w[size_t(2 * o)] = T(1) - l1;
      t.w[size_t(2 * o + 1)] = l1;
    }
    return t;
  }
  Taps<T> t(out, 4);
  for (int64_t o = 0; o < out; ++o) {
    const auto [i, frac] = cubic_source(s, o, align, fused);
    const std::array<T, 4> c = cubic_weights(frac, fused);
    for (int64_t j = 0; j < 4; ++j) {
      t.idx[size_t(4 * o + j)] = std::clamp<int64_t>(i - 1 + j, 0, in - 1);
      t.w[size_t(4 * o + j)] = c[size_t(j)];
    }
  }
  return t;
}

// The antialiased taps of one dim (PyTorch's _compute_indices_min_size_
// weights_aa, from Pillow): a triangle (linear) or Keys' cubic with
// a = -0.5, widened by the scale when downsampling, normalized to sum 1.
template <typename T>
Taps<T> aa_taps(
    Kind kind,
    int64_t in,
    int64_t out,
    bool align,
    std::optional<double> scale_arg) {
  const bool cubic = kind == Kind::kCubic;
  const int64_t interp = cubic ? 4 : 2;
  const T scale = area_scale<T>(in, out, align, scale_arg);
  const T support =
      T(scale >= T(1) ? (double(interp) * 0.5) * double(scale)
                      : double(interp) * 0.5);
  const T invscale = T(scale >= T(1) ? 1.0 / double(scale) : 1.0);
  // Every window fits: xsize <= 2 * support + 2.
  const int64_t k = int64_t(std::ceil(double(support))) * 2 + 2;
  Taps<T> t(out, k);
  t.chain = true;
  auto filter = [cubic](T x) -> T {
    if (x < T(0)) {
      x = -x;
    }
    if (!cubic) {
      return x < T(1) ? T(1.0 - double(x)) : T(0);
    }
    const T a = T(-0.5);
    if (x < T(1)) {
      return cubic1(x, a, true);
    }
    return x < T(2) ? cubic2(x, a, true) : T(0);
  };
  for (int64_t o = 0; o < out; ++o) {
    const T center = T(double(scale) * (double(o) + 0.5));
    const int64_t xmin =
        std::max<int64_t>(int64_t(double(center - support) + 0.5), 0);
    const int64_t xsize =
        std::min<int64_t>(int64_t(double(center + support) + 0.5), in) - xmin;
    T total = 0;
    for (int64_t j = 0; j < xsize; ++j) {
      const T w = filter(
          T((double(T(float(j + xmin)) - center) + 0.5) * double(invscale)));
      t.w[size_t(o * k + j)] = w;
      t.idx[size_t(o * k + j)] = xmin + j;
      total += w;
    }
    for (int64_t j = 0; j < xsize; ++j) {
      if (total != T(0)) {
        t.w[size_t(o * k + j)] /= total;
      }
    }
    t.count[size_t(o)] = xsize;
  }
  return t;
}

// One call's geometry: planes of in (contiguous), resized to out.
struct Geom {
  int n = 0;
  int64_t planes = 0;
  Dims in{1, 1, 1}, out{1, 1, 1};
};

// The op PyTorch names for a mode over n dims.
const char* op_name(Kind kind, int n, bool antialias) {
  if (antialias) {
    return kind == Kind::kCubic ? "upsample_bicubic2d_aa"
                                : "upsample_bilinear2d_aa";
  }
  switch (kind) {
    case Kind::kNearest:
    case Kind::kNearestExact:
      return n == 1 ? "upsample_nearest1d"
          : n == 2  ? "upsample_nearest2d"
                    : "upsample_nearest3d";
    case Kind::kLinear:
      return n == 1 ? "upsample_linear1d"
          : n == 2  ? "upsample_bilinear2d"
                    : "upsample_trilinear3d";
    case Kind::kCubic:
      return "upsample_bicubic2d";
  }
  return "upsample";
}

// The taps of the three dims of g (the dims g lacks: one cell, weight 1).
template <typename T>
std::array<Taps<T>, 3> all_taps(
    const Geom& g,
    Kind kind,
    bool align,
    const std::vector<std::optional<double>>& scales,
    bool antialias,
    bool fused) {
  std::array<Taps<T>, 3> t = {Taps<T>(1, 1), Taps<T>(1, 1), Taps<T>(1, 1)};
  for (int i = 0; i < 3; ++i) {
    t[size_t(i)].w[0] = T(1);
  }
  for (int i = 0; i < g.n; ++i) {
    const size_t d = size_t(3 - g.n + i);
    const std::optional<double> s =
        scales.empty() ? std::nullopt : scales[size_t(i)];
    t[d] = antialias ? aa_taps<T>(kind, g.in[d], g.out[d], align, s)
                     : dim_taps<T>(kind, g.in[d], g.out[d], align, s, fused);
  }
  return t;
}

// The kernel table's view of taps (InterpDim, kernel_table.h).
template <typename T>
kernels::InterpDim interp_dim(const Taps<T>& t, int64_t in) {
  return {
      in,
      int64_t(t.count.size()),
      t.k,
      t.idx.data(),
      t.w.data(),
      t.count.data(),
      t.chain};
}

// Identity taps of a dim of n (each index reads its own cell, weight 1).
template <typename T>
Taps<T> identity_taps(int64_t n) {
  Taps<T> t(n, 1);
  for (int64_t o = 0; o < n; ++o) {
    t.idx[size_t(o)] = o;
    t.w[size_t(o)] = T(1);
  }
  return t;
}

template <typename T>
constexpr int kind_slot() {
  return std::is_same_v<T, float> ? 0 : 1;
}

// Resamples planes [p0, p1) of src (sizes in) with the taps t.
template <typename T>
void resample(
    const std::array<Taps<T>, 3>& t,
    const Dims& in,
    const T* src,
    T* dst,
    int64_t planes) {
  const kernels::InterpPlan plan{
      {interp_dim(t[0], in[0]),
       interp_dim(t[1], in[1]),
       interp_dim(t[2], in[2])}};
  const int64_t osize = plan.dim[0].out * plan.dim[1].out * plan.dim[2].out;
  const auto fn = kernels::kernel_table().interp_forward[kind_slot<T>()];
  parallel_for(
      0,
      planes,
      std::max<int64_t>(1, 16384 / std::max<int64_t>(1, osize)),
      [&](int64_t p0, int64_t p1) { fn(plan, src, dst, p0, p1); });
}

// The separable passes of the antialiased modes: the last dim first, then
// the one before (PyTorch's order), through a buffer of T.
template <typename T>
void forward_aa(
    const Geom& g,
    const std::array<Taps<T>, 3>& t,
    const T* ip,
    T* op) {
  const int64_t h = g.in[1], ow = g.out[2];
  std::vector<T> mid(size_t(g.planes * h * ow));
  resample<T>(
      {identity_taps<T>(1), identity_taps<T>(h), t[2]},
      {1, h, g.in[2]},
      ip,
      mid.data(),
      g.planes);
  resample<T>(
      {identity_taps<T>(1), t[1], identity_taps<T>(ow)},
      {1, h, ow},
      mid.data(),
      op,
      g.planes);
}

} // namespace

Tensor upsample(
    const Tensor& x,
    const IntList& output_size,
    InterpolateMode mode,
    bool align_corners,
    const std::vector<std::optional<double>>& scales,
    bool antialias) {
  const Kind kind = kind_of(mode);
  const int n = int(output_size.size());
  const char* op = op_name(kind, n, antialias);
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    return upsample(
               detail::upcast(x),
               output_size,
               mode,
               align_corners,
               scales,
               antialias)
        .to(x.dtype());
  }
  detail::OpScope scope(op, {x});
  detail::check_floating(x, op);
  DITTO_CHECK(
      n >= 1 && n <= 3 && x.dim() == n + 2 && mode != InterpolateMode::Area,
      ValueError,
      op,
      "expected a ",
      n + 2,
      "-D input (N, C and the ",
      n,
      " resized dims) and 1 to 3 output sizes, got input sizes ",
      shape_str(x.sizes()),
      " and output size ",
      shape_str(output_size));
  const int want = mode == InterpolateMode::Linear ? 1
      : mode == InterpolateMode::Bilinear || mode == InterpolateMode::Bicubic
      ? 2
      : mode == InterpolateMode::Trilinear ? 3
                                           : n;
  DITTO_CHECK(
      want == n,
      ValueError,
      op,
      "mode ",
      interpolate_mode_name(mode),
      " resizes ",
      want,
      " dims, got ",
      n,
      " output sizes");
  DITTO_CHECK(
      !align_corners || kind == Kind::kLinear || kind == Kind::kCubic,
      ValueError,
      op,
      "align_corners option can only be set with the interpolating modes: "
      "linear | bilinear | bicubic | trilinear");
  DITTO_CHECK(
      !antialias || (n == 2 && (kind == Kind::kLinear || kind == Kind::kCubic)),
      ValueError,
      op,
      "anti-alias option is only supported for bilinear and bicubic modes");
  DITTO_CHECK(
      scales.empty() || int(scales.size()) == n,
      ValueError,
      op,
      "expected ",
      n,
      " scales, got ",
      scales.size());
  Geom g;
  g.n = n;
  for (int i = 0; i < n; ++i) {
    const size_t d = size_t(3 - n + i);
    g.in[d] = x.size(2 + i);
    g.out[d] = output_size[size_t(i)];
    DITTO_CHECK(
        g.in[d] > 0 && g.out[d] > 0,
        ValueError,
        op,
        "Input and output sizes should be greater than 0, but got input ",
        shape_str(x.sizes()),
        " and output ",
        shape_str(output_size));
  }
  g.planes = x.size(0) * x.size(1);
  Shape out_sizes = {x.size(0), x.size(1)};
  out_sizes.insert(out_sizes.end(), output_size.begin(), output_size.end());
  checked_numel(out_sizes, op);
  Tensor out = detail::new_tensor(out_sizes, x.dtype());
  const Tensor in = x.contiguous();
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const auto t =
          all_taps<T>(g, kind, align_corners, scales, antialias, true);
      if (antialias) {
        forward_aa(g, t, in.data_ptr<T>(), out.data_ptr<T>());
      } else {
        resample(t, g.in, in.data_ptr<T>(), out.data_ptr<T>(), g.planes);
      }
    }
  });
  Shape in_sizes = x.sizes();
  return scope.done(out, [=](const autograd::GradList& gr) {
    Tensor go = gr[0].contiguous();
    Tensor gi = zeros(in_sizes, go.dtype());
    dispatch_dtype(go.dtype(), op, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        // PyTorch's bicubic backward is built without FMA: its weights too.
        const bool cubic_plain = kind == Kind::kCubic && !antialias;
        const auto t = all_taps<T>(
            g, kind, align_corners, scales, antialias, !cubic_plain);
        const T* gp = go.data_ptr<T>();
        const int64_t osize = g.out[0] * g.out[1] * g.out[2];
        const int64_t isize = g.in[0] * g.in[1] * g.in[2];
        const int64_t hw = g.in[1] * g.in[2], w = g.in[2];
        const int64_t taps = t[0].k * t[1].k * t[2].k;
        const bool chains = !cubic_plain && kind != Kind::kNearest &&
            kind != Kind::kNearestExact;
        const kernels::InterpPlan plan{
            {interp_dim(t[0], g.in[0]),
             interp_dim(t[1], g.in[1]),
             interp_dim(t[2], g.in[2])}};
        const auto backward_fn =
            kernels::kernel_table().interp_backward[kind_slot<T>()];
        detail::plane_scatter(
            are_deterministic_algorithms_enabled(),
            g.planes,
            osize,
            taps,
            gi.data_ptr<T>(),
            isize,
            [&](int64_t p, int64_t k0, int64_t k1, auto add) {
              if (chains) {
                // Linear and antialiased: the kernel's fma chains.
                backward_fn(
                    plan, gp + p * osize, add.d, k0, k1, add.kAtomicAdds);
                return;
              }
              for (int64_t k = k0; k < k1; ++k) {
                const int64_t c = k % g.out[2];
                const int64_t b = (k / g.out[2]) % g.out[1];
                const int64_t a = k / (g.out[1] * g.out[2]);
                const T v = gp[p * osize + k];
                const size_t ba = size_t(a * t[0].k), bb = size_t(b * t[1].k),
                             bc = size_t(c * t[2].k);
                if (!cubic_plain) { // nearest
                  add(t[0].idx[ba] * hw + t[1].idx[bb] * w + t[2].idx[bc], v);
                  continue;
                }
                // x taps outer, y inner: (g * wy) * wx, plain adds.
                for (int64_t i = 0; i < t[2].count[size_t(c)]; ++i) {
                  for (int64_t j = 0; j < t[1].count[size_t(b)]; ++j) {
                    add(t[1].idx[bb + size_t(j)] * w + t[2].idx[bc + size_t(i)],
                        v * t[1].w[bb + size_t(j)] * t[2].w[bc + size_t(i)]);
                  }
                }
              }
            });
      }
    });
    return autograd::GradList{gi};
  });
}

Tensor upsample2d(
    const Tensor& x,
    int64_t out_h,
    int64_t out_w,
    InterpolateMode mode,
    bool align_corners,
    std::optional<double> scale_h,
    std::optional<double> scale_w) {
  std::vector<std::optional<double>> scales;
  if (scale_h || scale_w) {
    scales = {scale_h, scale_w};
  }
  return upsample(x, {out_h, out_w}, mode, align_corners, scales);
}

} // namespace ditto::nn::functional
