#include "ditto/nn/modules/embedding.h"

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"
#include "ditto/nn/init.h"
#include "ditto/ops/index.h"

namespace ditto::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o)
    : EmbeddingImpl("Embedding", o) {}

EmbeddingImpl::EmbeddingImpl(const char* name, const EmbeddingOptions& o)
    : Module(name), options(o) {
  const int64_t n = o.num_embeddings();
  check_positive(n, name, "num_embeddings");
  check_positive(o.embedding_dim(), name, "embedding_dim");
  if (o.padding_idx()) {
    const int64_t p = *o.padding_idx();
    DITTO_CHECK(
        p < n && p >= -n,
        ValueError,
        name,
        "Padding_idx must be within num_embeddings, got ",
        p);
    options.padding_idx(p < 0 ? p + n : p);
  }
  weight = register_parameter("weight", uninitialized({n, o.embedding_dim()}));
  defer_reset([w = weight, pad = options.padding_idx()] {
    init::normal_(w);
    if (pad) {
      autograd::NoGradGuard no_grad;
      w.select(0, *pad).fill_(0.0);
    }
  });
}

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  ForwardScope scope(*this);
  return functional::embedding(
      indices, weight, options.padding_idx(), options.sparse());
}

std::string EmbeddingImpl::extra_repr() const {
  std::string s = std::to_string(options.num_embeddings()) + ", " +
      std::to_string(options.embedding_dim());
  if (options.padding_idx()) {
    s += ", padding_idx=" + std::to_string(*options.padding_idx());
  }
  if (options.sparse()) {
    s += ", sparse=True";
  }
  return s;
}

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingOptions& o, std::string m)
    : EmbeddingImpl("EmbeddingBag", o), mode(std::move(m)) {
  DITTO_CHECK(
      mode == "sum" || mode == "mean" || mode == "max",
      ValueError,
      "EmbeddingBag",
      "mode has to be one of sum, mean or max, got ",
      mode);
}

Tensor EmbeddingBagImpl::forward(
    const Tensor& input,
    const Tensor& offsets,
    const Tensor& per_sample_weights) const {
  ForwardScope scope(*this);
  return embedding_bag(
      input,
      weight,
      offsets,
      mode,
      per_sample_weights,
      false,
      options.padding_idx());
}

std::string EmbeddingBagImpl::extra_repr() const {
  return EmbeddingImpl::extra_repr() + ", mode='" + mode + "'";
}

} // namespace ditto::nn
