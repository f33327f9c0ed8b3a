// embedding: a row gather forward; its backward adds rows with index_add_
// (the registry's embedding_backward entry). one_hot.

#include "ditto/nn/functional/embedding.h"

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/sparse.h"

namespace ditto::nn::functional {

Tensor embedding(
    const Tensor& indices,
    const Tensor& weight,
    std::optional<int64_t> padding_idx,
    bool sparse) {
  const char* op = "embedding";
  if (detail::is_storage(weight)) { // exact: rows are copied
    return embedding(indices, detail::upcast(weight), padding_idx, sparse)
        .to(weight.dtype());
  }
  detail::OpScope scope(op, {weight, indices});
  DITTO_CHECK(
      weight.defined() && weight.dim() == 2,
      ValueError,
      op,
      "'weight' must be 2-D");
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64,
      TypeError,
      op,
      "Expected tensor for argument #1 'indices' to have scalar type Long");
  Tensor flat = indices.reshape({-1});
  Tensor rows = ::ditto::index_select(weight, 0, flat);
  Shape out_sizes = indices.sizes();
  out_sizes.push_back(weight.size(1));
  Tensor out = rows.reshape(out_sizes);
  const int64_t num = weight.size(0);
  return scope.done(
      out, [flat, num, padding_idx, sparse](const autograd::GradList& g) {
        Tensor go = g[0].reshape({flat.numel(), -1});
        Tensor idx = flat;
        if (padding_idx) {
          Tensor keep = ne(flat, *padding_idx);
          idx = masked_select(flat, keep);
          go = index_select(go, 0, masked_select(arange(flat.numel()), keep));
        }
        if (sparse) {
          // The rows as looked up: duplicates are summed by whoever reads it.
          return autograd::GradList{
              detail::make_sparse(
                  idx.reshape({1, -1}).clone(),
                  go.contiguous(),
                  {num, go.size(1)},
                  idx.numel() <= 1),
              Tensor()};
        }
        Tensor gw = zeros({num, go.size(1)}, go.dtype(), go.device());
        gw.index_add_(0, idx, go);
        return autograd::GradList{gw, Tensor()};
      });
}

} // namespace ditto::nn::functional

// The ATen forms (composite/embedding.ops.toml).
namespace ditto {

// torch.embedding's order (weight first); a negative padding_idx is none,
// as ATen's (F.embedding wraps a negative one before).
Tensor embedding(
    const Tensor& weight,
    const Tensor& indices,
    int64_t padding_idx,
    bool scale_grad_by_freq,
    bool sparse) {
  DITTO_CHECK(
      !scale_grad_by_freq,
      ValueError,
      "embedding",
      "scale_grad_by_freq is not supported");
  return nn::functional::embedding(
      indices,
      weight,
      padding_idx < 0 ? std::nullopt : std::optional<int64_t>(padding_idx),
      sparse);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  const Tensor& indices = self;
  detail::OpScope op("one_hot", {indices});
  DITTO_CHECK(
      indices.defined() && indices.dtype() == kInt64,
      TypeError,
      "one_hot",
      "one_hot is only applicable to index tensor (int64)");
  int64_t n = num_classes;
  if (n == -1) {
    DITTO_CHECK(
        indices.numel() > 0,
        ValueError,
        "one_hot",
        "Can not infer total number of classes from empty tensor.");
    n = indices.max().item<int64_t>() + 1;
  }
  DITTO_CHECK(
      n >= 0 && (indices.numel() == 0 || indices.min().item<int64_t>() >= 0),
      ValueError,
      "one_hot",
      "Class values must be non-negative.");
  DITTO_CHECK(
      indices.numel() == 0 || indices.max().item<int64_t>() < n,
      ValueError,
      "one_hot",
      "Class values must be smaller than num_classes.");
  Shape s = indices.sizes();
  s.push_back(n);
  Tensor out = zeros(s, kInt64);
  if (indices.numel() > 0) {
    out.scatter_(indices.dim(), indices.unsqueeze(-1), Scalar(int64_t(1)));
  }
  return op.done(out);
}

} // namespace ditto
