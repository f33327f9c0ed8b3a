#include "ditto/nn/modules/attention.h"

#include <cmath>
#include <limits>

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/detail/transformer_util.h"
#include "ditto/nn/functional.h"
#include "ditto/nn/init.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/reduce.h"

namespace ditto::nn {

MultiheadAttentionImpl::MultiheadAttentionImpl(
    const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"), options(o) {
  const char* op = "MultiheadAttention";
  DITTO_CHECK(
      o.embed_dim() > 0 && o.num_heads() > 0 &&
          o.embed_dim() % o.num_heads() == 0,
      ValueError,
      op,
      "embed_dim must be divisible by num_heads, got ",
      o.embed_dim(),
      " and ",
      o.num_heads());
  DITTO_CHECK(
      (o.kdim() == 0 || o.kdim() == o.embed_dim()) &&
          (o.vdim() == 0 || o.vdim() == o.embed_dim()),
      ValueError,
      op,
      "kdim and vdim other than embed_dim are not supported");
  DITTO_CHECK(
      !o.add_bias_kv() && !o.add_zero_attn(),
      ValueError,
      op,
      "add_bias_kv and add_zero_attn are not supported");
  DITTO_CHECK(
      o.dropout() >= 0.0 && o.dropout() <= 1.0,
      ValueError,
      op,
      "dropout must be in [0, 1], got ",
      o.dropout());
  const int64_t e = o.embed_dim();
  head_dim = e / o.num_heads();
  in_proj_weight =
      register_parameter("in_proj_weight", uninitialized({3 * e, e}));
  if (o.bias()) {
    in_proj_bias = register_parameter("in_proj_bias", uninitialized({3 * e}));
  }
  // LibTorch's order: out_proj draws as a Linear, then in_proj_weight.
  out_proj =
      register_module("out_proj", Linear(LinearOptions(e, e).bias(o.bias())));
  defer_reset(
      [w = in_proj_weight, b = in_proj_bias, ob = out_proj->bias]() mutable {
        init::xavier_uniform_(w);
        if (b.defined()) {
          NoGradGuard no_grad;
          b.zero_();
          ob.zero_();
        }
      });
}

void MultiheadAttentionImpl::reset_parameters() {
  detail::run_deferred();
  out_proj->reset_parameters();
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    NoGradGuard no_grad;
    in_proj_bias.zero_();
    out_proj->bias.zero_();
  }
}

namespace {

// A mask added to the scores: bool true becomes -inf, float as it is.
Tensor additive(const Tensor& mask, Dtype dtype) {
  if (mask.dtype() != kBool) {
    return mask.to(dtype);
  }
  return zeros(mask.sizes(), dtype)
      .masked_fill(mask, -std::numeric_limits<double>::infinity());
}

} // namespace

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query_in,
    const Tensor& key_in,
    const Tensor& value_in,
    const Tensor& key_padding_mask,
    bool need_weights,
    const Tensor& attn_mask,
    bool average_attn_weights) const {
  ForwardScope scope(*this);
  const char* op = "MultiheadAttention";
  DITTO_CHECK(
      query_in.defined() && key_in.defined() && value_in.defined(),
      ValueError,
      op,
      "undefined query, key or value");
  const bool batched = query_in.dim() == 3;
  DITTO_CHECK(
      (query_in.dim() == 2 || batched) && key_in.dim() == query_in.dim() &&
          value_in.dim() == query_in.dim(),
      ValueError,
      op,
      "expected query, key and value of 2 or 3 dims alike, got ",
      query_in.dim(),
      ", ",
      key_in.dim(),
      " and ",
      value_in.dim());
  Tensor query = query_in, key = key_in, value = value_in;
  Tensor padding = key_padding_mask;
  if (!batched) {
    query = query.unsqueeze(1);
    key = key.unsqueeze(1);
    value = value.unsqueeze(1);
    if (padding.defined()) {
      padding = padding.unsqueeze(0);
    }
  } else if (options.batch_first()) {
    query = query.transpose(0, 1);
    key = key.transpose(0, 1);
    value = value.transpose(0, 1);
  }
  const int64_t e = options.embed_dim(), h = options.num_heads(), d = head_dim;
  DITTO_CHECK(
      query.size(2) == e && key.size(2) == e && value.size(2) == e,
      ValueError,
      op,
      "expected an embedding of ",
      e,
      ", got query ",
      shape_str(query_in.sizes()));
  DITTO_CHECK(
      key.size(0) == value.size(0) && key.size(1) == query.size(1) &&
          value.size(1) == query.size(1),
      ValueError,
      op,
      "key and value must have the same length and the query's batch, got ",
      shape_str(key_in.sizes()),
      " and ",
      shape_str(value_in.sizes()));
  for (const auto& [name, m] :
       {std::pair<const char*, const Tensor*>{"attn_mask", &attn_mask},
        {"key_padding_mask", &key_padding_mask}}) {
    DITTO_CHECK(
        !m->defined() || m->dtype() == kBool || is_floating(m->dtype()),
        ValueError,
        op,
        "only bool and floating types of ",
        name,
        " are supported, got ",
        m->dtype());
  }
  const int64_t l = query.size(0), n = query.size(1), s = key.size(0);
  auto project = [&](const Tensor& x, int64_t part) {
    Tensor b;
    if (in_proj_bias.defined()) {
      b = in_proj_bias.narrow(0, part * e, e);
    }
    return linear(x, in_proj_weight.narrow(0, part * e, e), b);
  };
  // (len, N, E) -> (N, H, len, D)
  auto split_heads = [&](const Tensor& x, int64_t len) {
    return x.reshape({len, n * h, d}).transpose(0, 1).reshape({n, h, len, d});
  };
  const Tensor q = split_heads(project(query, 0), l);
  const Tensor k = split_heads(project(key, 1), s);
  const Tensor v = split_heads(project(value, 2), s);
  Tensor mask;
  if (attn_mask.defined()) {
    DITTO_CHECK(
        (attn_mask.dim() == 2 && attn_mask.size(0) == l &&
         attn_mask.size(1) == s) ||
            (attn_mask.dim() == 3 && attn_mask.size(0) == n * h &&
             attn_mask.size(1) == l && attn_mask.size(2) == s),
        ValueError,
        op,
        "attn_mask must be (L, S) or (N * num_heads, L, S), got ",
        shape_str(attn_mask.sizes()));
    mask = additive(attn_mask, q.dtype());
    if (mask.dim() == 3) {
      mask = mask.reshape({n, h, l, s});
    }
  }
  if (padding.defined()) {
    DITTO_CHECK(
        padding.dim() == 2 && padding.size(0) == n && padding.size(1) == s,
        ValueError,
        op,
        "key_padding_mask must be (N, S), got ",
        shape_str(key_padding_mask.sizes()));
    const Tensor kp = additive(padding, q.dtype()).reshape({n, 1, 1, s});
    mask = mask.defined() ? add(mask, kp) : kp;
  }
  Tensor scores =
      mul(matmul(q, k.transpose(-2, -1)), 1.0 / std::sqrt(double(d)));
  if (mask.defined()) {
    scores = add(scores, mask);
  }
  Tensor weights = functional::softmax(scores, -1);
  if (options.dropout() > 0.0 && is_training()) {
    weights = functional::dropout(weights, options.dropout(), true);
  }
  // (N, H, L, D) -> (L, N, E)
  Tensor out = matmul(weights, v).permute({2, 0, 1, 3}).reshape({l, n, e});
  out = out_proj->forward(out);
  if (!batched) {
    out = out.squeeze(1);
  } else if (options.batch_first()) {
    out = out.transpose(0, 1);
  }
  if (!need_weights) {
    return {out, Tensor()};
  }
  if (average_attn_weights) {
    weights = mean(weights, {1});
  }
  if (!batched) {
    weights = weights.squeeze(0);
  }
  return {out, weights};
}

