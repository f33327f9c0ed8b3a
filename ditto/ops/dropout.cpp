#include "ditto/ops/random.h"

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"

namespace ditto {

Tensor dropout(
    const Tensor& x,
    double p,
    bool train,
    const std::optional<Generator>& gen) {
  detail::OpScope op("dropout", {x});
  DITTO_CHECK(x.defined(), ValueError, "dropout", "undefined tensor");
  DITTO_CHECK(
      p >= 0.0 && p <= 1.0,
      ValueError,
      "dropout",
      "dropout probability has to be between 0 and 1, but got ",
      p);
  if (p == 0.0 || !train || x.numel() == 0) {
    return x;
  }
  if (p == 1.0) {
    return op.done(mul(x, 0), [](const autograd::GradList& g) {
      return autograd::GradList{mul(g[0], 0)};
    });
  }
  // PyTorch's CPU path: a Bernoulli(1 - p) mask of x's dtype, divided by
  // 1 - p in that dtype, times x.
  Tensor noise = detail::new_tensor(x.sizes(), x.dtype());
  noise.bernoulli_(1.0 - p, gen);
  noise.div_(1.0 - p);
  // The backward multiplies by the saved mask: it never draws again.
  return op.done(
      mul(x, noise), [mask = op.save(noise)](const autograd::GradList& g) {
        return autograd::GradList{mul(g[0], mask.unpack())};
      });
}

} // namespace ditto
