// dropout and dropout2d: Bernoulli masks from the generator (PyTorch's
// CPU draws), forward and backward.

#include "ditto/nn/functional/dropout.h"

#include "ditto/core/error.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto::nn::functional {

Tensor dropout(
    const Tensor& x,
    double p,
    bool training,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    // Note [Storage dtypes]: float32's mask and scaling, rounded once.
    return nn::functional::dropout(detail::upcast(x), p, training, gen)
        .to(x.dtype());
  }
  detail::OpScope op("dropout", {x});
  DITTO_CHECK(x.defined(), ValueError, "dropout", "undefined tensor");
  DITTO_CHECK(
      p >= 0.0 && p <= 1.0,
      ValueError,
      "dropout",
      "dropout probability has to be between 0 and 1, but got ",
      p);
  if (p == 0.0 || !training || x.numel() == 0) {
    return x;
  }
  if (p == 1.0) {
    return op.done(mul(x, 0), [](const autograd::GradList& g) {
      return autograd::GradList{mul(g[0], 0)};
    });
  }
  // PyTorch's CPU path: a Bernoulli(1 - p) mask of x's dtype, divided by
  // 1 - p in that dtype, times x.
  Tensor noise = detail::new_tensor(x.sizes(), x.dtype(), x.device());
  noise.bernoulli_(1.0 - p, gen);
  noise.div_(1.0 - p);
  // The backward multiplies by the saved mask: it never draws again.
  return op.done(
      mul(x, noise), [mask = op.save(noise)](const autograd::GradList& g) {
        return autograd::GradList{mul(g[0], mask.unpack())};
      });
}

namespace {

// Whole channels (dim 1) of x zeroed with probability p and the rest scaled
// by 1 / (1 - p) while training: one Bernoulli draw per (sample, channel),
// PyTorch's feature dropout (its draws and rounding).
Tensor channel_dropout(
    const char* op,
    const Tensor& x,
    double p,
    bool training,
    const std::optional<Generator>& gen) {
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      p >= 0.0 && p <= 1.0,
      ValueError,
      op,
      "dropout probability has to be between 0 and 1, but got ",
      p);
  DITTO_CHECK(
      x.dim() >= 2,
      ValueError,
      op,
      "Feature dropout requires at least 2 dimensions in the input, got "
      "sizes ",
      shape_str(x.sizes()));
  if (!training || p == 0.0 || x.numel() == 0) {
    return x;
  }
  if (p == 1.0) {
    return mul(x, 0.0);
  }
  Shape noise_sizes(size_t(x.dim()), 1);
  noise_sizes[0] = x.size(0);
  noise_sizes[1] = x.size(1);
  Tensor noise = zeros(noise_sizes, x.dtype());
  noise.bernoulli_(1.0 - p, gen);
  noise.div_(1.0 - p);
  return mul(x, noise);
}

} // namespace

Tensor dropout2d(
    const Tensor& x,
    double p,
    bool training,
    const std::optional<Generator>& gen) {
  detail::OpScope op("dropout2d", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(
      !x.defined() || x.dim() == 3 || x.dim() == 4,
      ValueError,
      "dropout2d",
      "expected a 3D or 4D input, got sizes ",
      shape_str(x.sizes()));
  return op.done(channel_dropout("dropout2d", x, p, training, gen));
}

} // namespace ditto::nn::functional

// torch.dropout (composite/dropout.ops.toml): every argument given, the
// generator ditto's keyword.
namespace ditto {

Tensor dropout(
    const Tensor& input,
    double p,
    bool train,
    const std::optional<Generator>& generator) {
  return nn::functional::dropout(input, p, train, generator);
}

// torch.feature_dropout: dropout2d's channel draws for any input of two
// dims or more, traced under its record's name (dropout2d).
Tensor feature_dropout(
    const Tensor& input,
    double p,
    bool train,
    const std::optional<Generator>& generator) {
  detail::OpScope op("dropout2d", {input}, detail::OpScope::kComposite);
  return op.done(nn::functional::channel_dropout(
      "feature_dropout", input, p, train, generator));
}

} // namespace ditto
