#include "ditto/ops/nn_ops.h"

#include <atomic>
#include <cmath>
#include <limits>

#include "ditto/ops/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto::detail {

std::pair<int64_t, int64_t> pair_arg(
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

void check_floating(const Tensor& x, const char* op) {
  DITTO_CHECK(x.defined(), ValueError, op, "undefined tensor");
  DITTO_CHECK(
      is_floating(x.dtype()),
      TypeError,
      op,
      "expected a floating tensor, got ",
      x.dtype());
}

void check_pool_input(const Tensor& x, const char* op) {
  check_floating(x, op);
  DITTO_CHECK(
      (x.dim() == 3 || x.dim() == 4) && x.numel() > 0,
      ValueError,
      op,
      "expected a non-empty 3D or 4D (batch mode) tensor, got sizes ",
      shape_str(x.sizes()));
}

} // namespace ditto::detail

namespace ditto {
namespace {

using detail::check_floating;
using detail::pair_arg;

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

} // namespace

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
  }
  return "?";
}

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

Tensor log_softmax(const Tensor& x, int64_t dim) {
  detail::OpScope scope("log_softmax", {x});
  check_floating(x, "log_softmax");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "log_softmax");
  Tensor out;
  if (x.numel() == 0) {
    out = detail::new_tensor(x.sizes(), x.dtype());
  } else {
    Tensor v = x.dim() == 0 ? x.reshape({1}) : x;
    Tensor shifted = sub(v, max(v, d, true).first);
    out = sub(shifted, log(sum(exp(shifted), {d}, true))).reshape(x.sizes());
  }
  return scope.done(
      out, [d, sy = scope.save(out)](const autograd::GradList& g) {
        Tensor y = sy.unpack();
        Tensor gv = y.dim() == 0 ? g[0].reshape({1}) : g[0];
        Tensor yv = y.dim() == 0 ? y.reshape({1}) : y;
        Tensor gx = sub(gv, mul(exp(yv), sum(gv, {d}, true)));
        return autograd::GradList{gx.reshape(y.sizes())};
      });
}

Tensor softmax(const Tensor& x, int64_t dim) {
  detail::OpScope scope("softmax", {x});
  check_floating(x, "softmax");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "softmax");
  Tensor out;
  if (x.numel() == 0) {
    out = detail::new_tensor(x.sizes(), x.dtype());
  } else {
    Tensor v = x.dim() == 0 ? x.reshape({1}) : x;
    Tensor e = exp(sub(v, max(v, d, true).first));
    out = div(e, sum(e, {d}, true)).reshape(x.sizes());
  }
  return scope.done(
      out, [d, sy = scope.save(out)](const autograd::GradList& g) {
        Tensor y = sy.unpack();
        Tensor gv = y.dim() == 0 ? g[0].reshape({1}) : g[0];
        Tensor yv = y.dim() == 0 ? y.reshape({1}) : y;
        Tensor gx = mul(yv, sub(gv, sum(mul(gv, yv), {d}, true)));
        return autograd::GradList{gx.reshape(y.sizes())};
      });
}

