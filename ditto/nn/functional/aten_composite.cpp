// The Core ATen composites (ditto/ops/composite/aten.ops.toml, declared in
// ditto/ops/detail/composite.h) whose parts are nn's functions: the
// transposed convolutions, dropout, the normalized-shape check. Their
// bodies live here so that ops stays below nn; like the other composites,
// their gradients, traces and device support come from the parts they call.

#include <cmath>
#include <limits>

#include "ditto/core/error.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/functional/conv.h"
#include "ditto/nn/functional/dropout.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/detail/composite.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/reduce.h"

namespace ditto::detail {

namespace {

void require_part(const Tensor& t, const char* op) {
  DITTO_CHECK(t.defined(), ValueError, op, "undefined tensor");
}

} // namespace

Tensor convolution(
    const Tensor& self,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool transposed,
    const IntArg& output_padding,
    int64_t groups) {
  const char* op = "convolution";
  require_part(weight, op);
  const Tensor b = bias ? *bias : Tensor();
  const int64_t k = weight.dim() - 2;
  DITTO_CHECK(
      k >= 1 && k <= 3,
      ValueError,
      op,
      "expected a weight of 3, 4 or 5 dims, got ",
      weight.dim());
  if (!transposed) {
    for (int64_t v : output_padding) {
      DITTO_CHECK(
          v == 0,
          ValueError,
          op,
          "output_padding is for transposed convolutions, got ",
          shape_str(output_padding));
    }
    if (k == 1) {
      return conv1d(self, weight, b, stride, padding, dilation, groups);
    }
    if (k == 2) {
      return conv2d(self, weight, b, stride, padding, dilation, groups);
    }
    return conv3d(self, weight, b, stride, padding, dilation, groups);
  }
  if (k == 1) {
    // A row of height 1 through the 2-d transpose.
    auto widen = [](const IntArg& v, int64_t h) {
      return IntArg{h, v.empty() ? 0 : v[0]};
    };
    return nn::functional::conv_transpose2d(
               self.unsqueeze(-2),
               weight.unsqueeze(-2),
               b,
               widen(stride, 1),
               widen(padding, 0),
               widen(output_padding, 0),
               groups,
               widen(dilation, 1))
        .squeeze(-2);
  }
  if (k == 2) {
    return nn::functional::conv_transpose2d(
        self, weight, b, stride, padding, output_padding, groups, dilation);
  }
  return nn::functional::conv_transpose3d(
      self, weight, b, stride, padding, output_padding, groups, dilation);
}

Tensor scaled_dot_product_attention(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const std::optional<Tensor>& attn_mask,
    double dropout_p,
    bool is_causal,
    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  require_part(key, op);
  require_part(value, op);
  DITTO_CHECK(
      query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2,
      ValueError,
      op,
      "expected query, key and value of at least 2 dims, got ",
      query.dim(),
      ", ",
      key.dim(),
      " and ",
      value.dim());
  DITTO_CHECK(
      query.size(-1) == key.size(-1),
      ValueError,
      op,
      "query's last dim ",
      query.size(-1),
      " differs from key's ",
      key.size(-1));
  DITTO_CHECK(
      key.size(-2) == value.size(-2),
      ValueError,
      op,
      "key has ",
      key.size(-2),
      " positions but value ",
      value.size(-2));
  DITTO_CHECK(
      dropout_p >= 0.0 && dropout_p <= 1.0,
      ValueError,
      op,
      "dropout_p must be in [0, 1], got ",
      dropout_p);
  DITTO_CHECK(
      !(is_causal && attn_mask && attn_mask->defined()),
      ValueError,
      op,
      "give attn_mask or is_causal, not both");
  DITTO_CHECK(
      !(attn_mask && attn_mask->defined()) || attn_mask->dtype() == kBool ||
          is_floating(attn_mask->dtype()),
      ValueError,
      op,
      "attn_mask must be bool (true: attend) or floating (added), got ",
      attn_mask && attn_mask->defined() ? attn_mask->dtype() : kBool);
  const int64_t L = query.size(-2), S = key.size(-2);
  const double s = scale ? *scale : 1.0 / std::sqrt(double(query.size(-1)));
  Tensor scores = mul(matmul(query, key.transpose(-2, -1)), s);
  if (is_causal) {
    // A query attends to the keys at or before its own position.
    const Tensor above = gt(arange(0, S, 1, kInt64).reshape({1, S}),
                            arange(0, L, 1, kInt64).reshape({L, 1}))
                             .to(query.device());
    scores =
        scores.masked_fill(above, -std::numeric_limits<double>::infinity());
  } else if (attn_mask && attn_mask->defined()) {
    scores = attn_mask->dtype() == kBool
        ? scores.masked_fill(
              logical_not(*attn_mask), -std::numeric_limits<double>::infinity())
        : add(scores, *attn_mask);
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0.0) {
    weights = nn::functional::dropout(weights, dropout_p, true);
  }
  return matmul(weights, value);
}

Tensor rms_norm(
    const Tensor& self,
    const IntArg& normalized_shape,
    const std::optional<Tensor>& weight,
    std::optional<double> eps) {
  const char* op = "rms_norm";
  const int64_t n = int64_t(normalized_shape.size());
  check_normalized_shape(self, normalized_shape, op);
  DITTO_CHECK(
      !weight || !weight->defined() ||
          IntList(weight->sizes()) == IntList(normalized_shape),
      ValueError,
      op,
      "weight must have the normalized shape ",
      shape_str(normalized_shape),
      ", got ",
      shape_str(weight && weight->defined() ? weight->sizes() : Shape{}));
  IntArg dims;
  for (int64_t i = self.dim() - n; i < self.dim(); ++i) {
    dims.push_back(i);
  }
  // torch's default: the epsilon of the input's dtype.
  const double e = eps ? *eps
      : self.dtype() == kFloat64
      ? std::numeric_limits<double>::epsilon()
      : double(std::numeric_limits<float>::epsilon());
  Tensor out = mul(self, rsqrt(add(mean(mul(self, self), dims, true), e)));
  return weight && weight->defined() ? mul(out, *weight) : out;
}

} // namespace ditto::detail
