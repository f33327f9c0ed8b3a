#include "ditto/nn/functional.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ditto/core/error.h"
#include "ditto/ops/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/random.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn::functional {
namespace {

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

} // namespace

Tensor relu(const Tensor& x) {
  return ::ditto::relu(x);
}

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  detail::OpScope op("leaky_relu", {x}, detail::OpScope::kComposite);
  return op.done(where(gt(x, 0.0), x, mul(x, negative_slope)));
}

Tensor silu(const Tensor& x) {
  detail::OpScope op("silu", {x}, detail::OpScope::kComposite);
  return op.done(mul(x, ::ditto::sigmoid(x)));
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  const bool tanh_form = approximate == "tanh";
  DITTO_CHECK(
      tanh_form || approximate == "none",
      ValueError,
      "gelu",
      "approximate argument must be either none or tanh, got ",
      approximate);
  detail::OpScope op("gelu", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, "gelu", "undefined input");
  if (tanh_form) {
    // PyTorch's grouping: 0.5 x (1 + tanh(kBeta (x + kKappa x^3))).
    const double beta = 0.7978845608028654; // sqrt(2) * 2/sqrt(pi) / 2
    Tensor inner = mul(add(x, mul(mul(mul(x, x), x), 0.044715)), beta);
    return op.done(mul(mul(x, 0.5), add(::ditto::tanh(inner), 1.0)));
  }
  return op.done(
      mul(mul(x, 0.5), add(::ditto::erf(mul(x, 0.7071067811865476)), 1.0)));
}

Tensor sigmoid(const Tensor& x) {
  return ::ditto::sigmoid(x);
}

Tensor tanh(const Tensor& x) {
  return ::ditto::tanh(x);
}

Tensor softmax(const Tensor& x, int64_t dim) {
  return ::ditto::softmax(x, dim);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return ::ditto::log_softmax(x, dim);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return ::ditto::linear(x, weight, bias);
}

Tensor dropout(
    const Tensor& x,
    double p,
    bool training,
    const std::optional<Generator>& gen) {
  return ::ditto::dropout(x, p, training, gen);
}

