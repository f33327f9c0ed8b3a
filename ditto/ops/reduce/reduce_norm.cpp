// norm, all and any: reductions made of other ops (their gradients too).

#include "ditto/ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto {

namespace {

// The reduced dims, wrapped (wrap_dim) and sorted; every dim for an empty
// list.
IntList reduced_dims(const Tensor& a, const IntList& dims, const char* op) {
  IntList out;
  if (dims.empty()) {
    for (int64_t d = 0; d < a.dim(); ++d) {
      out.push_back(d);
    }
    return out;
  }
  for (int64_t d : dims) {
    out.push_back(wrap_dim(d, a.dim(), op));
  }
  std::sort(out.begin(), out.end());
  const auto twice = std::adjacent_find(out.begin(), out.end());
  DITTO_CHECK(
      twice == out.end(),
      ValueError,
      op,
      "dim ",
      twice == out.end() ? 0 : *twice,
      " appears multiple times in the list of dims");
  return out;
}

// g (reduced over dims, kept or not) shaped to broadcast against the input.
Tensor unreduce(Tensor g, const IntList& dims, bool keepdim, int64_t rank) {
  if (!keepdim && rank > 0) {
    for (int64_t d : dims) {
      g = g.unsqueeze(d);
    }
  }
  return g;
}

} // namespace

Tensor norm(const Tensor& a, const Scalar& p) {
  return norm(a, p, IntList{}, false);
}

Tensor norm(
    const Tensor& a,
    const std::optional<Scalar>& p,
    const IntArg& dims_arg,
    bool keepdim) {
  const char* name = "norm";
  const double pv = p ? p->to<double>() : 2.0;
  DITTO_CHECK(a.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      is_floating(a.dtype()),
      TypeError,
      name,
      "expected a floating input, got ",
      a.dtype());
  DITTO_CHECK(
      pv >= 0 && !std::isnan(pv),
      ValueError,
      name,
      "p must be a non-negative number or inf, got ",
      pv);
  const IntList dims = reduced_dims(a, dims_arg, name);
  if (pv != 2.0) {
    // The other norms are their parts (their gradients too).
    detail::OpScope op(name, {a}, detail::OpScope::kComposite);
    Tensor m = abs(a);
    if (pv == 0.0) {
      return op.done(sum(ne(a, 0.0), dims, keepdim).to(a.dtype()));
    }
    if (std::isinf(pv)) {
      if (a.numel() == 0) {
        return op.done(sum(m, dims, keepdim));
      }
      for (int64_t d : dims) {
        m = max(m, d, true).first;
      }
      if (!keepdim) {
        for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
          m = m.squeeze(*it);
        }
      }
      return op.done(m);
    }
    if (pv == 1.0) {
      return op.done(sum(m, dims, keepdim));
    }
    return op.done(pow(sum(pow(m, pv), dims, keepdim), 1.0 / pv));
  }
  detail::OpScope scope(name, {a});
  Tensor out = sqrt(sum(mul(a, a), dims, keepdim));
  return scope.done(
      out,
      [sa = scope.save(a), so = scope.save(out), dims, keepdim](
          const autograd::GradList& g) {
        Tensor x = sa.unpack();
        const int64_t rank = x.dim();
        Tensor n = unreduce(so.unpack(), dims, keepdim, rank);
        Tensor scale = div(unreduce(g[0], dims, keepdim, rank), n);
        // 0 / 0 where the norm is 0: PyTorch's gradient there is 0.
        return autograd::GradList{where(eq(n, 0.0), 0.0, mul(x, scale))};
      });
}

namespace {

// all/any: counts of zeros (all) or nonzeros (any) over dims.
Tensor truth(
    const Tensor& a,
    std::optional<int64_t> dim,
    bool keepdim,
    bool is_all) {
  const char* name = is_all ? "all" : "any";
  DITTO_CHECK(a.defined(), ValueError, name, "undefined tensor");
  detail::OpScope op(name, {a}, detail::OpScope::kComposite);
  Tensor hits = is_all ? eq(a, 0) : ne(a, 0);
  IntList dims;
  if (dim) {
    dims = reduced_dims(a, {*dim}, name);
  }
  Tensor count = dim ? sum(hits, dims, keepdim) : sum(hits);
  Tensor out = is_all ? eq(count, 0) : ne(count, 0);
  return op.done(a.dtype() == kUInt8 ? out.to(kUInt8) : out);
}

} // namespace

Tensor all(const Tensor& a) {
  return truth(a, std::nullopt, false, true);
}
Tensor all(const Tensor& a, int64_t dim, bool keepdim) {
  return truth(a, dim, keepdim, true);
}
Tensor any(const Tensor& a) {
  return truth(a, std::nullopt, false, false);
}
Tensor any(const Tensor& a, int64_t dim, bool keepdim) {
  return truth(a, dim, keepdim, false);
}

} // namespace ditto
