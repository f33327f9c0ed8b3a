#pragma once

// The embedding layers: Embedding and EmbeddingBag.

#include <optional>
#include <string>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

struct DITTO_API EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  DITTO_NN_ARG(int64_t, num_embeddings);
  DITTO_NN_ARG(int64_t, embedding_dim);
  // Negative counts from the end; the row starts at zero and gets no
  // gradient.
  DITTO_NN_ARG(std::optional<int64_t>, padding_idx);
  // The weight's gradient is a sparse COO tensor (for SparseAdam, or SGD
  // without momentum and weight decay).
  DITTO_NN_ARG(bool, sparse) = false;
};

// weight (num, dim) normal_(0, 1), then the padding row zeroed. The
// backward adds into the weight gradient with index_add_ (deterministic or
// fast variant, as the determinism policy says).
class DITTO_API EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  Tensor forward(const Tensor& indices) const;
  std::string extra_repr() const override;
  EmbeddingOptions options;
  Tensor weight;

 protected:
  EmbeddingImpl(const char* name, const EmbeddingOptions& options);
};
DITTO_MODULE(Embedding);

// Sums, means or maxima of bags of rows (embedding_bag); mode "mean" by
// default. forward(input, offsets) for 1-D input, forward(input) for a bag
// per row of a 2-D input.
class DITTO_API EmbeddingBagImpl : public EmbeddingImpl {
 public:
  EmbeddingBagImpl(
      int64_t num_embeddings,
      int64_t embedding_dim,
      std::string mode = "mean")
      : EmbeddingBagImpl(
            EmbeddingOptions(num_embeddings, embedding_dim),
            std::move(mode)) {}
  EmbeddingBagImpl(const EmbeddingOptions& options, std::string mode = "mean");
  Tensor forward(
      const Tensor& input,
      const Tensor& offsets = {},
      const Tensor& per_sample_weights = {}) const;
  std::string extra_repr() const override;
  std::string mode;
};
DITTO_MODULE(EmbeddingBag);

} // namespace ditto::nn
