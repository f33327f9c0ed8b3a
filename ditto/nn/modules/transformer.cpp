#include "ditto/nn/modules/transformer.h"

#include <limits>
#include <utility>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/transformer_util.h"
#include "ditto/nn/functional.h"
#include "ditto/nn/init.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto::nn {

namespace {

// What LibTorch's clone() and torch.nn's deepcopy give the stacks: a new
// module with the same options whose queued initial draws are dropped (it
// draws nothing) and whose parameters and buffers are copies of the
// original's. Module::take_reset is protected: a derived class may call
// it; this one is never made.
struct Copier : Module {
  template <typename Holder>
  static Holder copy(const Holder& from) {
    Holder to(from->options);
    std::vector<std::shared_ptr<Module>> all = to->modules(false);
    all.push_back(to.ptr());
    for (const std::shared_ptr<Module>& m : all) {
      take_reset(*m);
    }
    NoGradGuard no_grad;
    const NamedTensors src = from->named_parameters();
    NamedTensors dst = to->named_parameters();
    for (auto& item : dst) {
      item.value().copy_(src[item.key()]);
    }
    const NamedTensors src_b = from->named_buffers();
    NamedTensors dst_b = to->named_buffers();
    for (auto& item : dst_b) {
      item.value().copy_(src_b[item.key()]);
    }
    to->train(from->is_training());
    return to;
  }

  // A stack's layers: n copies of layer.
  template <typename Holder>
  static ModuleList copies(const Holder& layer, int64_t n, const char* op) {
    DITTO_CHECK(
        n >= 1, ValueError, op, "num_layers must be at least 1, got ", n);
    DITTO_CHECK(!layer.is_empty(), ValueError, op, "no layer given");
    ModuleList list;
    for (int64_t i = 0; i < n; ++i) {
      list->push_back(copy(layer));
    }
    return list;
  }
};

} // namespace

TransformerEncoderOptions::TransformerEncoderOptions(
    const TransformerEncoderLayerOptions& layer_options,
    int64_t num_layers)
    : encoder_layer_(TransformerEncoderLayer(layer_options)),
      num_layers_(num_layers) {}

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions o)
    : Module("TransformerEncoder"), options(std::move(o)) {
  layers = register_module(
      "layers",
      Copier::copies(
          options.encoder_layer(), options.num_layers(), "TransformerEncoder"));
  if (!options.norm().is_empty()) {
    norm = options.norm();
    register_module("norm", norm.ptr());
  }
}

Tensor TransformerEncoderImpl::forward(
    const Tensor& src,
    const Tensor& src_mask,
    const Tensor& src_key_padding_mask) const {
  ForwardScope scope(*this);
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->at<TransformerEncoderLayer>(i).forward(
        x, src_mask, src_key_padding_mask);
  }
  return norm.is_empty() ? x : norm.forward(x);
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(
    const TransformerDecoderLayerOptions& o)
    : Module("TransformerDecoderLayer"), options(o) {
  DITTO_CHECK(
      o.dim_feedforward() > 0,
      ValueError,
      "TransformerDecoderLayer",
      "dim_feedforward must be positive, got ",
      o.dim_feedforward());
  auto attention = [&] {
    return MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead())
                                  .dropout(o.dropout())
                                  .batch_first(o.batch_first()));
  };
  auto layer_norm = [&] {
    return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()));
  };
  // LibTorch's order (and torch.nn's): the draws follow it.
  self_attn = register_module("self_attn", attention());
  multihead_attn = register_module("multihead_attn", attention());
  linear1 =
      register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 =
      register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", layer_norm());
  norm2 = register_module("norm2", layer_norm());
  norm3 = register_module("norm3", layer_norm());
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

Tensor TransformerDecoderLayerImpl::forward(
    const Tensor& tgt,
    const Tensor& memory,
    const Tensor& tgt_mask,
    const Tensor& memory_mask,
    const Tensor& tgt_key_padding_mask,
    const Tensor& memory_key_padding_mask) const {
  ForwardScope scope(*this);
  auto self_block = [&](const Tensor& x) {
    return dropout1->forward(std::get<0>(self_attn->forward(
        x, x, x, tgt_key_padding_mask, /*need_weights=*/false, tgt_mask)));
  };
  auto memory_block = [&](const Tensor& x) {
    return dropout2->forward(std::get<0>(multihead_attn->forward(
        x,
        memory,
        memory,
        memory_key_padding_mask,
        /*need_weights=*/false,
        memory_mask)));
  };
  auto feed_forward = [&](const Tensor& x) {
    const Tensor h =
        transformer_activation(options.activation(), linear1->forward(x));
    return dropout3->forward(linear2->forward(dropout->forward(h)));
  };
  if (options.norm_first()) {
    Tensor x = add(tgt, self_block(norm1->forward(tgt)));
    x = add(x, memory_block(norm2->forward(x)));
    return add(x, feed_forward(norm3->forward(x)));
  }
  Tensor x = norm1->forward(add(tgt, self_block(tgt)));
  x = norm2->forward(add(x, memory_block(x)));
  return norm3->forward(add(x, feed_forward(x)));
}

