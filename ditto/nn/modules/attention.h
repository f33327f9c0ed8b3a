#pragma once

// MultiheadAttention (LibTorch's torch::nn::MultiheadAttention) and
// RMSNorm (torch 2.4's): issue 60's attention in C++, over the declared
// ops scaled_dot_product_attention's parts and rms_norm.

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <variant>

#include "ditto/nn/module.h"
#include "ditto/nn/modules/dropout.h"
#include "ditto/nn/modules/linear.h"
#include "ditto/nn/modules/normalization.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

struct DITTO_API MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  DITTO_NN_ARG(int64_t, embed_dim);
  DITTO_NN_ARG(int64_t, num_heads);
  DITTO_NN_ARG(double, dropout) = 0.0;
  DITTO_NN_ARG(bool, bias) = true;
  // Not supported (ValueError when set): LibTorch's other projections.
  DITTO_NN_ARG(bool, add_bias_kv) = false;
  DITTO_NN_ARG(bool, add_zero_attn) = false;
  DITTO_NN_ARG(int64_t, kdim) = 0; // 0: embed_dim
  DITTO_NN_ARG(int64_t, vdim) = 0;
  // torch.nn's batch_first (LibTorch 1.13 has none): (N, L, E) in and out.
  DITTO_NN_ARG(bool, batch_first) = false;
};

// LibTorch's parameters (in_proj_weight, in_proj_bias, out_proj), their
// initial bits (out_proj drawn as a Linear, then in_proj_weight
// xavier_uniform_, the biases zero) and forward: query (L, N, E) or
// unbatched (L, E), key and value (S, N, E); attn_mask (L, S) or
// (N * heads, L, S), bool (true: masked) or float (added);
// key_padding_mask (N, S), bool (true: padding) or float; the weights
// averaged over heads unless average_attn_weights is false. Each output is
// one fixed chain (matmul, softmax, matmul), forward and backward, and a
// sample's bits do not depend on its batch (R8).
class DITTO_API MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(
            MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  // (output, weights); weights undefined unless need_weights.
  std::tuple<Tensor, Tensor> forward(
      const Tensor& query,
      const Tensor& key,
      const Tensor& value,
      const Tensor& key_padding_mask = {},
      bool need_weights = true,
      const Tensor& attn_mask = {},
      bool average_attn_weights = true) const;
  void reset_parameters();
  std::string extra_repr() const override;

  MultiheadAttentionOptions options;
  int64_t head_dim = 0;
  Tensor in_proj_weight, in_proj_bias; // bias undefined without bias
  Linear out_proj{nullptr};
};
DITTO_MODULE(MultiheadAttention);

struct DITTO_API RMSNormOptions {
  RMSNormOptions(Shape normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  DITTO_NN_ARG(Shape, normalized_shape);
  // Absent: the input dtype's epsilon.
  DITTO_NN_ARG(std::optional<double>, eps) = std::nullopt;
  DITTO_NN_ARG(bool, elementwise_affine) = true;
};

// x / sqrt(mean(x^2) + eps) * weight over the last dims (weight ones).
class DITTO_API RMSNormImpl : public Module {
 public:
  RMSNormImpl(int64_t size) : RMSNormImpl(RMSNormOptions({size})) {}
  explicit RMSNormImpl(const RMSNormOptions& options);
  Tensor forward(const Tensor& x) const;
  void reset_parameters();
  std::string extra_repr() const override;
  RMSNormOptions options;
  Tensor weight; // undefined without elementwise_affine
};
DITTO_MODULE(RMSNorm);

} // namespace ditto::nn

namespace ditto::nn {

// The feed-forward activation of the transformer layers: LibTorch's
// torch::kReLU and torch::kGELU, or any function.
enum class ActivationKind { ReLU, GELU };
using TransformerActivation =
    std::variant<ActivationKind, std::function<Tensor(const Tensor&)>>;

// The options of a transformer layer: LibTorch's
// TransformerEncoderLayerOptions and TransformerDecoderLayerOptions, two
// types with the same fields (Layer tells them apart).
template <typename Layer>
struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  DITTO_NN_ARG(int64_t, d_model);
  DITTO_NN_ARG(int64_t, nhead);
  DITTO_NN_ARG(int64_t, dim_feedforward) = 2048;
  DITTO_NN_ARG(double, dropout) = 0.1;
  DITTO_NN_ARG(TransformerActivation, activation) = ActivationKind::ReLU;
  // torch.nn's (LibTorch 1.13 has none of them).
  DITTO_NN_ARG(double, layer_norm_eps) = 1e-5;
  DITTO_NN_ARG(bool, batch_first) = false;
  DITTO_NN_ARG(bool, norm_first) = false;
};
class TransformerEncoderLayerImpl;
class TransformerDecoderLayerImpl;
using TransformerEncoderLayerOptions =
    TransformerLayerOptions<TransformerEncoderLayerImpl>;
using TransformerDecoderLayerOptions =
    TransformerLayerOptions<TransformerDecoderLayerImpl>;

// LibTorch's TransformerEncoderLayer: self-attention and a feed-forward
// block, each added to its input and layer-normalized (before the block
// with norm_first). Its submodules, in LibTorch's order (self_attn,
// linear1, dropout, linear2, norm1, norm2, dropout1, dropout2), draw
// PyTorch's initial bits. src (S, N, E), or (N, S, E) with batch_first.
class DITTO_API TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(
            TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(
      const TransformerEncoderLayerOptions& options);
  Tensor forward(
      const Tensor& src,
      const Tensor& src_mask = {},
      const Tensor& src_key_padding_mask = {}) const;

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
};
DITTO_MODULE(TransformerEncoderLayer);

} // namespace ditto::nn

namespace ditto {
// LibTorch's torch::kReLU and torch::kGELU (the transformer's activation).
inline constexpr nn::ActivationKind kReLU = nn::ActivationKind::ReLU;
inline constexpr nn::ActivationKind kGELU = nn::ActivationKind::GELU;
} // namespace ditto
