// matmul (torch.matmul's broadcasting and folding), addmm and linear, on
// the batched GEMM of linalg.cpp.

#include <algorithm>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/ops/detail/gemm_impl.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/sparse.h"

namespace ditto {

using namespace gemm_impl;

namespace {

// matmul's operands agree on k (a's last dim, b's rows).
void check_inner_dims(
    const Tensor& a,
    const Tensor& b,
    int64_t ka,
    int64_t kb,
    const char* name) {
  DITTO_CHECK(
      ka == kb,
      ValueError,
      name,
      "a ",
      shape_str(a.sizes()),
      " and b ",
      shape_str(b.sizes()),
      " cannot be multiplied (",
      ka,
      " != ",
      kb,
      ")");
}

// Note [matmul folds a batch into rows]
// A batch of matrices times one matrix (or vector) is one product: a's
// leading dims fold into its rows, as PyTorch's matmul does (mm of
// a.reshape(-1, k)). Each output row has the bits it has in any product
// with the same k (the GEMM's chain per row does not depend on the number
// of rows, R8), and the backward is two matrix products: b's gradient
// sums over the batch inside one product's k rather than as one product
// per batch matrix followed by a sum (12x slower for nn.Linear on [B, T,
// K] inputs).
Tensor matmul_folded(const Tensor& a, const Tensor& b) {
  const char* name = "matmul";
  detail::OpScope op(name, {a, b}, detail::OpScope::kComposite);
  check_float_pair(a, b, name);
  const int64_t k = a.size(-1);
  check_inner_dims(a, b, k, b.size(0), name);
  Shape out_shape(a.sizes().begin(), a.sizes().end() - 1);
  const int64_t rows = checked_numel(out_shape, name);
  Tensor out = matmul(a.reshape({rows, k}), b);
  if (b.dim() == 2) {
    out_shape.push_back(b.size(1));
  }
  return op.done(out.reshape(out_shape));
}

} // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  const char* name = "matmul";
  if (storage_pair(a, b)) {
    return matmul(a.to(kFloat32), b.to(kFloat32)).to(a.dtype());
  }
  if (a.defined() && b.defined() && a.dim() >= 3 &&
      (b.dim() == 1 || b.dim() == 2)) {
    return matmul_folded(a, b);
  }
  detail::OpScope op(name, {a, b});
  check_float_pair(a, b, name);
  DITTO_CHECK(
      a.dim() >= 1 && b.dim() >= 1,
      ValueError,
      name,
      "both arguments need at least 1 dimension, got ",
      a.dim(),
      "-d and ",
      b.dim(),
      "-d");
  // 1-d operands become [1, k] and [k, 1], and those dims leave the result.
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  const int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  check_inner_dims(a, b, k, b2.size(-2), name);
  Shape ba(a2.sizes().begin(), a2.sizes().end() - 2);
  Shape bb(b2.sizes().begin(), b2.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, name);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {m, k});
  eb.insert(eb.end(), {k, n});
  Tensor xa = a2.expand(ea), xb = b2.expand(eb);
  // Element offsets of every batch matrix (broadcast dims have stride 0).
  const int64_t batches = checked_numel(batch, name);
  BatchOffsets off;
  std::vector<int64_t> pos(batch.size(), 0);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += pos[d] * xa.stride(int64_t(d));
      ob += pos[d] * xb.stride(int64_t(d));
    }
    off.a.push_back(oa);
    off.b.push_back(ob);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++pos[d] < batch[d]) {
        break;
      }
      pos[d] = 0;
    }
  }
  Shape out_shape = batch;
  out_shape.insert(out_shape.end(), {m, n});
  Tensor out = detail::new_tensor(out_shape, a.dtype(), a.device());
  gemm_batched(
      xa,
      xa.stride(-2),
      xa.stride(-1),
      xb,
      xb.stride(-2),
      xb.stride(-1),
      off,
      m,
      k,
      n,
      out,
      name);
  if (a.dim() == 1) {
    out = out.squeeze(int64_t(out.dim()) - 2);
  }
  if (b.dim() == 1) {
    out = out.squeeze(int64_t(out.dim()) - 1);
  }
  // Products at the broadcast batch shape, summed back to each operand's
  // (fixed order), then the 1-d operands' dims dropped again.
  return op.done(
      out, [sa = op.save(a), sb = op.save(b)](const autograd::GradList& grads) {
        Tensor a = sa.unpack(), b = sb.unpack();
        if (a.dim() == 2 && b.dim() == 2) {
          return product_grads(
              a, b, grads[0], [](const Tensor& x, const Tensor& y) {
                return matmul(x, y);
              });
        }
        Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
        Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
        Tensor g = grads[0];
        if (a.dim() == 1) {
          g = g.unsqueeze(b.dim() == 1 ? g.dim() : g.dim() - 1);
        }
        if (b.dim() == 1) {
          g = g.unsqueeze(g.dim());
        }
        Tensor ga = matmul(g, b2.transpose(-1, -2));
        Tensor gb = matmul(a2.transpose(-1, -2), g);
        return autograd::GradList{
            sum_to_size(ga, a2.sizes()).reshape(a.sizes()),
            sum_to_size(gb, b2.sizes()).reshape(b.sizes())};
      });
}