std::string MultiheadAttentionImpl::extra_repr() const {
  return "";
}

RMSNormImpl::RMSNormImpl(const RMSNormOptions& o)
    : Module("RMSNorm"), options(o) {
  DITTO_CHECK(
      !o.normalized_shape().empty(),
      ValueError,
      "RMSNorm",
      "normalized_shape must have at least one size");
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", uninitialized(o.normalized_shape()));
    defer_reset([w = weight]() mutable {
      NoGradGuard no_grad;
      w.fill_(1.0);
    });
  }
}

void RMSNormImpl::reset_parameters() {
  detail::run_deferred();
  if (weight.defined()) {
    NoGradGuard no_grad;
    weight.fill_(1.0);
  }
}

Tensor RMSNormImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(x.defined(), ValueError, "RMSNorm", "undefined input");
  return rms_norm(
      x,
      IntArg(options.normalized_shape()),
      weight.defined() ? std::optional<Tensor>(weight) : std::nullopt,
      options.eps());
}

std::string RMSNormImpl::extra_repr() const {
  return py_tuple(
             options.normalized_shape(), options.normalized_shape().size()) +
      ", eps=" + (options.eps() ? py_float(*options.eps()) : "None") +
      ", elementwise_affine=" + py_bool(options.elementwise_affine());
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(
    const TransformerEncoderLayerOptions& o)
    : Module("TransformerEncoderLayer"), options(o) {
  DITTO_CHECK(
      o.dim_feedforward() > 0,
      ValueError,
      "TransformerEncoderLayer",
      "dim_feedforward must be positive, got ",
      o.dim_feedforward());
  // LibTorch's order (and torch.nn's): the draws follow it.
  self_attn = register_module(
      "self_attn",
      MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead())
                             .dropout(o.dropout())
                             .batch_first(o.batch_first())));
  linear1 =
      register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 =
      register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module(
      "norm1",
      LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  norm2 = register_module(
      "norm2",
      LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

Tensor TransformerEncoderLayerImpl::forward(
    const Tensor& src,
    const Tensor& src_mask,
    const Tensor& src_key_padding_mask) const {
  ForwardScope scope(*this);
  auto attend = [&](const Tensor& x) {
    return dropout1->forward(std::get<0>(self_attn->forward(
        x, x, x, src_key_padding_mask, /*need_weights=*/false, src_mask)));
  };
  auto feed_forward = [&](const Tensor& x) {
    const Tensor h =
        transformer_activation(options.activation(), linear1->forward(x));
    return dropout2->forward(linear2->forward(dropout->forward(h)));
  };
  if (options.norm_first()) {
    Tensor x = add(src, attend(norm1->forward(src)));
    return add(x, feed_forward(norm2->forward(x)));
  }
  Tensor x = norm1->forward(add(src, attend(src)));
  return norm2->forward(add(x, feed_forward(x)));
}

Tensor transformer_activation(const TransformerActivation& a, const Tensor& h) {
  if (const auto* kind = std::get_if<ActivationKind>(&a)) {
    return *kind == ActivationKind::GELU ? functional::gelu(h) : relu(h);
  }
  return std::get<std::function<Tensor(const Tensor&)>>(a)(h);
}

} // namespace ditto::nn