TransformerDecoderOptions::TransformerDecoderOptions(
    const TransformerDecoderLayerOptions& layer_options,
    int64_t num_layers)
    : decoder_layer_(TransformerDecoderLayer(layer_options)),
      num_layers_(num_layers) {}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions o)
    : Module("TransformerDecoder"), options(std::move(o)) {
  layers = register_module(
      "layers",
      Copier::copies(
          options.decoder_layer(), options.num_layers(), "TransformerDecoder"));
  if (!options.norm().is_empty()) {
    norm = options.norm();
    register_module("norm", norm.ptr());
  }
}

Tensor TransformerDecoderImpl::forward(
    const Tensor& tgt,
    const Tensor& memory,
    const Tensor& tgt_mask,
    const Tensor& memory_mask,
    const Tensor& tgt_key_padding_mask,
    const Tensor& memory_key_padding_mask) const {
  ForwardScope scope(*this);
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i) {
    x = layers->at<TransformerDecoderLayer>(i).forward(
        x,
        memory,
        tgt_mask,
        memory_mask,
        tgt_key_padding_mask,
        memory_key_padding_mask);
  }
  return norm.is_empty() ? x : norm.forward(x);
}

TransformerImpl::TransformerImpl(TransformerOptions o)
    : Module("Transformer"), options(std::move(o)) {
  const TransformerOptions& t = options;
  auto final_norm = [&] {
    return AnyModule(
        LayerNorm(LayerNormOptions({t.d_model()}).eps(t.layer_norm_eps())));
  };
  if (!t.custom_encoder().is_empty()) {
    encoder = t.custom_encoder();
  } else {
    encoder = AnyModule(TransformerEncoder(
        TransformerEncoderOptions(
            TransformerEncoderLayerOptions(t.d_model(), t.nhead())
                .dim_feedforward(t.dim_feedforward())
                .dropout(t.dropout())
                .activation(t.activation())
                .layer_norm_eps(t.layer_norm_eps())
                .batch_first(t.batch_first())
                .norm_first(t.norm_first()),
            t.num_encoder_layers())
            .norm(final_norm())));
  }
  register_module("encoder", encoder.ptr());
  if (!t.custom_decoder().is_empty()) {
    decoder = t.custom_decoder();
  } else {
    decoder = AnyModule(TransformerDecoder(
        TransformerDecoderOptions(
            TransformerDecoderLayerOptions(t.d_model(), t.nhead())
                .dim_feedforward(t.dim_feedforward())
                .dropout(t.dropout())
                .activation(t.activation())
                .layer_norm_eps(t.layer_norm_eps())
                .batch_first(t.batch_first())
                .norm_first(t.norm_first()),
            t.num_decoder_layers())
            .norm(final_norm())));
  }
  register_module("decoder", decoder.ptr());
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor& p : parameters()) {
    if (p.dim() > 1) {
      init::xavier_uniform_(p);
    }
  }
}

Tensor TransformerImpl::forward(
    const Tensor& src,
    const Tensor& tgt,
    const Tensor& src_mask,
    const Tensor& tgt_mask,
    const Tensor& memory_mask,
    const Tensor& src_key_padding_mask,
    const Tensor& tgt_key_padding_mask,
    const Tensor& memory_key_padding_mask) const {
  ForwardScope scope(*this);
  const char* op = "Transformer";
  DITTO_CHECK(
      src.defined() && tgt.defined(), ValueError, op, "undefined src or tgt");
  const bool batched = src.dim() == 3;
  DITTO_CHECK(
      src.dim() == tgt.dim() && (batched || src.dim() == 2),
      ValueError,
      op,
      "src and tgt must both be 2-d or 3-d, got ",
      src.dim(),
      " and ",
      tgt.dim());
  const int64_t batch_dim = options.batch_first() ? 0 : 1;
  DITTO_CHECK(
      !batched || src.size(batch_dim) == tgt.size(batch_dim),
      ValueError,
      op,
      "the batch number of src and tgt must be equal, got ",
      src.size(batch_dim),
      " and ",
      tgt.size(batch_dim));
  DITTO_CHECK(
      src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
      ValueError,
      op,
      "the feature number of src and tgt must be equal to d_model ",
      options.d_model(),
      ", got ",
      src.size(-1),
      " and ",
      tgt.size(-1));
  const Tensor memory = encoder.forward(src, src_mask, src_key_padding_mask);
  return decoder.forward(
      tgt,
      memory,
      tgt_mask,
      memory_mask,
      tgt_key_padding_mask,
      memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  DITTO_CHECK(
      sz >= 0,
      ValueError,
      "Transformer",
      "generate_square_subsequent_mask: sz must be >= 0, got ",
      sz);
  if (sz == 0) {
    return zeros({0, 0});
  }
  return triu(
      full({sz, sz}, -std::numeric_limits<double>::infinity(), kFloat32), 1);
}

} // namespace ditto::nn
