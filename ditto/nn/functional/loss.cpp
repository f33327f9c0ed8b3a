// The losses of nn::functional, forward and backward.

#include "ditto/nn/functional/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ditto/core/error.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/functional/activation.h"
#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/reduce.h"

namespace ditto::nn::functional {
namespace {

using detail::check_floating;

Tensor reduce(const Tensor& per_element, Reduction r) {
  switch (r) {
    case Reduction::None:
      return per_element;
    case Reduction::Sum:
      return per_element.sum();
    case Reduction::Mean:
      return per_element.mean();
  }
  return per_element;
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  DITTO_CHECK(
      a.defined() && b.defined(), ValueError, op, "undefined input or target");
  DITTO_CHECK(
      a.sizes() == b.sizes(),
      ValueError,
      op,
      "Using a target size (",
      shape_str(b.sizes()),
      ") that is different to the input size (",
      shape_str(a.sizes()),
      ") is not supported");
}

// The class weights shaped to broadcast along dim 1 of an input of ndim.
Tensor class_weights_view(const Tensor& w, int64_t ndim) {
  Shape s(size_t(std::max<int64_t>(ndim, 1)), 1);
  s[ndim >= 2 ? 1 : 0] = w.size(0);
  return w.reshape(s);
}

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

Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const NLLLossOptions& options) {
  const Tensor& weight = options.weight();
  const int64_t ignore_index = options.ignore_index();
  const Reduction reduction = options.reduction();
  detail::OpScope scope("nll_loss", {input, weight});
  const NllGeom g = nll_geom(input, target, weight);
  const Tensor x = input.contiguous();
  // (A 0-dim target may come from the CPU, as a scalar.)
  const Tensor t = target.to(x.device()).contiguous();
  const Tensor w =
      weight.defined() ? weight.to(x.dtype()).contiguous() : Tensor();
  // The targets on the host (a device's copied there, as PyTorch's CUDA
  // kernel asserts on them), every one checked before anything is
  // computed.
  const Tensor t_host = t.cpu();
  const int64_t* tp = t_host.data_ptr<int64_t>();
  const int64_t count = g.n * g.s;
  for (int64_t i = 0; i < count; ++i) {
    DITTO_CHECK(
        tp[i] == ignore_index || (tp[i] >= 0 && tp[i] < g.c),
        IndexError,
        "nll_loss",
        "Target ",
        tp[i],
        " is out of bounds.");
  }
  const kernels::NllArgs args{x, t, w, g.c, g.s, ignore_index};
  const auto& slots = detail::device_slots(x, "nll_loss");
  Tensor out;
  double total_weight = 0; // the kept targets' weights, on the host
  dispatch_dtype(x.dtype(), "nll_loss", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const Tensor wh = w.defined() ? w.cpu() : Tensor();
      const T* wp = wh.defined() ? wh.data_ptr<T>() : nullptr;
      for (int64_t i = 0; i < count; ++i) {
        if (tp[i] != ignore_index) {
          total_weight += wp ? double(wp[tp[i]]) : 1.0;
        }
      }
      if (reduction == Reduction::None) {
        out = detail::new_tensor(t.sizes(), x.dtype(), x.device());
        slots.nll_terms(args, out, "nll_loss");
        return;
      }
      const double acc = slots.nll_sum(args, "nll_loss");
      const double r = reduction == Reduction::Sum ? acc : acc / total_weight;
      out = scalar_tensor(static_cast<T>(r), x.dtype()).to(x.device());
    }
  });
  Shape in_sizes = input.sizes();
  return scope.done(
      out,
      [g, in_sizes, ignore_index, reduction, total_weight, st = t, sw = w](
          const autograd::GradList& go) {
        Tensor gi = zeros(in_sizes, go[0].dtype(), go[0].device());
        const Tensor gout = go[0].contiguous();
        const Tensor wt = sw.defined() ? sw.to(gi.dtype()) : Tensor();
        const kernels::NllArgs a{gi, st, wt, g.c, g.s, ignore_index};
        const char* name = "nll_loss_backward";
        if (reduction == Reduction::None) {
          detail::device_slots(gi, name).nll_backward(a, gi, gout, 0.0, name);
          return autograd::GradList{gi, Tensor()};
        }
        // The one incoming value's scale, on the host, in gi's dtype.
        dispatch_dtype(gi.dtype(), name, [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T g0 = gout.item<T>();
            const T scale =
                reduction == Reduction::Mean ? T(g0 / T(total_weight)) : g0;
            detail::device_slots(gi, name).nll_backward(
                a, gi, Tensor(), double(scale), name);
          }
        });
        return autograd::GradList{gi, Tensor()};
      });
}