namespace {

// input as (N, C, S) and target as (N, S), both contiguous.
struct NllGeom {
  int64_t n, c, s;
};

NllGeom nll_geom(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight) {
  const char* op = "nll_loss";
  check_floating(input, op);
  DITTO_CHECK(target.defined(), ValueError, op, "undefined target");
  DITTO_CHECK(
      input.dim() >= 1,
      ValueError,
      op,
      "input must have at least one dim, got sizes ",
      shape_str(input.sizes()));
  DITTO_CHECK(
      target.dtype() == kInt64,
      TypeError,
      op,
      "expected scalar type Long for the target but found ",
      target.dtype());
  NllGeom g{};
  if (input.dim() == 1) {
    DITTO_CHECK(
        target.dim() == 0,
        ValueError,
        op,
        "for 1D input (C) the target must be 0D, got sizes ",
        shape_str(target.sizes()));
    g = {1, input.size(0), 1};
  } else {
    Shape expected = input.sizes();
    expected.erase(expected.begin() + 1);
    DITTO_CHECK(
        target.sizes() == expected,
        ValueError,
        op,
        "Expected target of sizes ",
        shape_str(expected),
        " for input of sizes ",
        shape_str(input.sizes()),
        ", got ",
        shape_str(target.sizes()));
    g.n = input.size(0);
    g.c = input.size(1);
    g.s = 1;
    for (int64_t k = 2; k < input.dim(); ++k) {
      g.s *= input.size(k);
    }
  }
  if (weight.defined()) {
    DITTO_CHECK(
        weight.dim() == 1 && weight.size(0) == g.c,
        ValueError,
        op,
        "weight tensor should be defined either for all ",
        g.c,
        " classes or no classes but got weight tensor of shape: ",
        shape_str(weight.sizes()));
  }
  return g;
}

} // namespace

Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const Tensor& weight,
    int64_t ignore_index,
    Reduction reduction) {
  detail::OpScope scope("nll_loss", {input, weight});
  const NllGeom g = nll_geom(input, target, weight);
  const Tensor x = input.contiguous();
  const Tensor t = target.contiguous();
  const Tensor w =
      weight.defined() ? weight.to(x.dtype()).contiguous() : Tensor();
  const int64_t* tp = t.data_ptr<int64_t>();
  const int64_t count = g.n * g.s;
  // Every target is checked before anything is computed.
  for (int64_t i = 0; i < count; ++i) {
    DITTO_CHECK(
        tp[i] == ignore_index || (tp[i] >= 0 && tp[i] < g.c),
        IndexError,
        "nll_loss",
        "Target ",
        tp[i],
        " is out of bounds.");
  }
  Tensor out;
  double total_weight = 0;
  dispatch_dtype(x.dtype(), "nll_loss", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* xp = x.data_ptr<T>();
      const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
      Shape none_sizes = target.sizes();
      Tensor per = reduction == Reduction::None
          ? detail::new_tensor(none_sizes, x.dtype())
          : Tensor();
      T* pp = per.defined() ? per.data_ptr<T>() : nullptr;
      double acc = 0;
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t s = 0; s < g.s; ++s) {
          const int64_t i = n * g.s + s;
          const int64_t c = tp[i];
          T v = 0;
          if (c != ignore_index) {
            const T wc = wp ? wp[c] : T(1);
            v = -(xp[(n * g.c + c) * g.s + s] * wc);
            total_weight += double(wc);
          }
          if (pp) {
            pp[i] = v;
          } else {
            acc += double(v);
          }
        }
      }
      if (pp) {
        out = per;
      } else {
        double r = reduction == Reduction::Sum ? acc : acc / total_weight;
        out = scalar_tensor(static_cast<T>(r), x.dtype());
      }
    }
  });
  Shape in_sizes = input.sizes();
  return scope.done(
      out,
      [g, in_sizes, ignore_index, reduction, total_weight, st = t, sw = w](
          const autograd::GradList& go) {
        Tensor gi = zeros(in_sizes, go[0].dtype());
        Tensor gout = go[0].contiguous();
        const int64_t* tp = st.data_ptr<int64_t>();
        dispatch_dtype(gi.dtype(), "nll_loss_backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            T* gp = gi.data_ptr<T>();
            const T* op = gout.data_ptr<T>();
            Tensor wt = sw.defined() ? sw.to(gi.dtype()) : Tensor();
            const T* wp = wt.defined() ? wt.data_ptr<T>() : nullptr;
            const T scale = reduction == Reduction::Mean
                ? T(op[0] / T(total_weight))
                : op[0];
            for (int64_t i = 0; i < g.n * g.s; ++i) {
              const int64_t c = tp[i];
              if (c == ignore_index) {
                continue;
              }
              const int64_t n = i / g.s, s = i % g.s;
              const T wc = wp ? wp[c] : T(1);
              const T gv = reduction == Reduction::None ? op[i] : scale;
              gp[(n * g.c + c) * g.s + s] = -(wc * gv);
            }
          }
        });
        return autograd::GradList{gi, Tensor()};
      });
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
  Tensor out = detail::new_tensor(pooled_sizes(x, g), x.dtype());
  Tensor idx = detail::new_tensor(pooled_sizes(x, g), kInt64);
  dispatch_dtype(x.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
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
  detail::OpScope scope(op, {grad_out});
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
  Tensor gi = zeros(input_sizes, grad_out.dtype());
  const Tensor go = grad_out.contiguous();
  const Tensor ix = indices.contiguous();
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

} // namespace ditto