Tensor max_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride,
    const IntList& padding,
    const IntList& dilation,
    bool ceil_mode) {
  return ::ditto::max_pool2d(
      x, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor dropout2d(
    const Tensor& x,
    double p,
    bool training,
    const std::optional<Generator>& gen) {
  detail::OpScope op("dropout2d", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, "dropout2d", "undefined input");
  DITTO_CHECK(
      p >= 0.0 && p <= 1.0,
      ValueError,
      "dropout2d",
      "dropout probability has to be between 0 and 1, but got ",
      p);
  DITTO_CHECK(
      x.dim() == 3 || x.dim() == 4,
      ValueError,
      "dropout2d",
      "expected a 3D or 4D input, got sizes ",
      shape_str(x.sizes()));
  if (!training || p == 0.0 || x.numel() == 0) {
    return op.done(x);
  }
  if (p == 1.0) {
    return op.done(mul(x, 0.0));
  }
  Shape noise_sizes(size_t(x.dim()), 1);
  noise_sizes[0] = x.size(0);
  noise_sizes[1] = x.size(1);
  Tensor noise = zeros(noise_sizes, x.dtype());
  noise.bernoulli_(1.0 - p, gen);
  noise.div_(1.0 - p);
  return op.done(mul(x, noise));
}

Tensor avg_pool2d(
    const Tensor& x,
    const IntList& kernel_size,
    const IntList& stride,
    const IntList& padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override) {
  return ::ditto::avg_pool2d(
      x,
      kernel_size,
      stride,
      padding,
      ceil_mode,
      count_include_pad,
      divisor_override);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size) {
  return ::ditto::adaptive_avg_pool2d(x, output_size);
}

Tensor embedding(
    const Tensor& indices,
    const Tensor& weight,
    std::optional<int64_t> padding_idx) {
  return ::ditto::embedding(weight, indices, padding_idx);
}

Tensor batch_norm(
    const Tensor& x,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& weight,
    const Tensor& bias,
    bool training,
    double momentum,
    double eps) {
  return ::ditto::batch_norm(
      x, running_mean, running_var, weight, bias, training, momentum, eps);
}

Tensor layer_norm(
    const Tensor& x,
    const Shape& normalized_shape,
    const Tensor& weight,
    const Tensor& bias,
    double eps) {
  return ::ditto::layer_norm(x, normalized_shape, weight, bias, eps);
}

Tensor group_norm(
    const Tensor& x,
    int64_t num_groups,
    const Tensor& weight,
    const Tensor& bias,
    double eps) {
  return ::ditto::group_norm(x, num_groups, weight, bias, eps);
}

Tensor pad(
    const Tensor& x,
    const IntList& pads,
    std::string_view mode,
    double value) {
  return ::ditto::pad(x, pads, mode, value);
}

Tensor interpolate(const Tensor& x, const InterpolateOptions& o) {
  const char* op = "interpolate";
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      x.dim() == 4,
      ValueError,
      op,
      "only 4-D input (N, C, H, W) is supported, got sizes ",
      shape_str(x.sizes()));
  DITTO_CHECK(
      o.size().empty() != o.scale_factor().empty(),
      ValueError,
      op,
      "only one of size or scale_factor should be defined");
  DITTO_CHECK(
      !(o.align_corners() && o.mode() != InterpolateMode::Bilinear),
      ValueError,
      op,
      "align_corners option can only be set with the interpolating modes: "
      "linear | bilinear | bicubic | trilinear");
  int64_t oh = 0, ow = 0;
  std::optional<double> sh, sw;
  if (!o.size().empty()) {
    DITTO_CHECK(
        o.size().size() <= 2, ValueError, op, "size must be one or two values");
    oh = o.size()[0];
    ow = o.size().size() == 2 ? o.size()[1] : oh;
  } else {
    const auto& f = o.scale_factor();
    DITTO_CHECK(
        f.size() <= 2 && f[0] > 0 && f.back() > 0 && std::isfinite(f[0]) &&
            std::isfinite(f.back()),
        ValueError,
        op,
        "scale_factor must be one or two positive finite values");
    const double fh = f[0], fw = f.size() == 2 ? f[1] : f[0];
    const double eh = std::floor(double(x.size(2)) * fh);
    const double ew = std::floor(double(x.size(3)) * fw);
    DITTO_CHECK(
        eh < 9.2e18 && ew < 9.2e18,
        ValueError,
        op,
        "scale_factor gives an output size beyond int64");
    oh = int64_t(eh);
    ow = int64_t(ew);
    if (!o.recompute_scale_factor()) {
      sh = fh;
      sw = fw;
    }
  }
  return upsample2d(
      x, oh, ow, o.mode(), o.align_corners().value_or(false), sh, sw);
}

Tensor grid_sample(
    const Tensor& input,
    const Tensor& grid,
    const GridSampleOptions& o) {
  return ::ditto::grid_sample(
      input, grid, o.mode(), o.padding_mode(), o.align_corners());
}

Tensor affine_grid(const Tensor& theta, const Shape& size, bool align_corners) {
  return ::ditto::affine_grid(theta, size, align_corners);
}

Tensor normalize(const Tensor& x, int64_t dim, double eps) {
  detail::OpScope op("normalize", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, "normalize", "undefined input");
  Tensor norm = sqrt(mul(x, x).sum({dim}, true));
  return op.done(div(x, clamp(norm, eps, std::nullopt)));
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  detail::OpScope op("one_hot", {indices});
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64,
      TypeError,
      "one_hot",
      "one_hot is only applicable to index tensor (int64)");
  int64_t n = num_classes;
  if (n == -1) {
    DITTO_CHECK(
        indices.numel() > 0,
        ValueError,
        "one_hot",
        "Can not infer total number of classes from empty tensor.");
    n = indices.max().item<int64_t>() + 1;
  }
  DITTO_CHECK(
      n >= 0 && (indices.numel() == 0 || indices.min().item<int64_t>() >= 0),
      ValueError,
      "one_hot",
      "Class values must be non-negative.");
  DITTO_CHECK(
      indices.numel() == 0 || indices.max().item<int64_t>() < n,
      ValueError,
      "one_hot",
      "Class values must be smaller than num_classes.");
  Shape s = indices.sizes();
  s.push_back(n);
  Tensor out = zeros(s, kInt64);
  if (indices.numel() > 0) {
    out.scatter_(indices.dim(), indices.unsqueeze(-1), Scalar(int64_t(1)));
  }
  return op.done(out);
}

Tensor nll_loss(
    const Tensor& input,
    const Tensor& target,
    const NLLLossOptions& o) {
  return ::ditto::nll_loss(
      input, target, o.weight(), o.ignore_index(), o.reduction());
}

Tensor cross_entropy(
    const Tensor& input,
    const Tensor& target,
    const CrossEntropyOptions& o) {
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
  Tensor lp = ::ditto::log_softmax(input, class_dim);
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
  Tensor nll =
      ::ditto::nll_loss(lp, target, w, o.ignore_index(), o.reduction());
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

Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths,
    int64_t blank,
    Reduction reduction,
    bool zero_infinity) {
  detail::OpScope op("ctc_loss", {log_probs}, detail::OpScope::kComposite);
  // PyTorch's composite: _ctc_loss, then zero_infinity, then the reduction.
  Tensor res = ::ditto::ctc_loss_nll(
      log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
  if (zero_infinity) {
    res = where(eq(res, std::numeric_limits<double>::infinity()), 0.0, res);
  }
  if (reduction == Reduction::Mean) {
    std::vector<double> tl;
    for (int64_t v : target_lengths) {
      tl.push_back(double(std::max<int64_t>(v, 1)));
    }
    return op.done(mean(div(res, tensor(tl).to(res.dtype()))));
  }
  if (reduction == Reduction::Sum) {
    return op.done(sum(res));
  }
  return op.done(res);
}

Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const Tensor& input_lengths,
    const Tensor& target_lengths,
    int64_t blank,
    Reduction reduction,
    bool zero_infinity) {
  return ctc_loss(
      log_probs,
      targets,
      detail::int_values(input_lengths, "ctc_loss", "input_lengths"),
      detail::int_values(target_lengths, "ctc_loss", "target_lengths"),
      blank,
      reduction,
      zero_infinity);
}

} // namespace ditto::nn::functional