Tensor cross_entropy(
    const Tensor& input,
    const Tensor& target,
    const CrossEntropyOptions& o) {
  if (detail::is_storage(input) && is_floating(input.dtype())) {
    // Note [Storage dtypes]: in float32, rounded once.
    CrossEntropyOptions o32 = o;
    if (o.weight().defined()) {
      o32.weight(detail::upcast(o.weight()));
    }
    return cross_entropy(detail::upcast(input), detail::upcast(target), o32)
        .to(input.dtype());
  }
  detail::OpScope op(
      "cross_entropy", {input, target}, detail::OpScope::kComposite);
  DITTO_CHECK(
      input.defined() && target.defined(),
      ValueError,
      "cross_entropy",
      "undefined input or target");
  const double eps = o.label_smoothing();
  DITTO_CHECK(
      eps >= 0.0 && eps <= 1.0,
      ValueError,
      "cross_entropy",
      "label_smoothing must be between 0.0 and 1.0. Got: ",
      eps);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  DITTO_CHECK(
      input.dim() >= 1,
      ValueError,
      "cross_entropy",
      "input must have at least one dim");
  const int64_t c = input.size(class_dim);
  Tensor lp = log_softmax(input, class_dim);
  Tensor w = o.weight().defined() ? o.weight().to(input.dtype()) : Tensor();
  if (is_floating(target.dtype())) {
    // Class probabilities: -sum_c w_c p'_c lp_c, mean over the batch.
    check_same_shape(input, target, "cross_entropy");
    Tensor p = eps > 0 ? add(mul(target, 1.0 - eps), eps / double(c)) : target;
    Tensor terms = mul(lp, p);
    if (w.defined()) {
      terms = mul(terms, class_weights_view(w, input.dim()));
    }
    Tensor per = neg(terms.sum({class_dim}));
    if (o.reduction() == Reduction::Mean) {
      const int64_t n = input.dim() == 1 ? 1 : input.size(0);
      return op.done(div(per.sum(), double(n)));
    }
    return op.done(reduce(per, o.reduction()));
  }
  Tensor nll = nll_loss(
      lp,
      target,
      NLLLossOptions()
          .weight(w)
          .ignore_index(o.ignore_index())
          .reduction(o.reduction()));
  if (eps == 0.0) {
    return op.done(nll);
  }
  // Label smoothing (PyTorch's cross_entropy_loss_label_smoothing): the
  // smoothing term is -sum_c w_c lp_c, 0 at ignored targets, with the
  // nll's denominator for the mean.
  Tensor smooth_terms =
      w.defined() ? mul(lp, class_weights_view(w, input.dim())) : lp;
  Tensor ignored = eq(target, o.ignore_index());
  Tensor smooth = neg(smooth_terms.sum({class_dim})).masked_fill(ignored, 0.0);
  Tensor smooth_red;
  if (o.reduction() == Reduction::Mean) {
    Tensor kept = ne(target, o.ignore_index());
    Tensor den = w.defined()
        ? where(
              kept,
              w.index_select(0, where(kept, target, 0).flatten())
                  .reshape(target.sizes()),
              0.0)
              .sum()
        : kept.to(input.dtype()).sum();
    smooth_red = div(smooth.sum(), den);
  } else {
    smooth_red = reduce(smooth, o.reduction());
  }
  return op.done(add(mul(nll, 1.0 - eps), mul(smooth_red, eps / double(c))));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r) {
  detail::OpScope op("mse_loss", {input, target}, detail::OpScope::kComposite);
  check_same_shape(input, target, "mse_loss");
  Tensor d = sub(input, target);
  return op.done(reduce(mul(d, d), r));
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r) {
  detail::OpScope op("l1_loss", {input, target}, detail::OpScope::kComposite);
  check_same_shape(input, target, "l1_loss");
  return op.done(reduce(abs(sub(input, target)), r));
}