Tensor addmm(
    const Tensor& input,
    const Tensor& a,
    const Tensor& b,
    const Scalar& beta,
    const Scalar& alpha) {
  if (a.defined() && a.impl()->is_sparse()) {
    return sparse::addmm(input, a, b, beta, alpha);
  }
  const char* name = "addmm";
  if (storage_pair(a, b) && input.defined() && input.dtype() == a.dtype()) {
    return addmm(
               input.to(kFloat32), a.to(kFloat32), b.to(kFloat32), beta, alpha)
        .to(a.dtype());
  }
  detail::OpScope op(name, {input, a, b});
  check_float_pair(a, b, name);
  DITTO_CHECK(
      input.defined() && input.dtype() == a.dtype(),
      TypeError,
      name,
      "input must have the dtype of a and b (",
      a.dtype(),
      ")");
  DITTO_CHECK(
      a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
      ValueError,
      name,
      "a ",
      shape_str(a.sizes()),
      " and b ",
      shape_str(b.sizes()),
      " cannot be multiplied");
  const Shape out_shape{a.size(0), b.size(1)};
  DITTO_CHECK(
      broadcast_shapes(input.sizes(), out_shape, name) == out_shape,
      ValueError,
      name,
      "input ",
      shape_str(input.sizes()),
      " does not broadcast to the product's shape ",
      shape_str(out_shape));
  Tensor ab = mm_impl(a, b, name);
  const bool alpha_one = alpha.to<double>() == 1.0;
  const double beta_v = beta.to<double>();
  if (!alpha_one) {
    ab = mul(ab, alpha);
  }
  Tensor out =
      beta_v == 0.0 ? ab : add(ab, beta_v == 1.0 ? input : mul(input, beta));
  return op.done(
      out,
      [sa = op.save(a), sb = op.save(b), alpha, beta, beta_v](
          const autograd::GradList& g) {
        Tensor ga = mm(g[0], sb.unpack().t());
        Tensor gb = mm(sa.unpack().t(), g[0]);
        if (alpha.to<double>() != 1.0) {
          ga = mul(ga, alpha);
          gb = mul(gb, alpha);
        }
        Tensor gi = beta_v == 0.0 ? Tensor()
            : beta_v == 1.0       ? g[0]
                                  : mul(g[0], beta);
        return autograd::GradList{gi, ga, gb};
      });
}

Tensor linear(
    const Tensor& x,
    const Tensor& weight,
    const std::optional<Tensor>& bias_or_none) {
  const char* name = "linear";
  const Tensor bias = bias_or_none.value_or(Tensor());
  if (storage_pair(x, weight) &&
      (!bias.defined() || bias.dtype() == x.dtype())) {
    // Note [Storage dtypes]: product and bias in float32, rounded once (as
    // PyTorch's bfloat16 linear).
    return linear(
               x.to(kFloat32),
               weight.to(kFloat32),
               bias.defined() ? bias.to(kFloat32) : bias)
        .to(x.dtype());
  }
  // Composite: matmul, t and add record the gradient.
  detail::OpScope op(name, {x, weight, bias}, detail::OpScope::kComposite);
  check_float_pair(x, weight, name);
  DITTO_CHECK(
      weight.dim() == 2,
      ValueError,
      name,
      "weight must be [out_features, in_features], got ",
      shape_str(weight.sizes()));
  Tensor y = matmul(x, weight.t());
  if (bias.defined()) {
    DITTO_CHECK(
        bias.dtype() == x.dtype() && bias.dim() == 1 &&
            bias.size(0) == weight.size(0),
        ValueError,
        name,
        "bias must be [",
        weight.size(0),
        "] of dtype ",
        x.dtype());
    y = add(y, bias);
  }
  return op.done(y);
}

} // namespace ditto
