// embedding: a row gather forward; its backward adds rows with index_add_
// (the registry's embedding_backward entry).
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/nn_ops.h"

namespace ditto {

Tensor embedding(
    const Tensor& weight,
    const Tensor& indices,
    std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  detail::OpScope scope(op, {weight});
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
  return scope.done(out, [flat, num, padding_idx](const autograd::GradList& g) {
    Tensor go = g[0].reshape({flat.numel(), -1});
    Tensor idx = flat;
    if (padding_idx) {
      Tensor keep = ne(flat, *padding_idx);
      idx = masked_select(flat, keep);
      go = index_select(go, 0, masked_select(arange(flat.numel()), keep));
    }
    Tensor gw = zeros({num, go.size(1)}, go.dtype());
    gw.index_add_(0, idx, go);
    return autograd::GradList{gw};
  });
}

} // namespace ditto
