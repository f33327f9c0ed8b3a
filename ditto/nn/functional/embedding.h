#pragma once

// Embedding lookups and one-hot encoding (PyTorch's "sparse functions").

#include <cstdint>
#include <optional>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto::nn::functional {

// Rows of weight (num, dim) at int64 indices input: output input.sizes +
// {dim}. The backward adds each gradient row into its weight row with
// index_add_ (its deterministic or fast variant, as the policy says); rows
// at padding_idx get no gradient. With sparse, the weight's gradient is a
// sparse COO tensor instead: one entry per looked-up row (repeats kept, in
// the input's order), as PyTorch's. (torch.embedding takes weight first;
// this is F.embedding's order.)
DITTO_API Tensor embedding(
    const Tensor& input,
    const Tensor& weight,
    std::optional<int64_t> padding_idx = std::nullopt,
    bool sparse = false);

// ditto::one_hot (composite/embedding.ops.toml): int64 class indices ->
// (..., num_classes) int64 one-hot; num_classes -1 means max + 1.
// (ditto::embedding is torch.embedding: weight first.)
using ::ditto::one_hot;

} // namespace ditto::nn::functional