Tensor smooth_l1_loss(
    const Tensor& input,
    const Tensor& target,
    Reduction r,
    double beta) {
  detail::OpScope op(
      "smooth_l1_loss", {input, target}, detail::OpScope::kComposite);
  check_same_shape(input, target, "smooth_l1_loss");
  DITTO_CHECK(
      beta >= 0,
      ValueError,
      "smooth_l1_loss",
      "smooth_l1_loss does not support negative values for beta, got ",
      beta);
  Tensor d = abs(sub(input, target));
  if (beta == 0.0) {
    return op.done(reduce(d, r));
  }
  Tensor quad = div(mul(mul(d, d), 0.5), beta);
  return op.done(reduce(where(lt(d, beta), quad, sub(d, 0.5 * beta)), r));
}

Tensor binary_cross_entropy_with_logits(
    const Tensor& z,
    const Tensor& y,
    const BCEWithLogitsOptions& o) {
  detail::OpScope op(
      "binary_cross_entropy_with_logits", {z, y}, detail::OpScope::kComposite);
  check_same_shape(z, y, "binary_cross_entropy_with_logits");
  // m = max(-z, 0); loss = (1 - y) z + lw (log(e^-m + e^(-z-m)) + m), with
  // lw = 1 + (pos_weight - 1) y, or without pos_weight (1 - y) z + m +
  // log(...).
  Tensor m = clamp(neg(z), 0.0, std::nullopt);
  Tensor lse = log(add(exp(neg(m)), exp(sub(neg(z), m))));
  Tensor loss;
  if (o.pos_weight().defined()) {
    Tensor lw = add(mul(sub(o.pos_weight(), 1.0), y), 1.0);
    loss = add(mul(1.0 - y, z), mul(lw, add(lse, m)));
  } else {
    loss = add(add(mul(1.0 - y, z), m), lse);
  }
  if (o.weight().defined()) {
    loss = mul(loss, o.weight());
  }
  return op.done(reduce(loss, o.reduction()));
}

Tensor binary_cross_entropy(
    const Tensor& x,
    const Tensor& t,
    const BinaryCrossEntropyFuncOptions& o) {
  const char* name = "binary_cross_entropy";
  const Tensor& w = o.weight();
  detail::OpScope op(name, {x, t, w});
  check_same_shape(x, t, name);
  DITTO_CHECK(
      is_floating(x.dtype()),
      TypeError,
      name,
      "expected a floating input, got ",
      x.dtype());
  {
    // NaN is outside too, as in PyTorch.
    const int64_t in_range =
        sum(mul(ge(x, 0.0).to(kInt64), le(x, 1.0).to(kInt64))).item<int64_t>();
    const bool inside = in_range == x.numel();
    DITTO_CHECK(
        inside,
        ValueError,
        name,
        "all elements of input should be between 0 and 1");
  }
  Tensor log_x = clamp(log(x), -100.0, std::nullopt);
  Tensor log_1mx = clamp(log(1.0 - x), -100.0, std::nullopt);
  Tensor loss = neg(add(mul(t, log_x), mul(1.0 - t, log_1mx)));
  if (w.defined()) {
    loss = mul(loss, w);
  }
  const Reduction r = o.reduction();
  // PyTorch's derivatives (binary_cross_entropy_backward and
  // binary_cross_entropy_target_backward): the input's gradient divides by
  // max((1 - x) x, 1e-12), so it stays finite at x = 0 and x = 1 where the
  // clamped logs' chain rule gives 0 * inf; the target's is -logit(x).
  return op.done(
      reduce(loss, r),
      [r,
       sx = op.save(x),
       st = op.save(t),
       sw = w.defined() ? op.save(w) : autograd::SavedTensor()](
          const autograd::GradList& g) {
        Tensor x = sx.unpack(), t = st.unpack();
        Tensor w = sw.defined() ? sw.unpack() : Tensor();
        const double n = double(x.numel());
        Tensor gx = div(
            mul(g[0], sub(x, t)), clamp(mul(1.0 - x, x), 1e-12, std::nullopt));
        Tensor gt = mul(neg(log(div(x, 1.0 - x))), g[0]);
        if (w.defined()) {
          gx = mul(gx, w);
          gt = mul(gt, w);
        }
        if (r == Reduction::Mean) {
          gx = div(gx, n);
          gt = div(gt, n);
        }
        return autograd::GradList{gx, gt, Tensor()};
      });
}

