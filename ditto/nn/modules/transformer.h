#pragma once

// LibTorch's TransformerEncoder, TransformerDecoderLayer, TransformerDecoder
// and Transformer (torch::nn's options, submodules, initial bits and
// forward), with torch.nn's norm_first and batch_first on the decoder
// layer. The encoder and the decoder hold num_layers copies of the layer
// they are given, with its weights (LibTorch's clone(), torch.nn's
// deepcopy: the copies draw nothing); Transformer then re-initializes every
// parameter of two or more dims with xavier_uniform_, in parameters() order,
// as both do. Inputs are (S, N, E) / (T, N, E), or (N, S, E) with
// batch_first. Forward and backward are one fixed chain per output element
// (the attention's matmul, softmax, matmul), and a sample's outputs have
// the same bits alone or in any batch, and at positions < t to t or to any
// T > t under a causal mask (R8, docs/determinism.md).

#include <cstdint>

#include "ditto/nn/modules/any.h"
#include "ditto/nn/modules/attention.h"
#include "ditto/nn/modules/container.h"

namespace ditto::nn {

struct DITTO_API TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer layer, int64_t num_layers)
      : encoder_layer_(std::move(layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(
      const TransformerEncoderLayerOptions& layer_options,
      int64_t num_layers);
  DITTO_NN_ARG(TransformerEncoderLayer, encoder_layer);
  DITTO_NN_ARG(int64_t, num_layers);
  DITTO_NN_ARG(AnyModule, norm);
};

class DITTO_API TransformerEncoderImpl : public Module {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer layer, int64_t num_layers)
      : TransformerEncoderImpl(
            TransformerEncoderOptions(std::move(layer), num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  Tensor forward(
      const Tensor& src,
      const Tensor& src_mask = {},
      const Tensor& src_key_padding_mask = {}) const;

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
DITTO_MODULE(TransformerEncoder);

// Self-attention, attention to the memory (the encoder's output) and a
// feed-forward block, each added to its input and layer-normalized (before
// the block with norm_first). Submodules in LibTorch's order: self_attn,
// multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3,
// dropout1, dropout2, dropout3.
class DITTO_API TransformerDecoderLayerImpl : public Module {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(
            TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(
      const TransformerDecoderLayerOptions& options);
  Tensor forward(
      const Tensor& tgt,
      const Tensor& memory,
      const Tensor& tgt_mask = {},
      const Tensor& memory_mask = {},
      const Tensor& tgt_key_padding_mask = {},
      const Tensor& memory_key_padding_mask = {}) const;

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr},
      dropout3{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
};
DITTO_MODULE(TransformerDecoderLayer);

struct DITTO_API TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer layer, int64_t num_layers)
      : decoder_layer_(std::move(layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(
      const TransformerDecoderLayerOptions& layer_options,
      int64_t num_layers);
  DITTO_NN_ARG(TransformerDecoderLayer, decoder_layer);
  DITTO_NN_ARG(int64_t, num_layers);
  DITTO_NN_ARG(AnyModule, norm);
};

class DITTO_API TransformerDecoderImpl : public Module {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer layer, int64_t num_layers)
      : TransformerDecoderImpl(
            TransformerDecoderOptions(std::move(layer), num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  Tensor forward(
      const Tensor& tgt,
      const Tensor& memory,
      const Tensor& tgt_mask = {},
      const Tensor& memory_mask = {},
      const Tensor& tgt_key_padding_mask = {},
      const Tensor& memory_key_padding_mask = {}) const;

  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
DITTO_MODULE(TransformerDecoder);

struct DITTO_API TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(
      int64_t d_model,
      int64_t nhead,
      int64_t num_encoder_layers = 6,
      int64_t num_decoder_layers = 6)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  DITTO_NN_ARG(int64_t, d_model) = 512;
  DITTO_NN_ARG(int64_t, nhead) = 8;
  DITTO_NN_ARG(int64_t, num_encoder_layers) = 6;
  DITTO_NN_ARG(int64_t, num_decoder_layers) = 6;
  DITTO_NN_ARG(int64_t, dim_feedforward) = 2048;
  DITTO_NN_ARG(double, dropout) = 0.1;
  DITTO_NN_ARG(TransformerActivation, activation) = ActivationKind::ReLU;
  DITTO_NN_ARG(AnyModule, custom_encoder);
  DITTO_NN_ARG(AnyModule, custom_decoder);
  // torch.nn's.
  DITTO_NN_ARG(double, layer_norm_eps) = 1e-5;
  DITTO_NN_ARG(bool, batch_first) = false;
  DITTO_NN_ARG(bool, norm_first) = false;
};

class DITTO_API TransformerImpl : public Module {
 public:
  explicit TransformerImpl(TransformerOptions options = {});
  Tensor forward(
      const Tensor& src,
      const Tensor& tgt,
      const Tensor& src_mask = {},
      const Tensor& tgt_mask = {},
      const Tensor& memory_mask = {},
      const Tensor& src_key_padding_mask = {},
      const Tensor& tgt_key_padding_mask = {},
      const Tensor& memory_key_padding_mask = {}) const;
  // xavier_uniform_ on every parameter of two or more dims, in
  // parameters() order (what the constructor does last).
  void reset_parameters();
  // [sz, sz] float32: -inf above the diagonal, 0 on and below it.
  static Tensor generate_square_subsequent_mask(int64_t sz);

  TransformerOptions options;
  AnyModule encoder, decoder;
};
DITTO_MODULE(Transformer);

} // namespace ditto::nn