Tensor kl_div(
    const Tensor& input,
    const Tensor& target,
    KLDivReduction r,
    bool log_target) {
  detail::OpScope op("kl_div", {input, target}, detail::OpScope::kComposite);
  check_same_shape(input, target, "kl_div");
  Tensor per;
  if (log_target) {
    per = mul(exp(target), sub(target, input));
  } else {
    // target * (log target - input), 0 where target == 0.
    per = where(eq(target, 0.0), 0.0, mul(target, sub(log(target), input)));
  }
  switch (r) {
    case KLDivReduction::None:
      return op.done(per);
    case KLDivReduction::Sum:
      return op.done(per.sum());
    case KLDivReduction::Mean:
      return op.done(per.mean());
    case KLDivReduction::BatchMean:
      return op.done(
          div(per.sum(), double(input.dim() == 0 ? 1 : input.size(0))));
  }
  return op.done(per);
}

} // namespace ditto::nn::functional

namespace ditto {

namespace detail {

nn::functional::Reduction reduction_of(int64_t reduction, const char* op) {
  using F = nn::functional::Reduction;
  DITTO_CHECK(
      reduction >= Reduction::None && reduction < Reduction::END,
      ValueError,
      op,
      "reduction must be torch::Reduction::None, Mean or Sum (0, 1, 2), got ",
      reduction);
  return reduction == Reduction::None ? F::None
      : reduction == Reduction::Mean  ? F::Mean
                                      : F::Sum;
}

} // namespace detail

// ---- the ATen forms (ditto/ops/composite/loss.ops.toml)

namespace F = nn::functional;
using detail::reduction_of;

// F.cross_entropy's ATen form, recorded (and erring) as cross_entropy.
Tensor cross_entropy_loss(
    const Tensor& self,
    const Tensor& target,
    const std::optional<Tensor>& weight,
    int64_t reduction,
    int64_t ignore_index,
    double label_smoothing) {
  return F::cross_entropy(
      self,
      target,
      F::CrossEntropyOptions()
          .weight(weight.value_or(Tensor()))
          .reduction(reduction_of(reduction, "cross_entropy"))
          .ignore_index(ignore_index)
          .label_smoothing(label_smoothing));
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::mse_loss(self, target, reduction_of(reduction, "mse_loss"));
}

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::l1_loss(self, target, reduction_of(reduction, "l1_loss"));
}

Tensor smooth_l1_loss(
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    double beta) {
  return F::smooth_l1_loss(
      self, target, reduction_of(reduction, "smooth_l1_loss"), beta);
}

Tensor binary_cross_entropy(
    const Tensor& self,
    const Tensor& target,
    const std::optional<Tensor>& weight,
    int64_t reduction) {
  return F::binary_cross_entropy(
      self,
      target,
      F::BinaryCrossEntropyFuncOptions(
          reduction_of(reduction, "binary_cross_entropy"))
          .weight(weight.value_or(Tensor())));
}

Tensor binary_cross_entropy_with_logits(
    const Tensor& self,
    const Tensor& target,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& pos_weight,
    int64_t reduction) {
  return F::binary_cross_entropy_with_logits(
      self,
      target,
      F::BCEWithLogitsOptions()
          .weight(weight.value_or(Tensor()))
          .pos_weight(pos_weight.value_or(Tensor()))
          .reduction(
              reduction_of(reduction, "binary_cross_entropy_with_logits")));
}

Tensor nll_loss(
    const Tensor& self,
    const Tensor& target,
    const std::optional<Tensor>& weight,
    int64_t reduction,
    int64_t ignore_index) {
  return F::nll_loss(
      self,
      target,
      F::NLLLossOptions()
          .weight(weight.value_or(Tensor()))
          .ignore_index(ignore_index)
          .reduction(reduction_of(reduction, "nll_loss")));
}

Tensor kl_div(
    const Tensor& self,
    const Tensor& target,
    int64_t reduction,
    bool log_target) {
  const F::Reduction r = reduction_of(reduction, "kl_div");
  return F::kl_div(
      self,
      target,
      r == F::Reduction::None      ? F::KLDivReduction::None
          : r == F::Reduction::Sum ? F::KLDivReduction::Sum
                                   : F::KLDivReduction::Mean,
      log_target);
}

} // namespace ditto
