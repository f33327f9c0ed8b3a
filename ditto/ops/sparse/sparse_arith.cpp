// Sums and products with sparse operands, with their gradients: sparse +
// sparse and dense + sparse (values_at, sparse_add, sparse_add_,
// sparse_zero_), and sparse.mm, sparse.addmm, bmm with a sparse operand
// (docs/sparse.md).
//
// Note [Sparse products]
// sparse.mm / addmm / bmm compute out = beta * input, then for each entry
// e = (r, c, v), in stored order, out[r, :] = fma(alpha * v, dense[c, :],
// out[r, :]) (PyTorch's CPU loop: a BLAS axpy per entry). The updates of one
// output row are the entries of that row: scatter_updates (Note [Owner
// computes]) runs them in stored order per row in the deterministic variant, so
// the result has the serial loop's bits for any thread count. The fast variant
// lets threads add into shared rows as they get there (a row's sum then
// depends on timing). The dense operand's gradient is the same scatter with
// rows and columns swapped, dense_grad[c, :] += (alpha * v) * grad[r, :],
// with the same two variants; the values' gradient is one dot product per
// entry, alpha * sum_j grad[r, j] * dense[c, j] over j ascending (one
// writer each: deterministic). sparse_bmm coalesces its sparse operand
// first, as PyTorch's bmm does; mm and addmm take the entries as stored.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <utility>

#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/detail/sparse_impl.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/ops/sparse.h"

namespace ditto {

using namespace sparse_impl;

namespace detail {

Tensor values_at(const Tensor& t, const Tensor& indices, int64_t sparse_dim) {
  const char* op = "sparse_mask";
  const Tensor idx = indices.contiguous();
  const std::vector<int64_t> pos = positions(idx, t.sizes(), op);
  const int64_t n = int64_t(pos.size());
  Shape vs{n};
  vs.insert(vs.end(), t.sizes().begin() + sparse_dim, t.sizes().end());
  if (!t.impl()->is_sparse()) {
    const Tensor x = t.contiguous();
    Shape lead(t.sizes().begin(), t.sizes().begin() + sparse_dim);
    const int64_t rows = checked_numel(lead, op);
    return gather_rows(x, pos, rows > 0 ? x.numel() / rows : 0, vs);
  }
  const SparseParts& p = sparse_parts(t, op);
  if (p.indices.is_same(indices) || p.indices.is_same(idx)) {
    return p.values; // the same entries
  }
  const SparseParts c = coalesced(t, op);
  const std::vector<int64_t> have = positions(c.indices, t.sizes(), op);
  const Tensor v = c.values.contiguous();
  Tensor out = zeros(vs, t.dtype());
  const size_t row_bytes = size_t(row_len_of(v)) * t.element_size();
  const char* src = static_cast<const char*>(v.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t e = 0; e < n; ++e) {
    auto it = std::lower_bound(have.begin(), have.end(), pos[size_t(e)]);
    if (it != have.end() && *it == pos[size_t(e)]) {
      std::memcpy(
          dst + size_t(e) * row_bytes,
          src + size_t(it - have.begin()) * row_bytes,
          row_bytes);
    }
  }
  return out;
}

Tensor sparse_add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const char* op = "sparse_add";
  OpScope scope(op, {a, b});
  DITTO_CHECK(a.defined() && b.defined(), ValueError, op, "undefined tensor");
  DITTO_CHECK(
      !a.impl()->is_sparse() || b.impl()->is_sparse(),
      TypeError,
      op,
      "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  DITTO_CHECK(
      a.sizes() == b.sizes(),
      ValueError,
      op,
      "sizes do not match: ",
      shape_str(a.sizes()),
      " and ",
      shape_str(b.sizes()),
      " (sums with a sparse tensor do not broadcast)");
  DITTO_CHECK(
      a.dtype() == b.dtype(),
      TypeError,
      op,
      "dtypes do not match: ",
      dtype_name(a.dtype()),
      " and ",
      dtype_name(b.dtype()),
      " (sums with a sparse tensor do not promote)");
  const bool unit = alpha.is_integral() && alpha.to<int64_t>() == 1;
  Tensor out;
  if (a.impl()->is_sparse()) {
    const SparseParts& pa = checked_parts(a, op);
    const SparseParts& pb = checked_parts(b, op);
    DITTO_CHECK(
        sparse_dim_of(pa) == sparse_dim_of(pb),
        ValueError,
        op,
        "sparse_dim of the two operands differs: ",
        sparse_dim_of(pa),
        " and ",
        sparse_dim_of(pb));
    Tensor vb = unit ? pb.values : mul(pb.values, alpha);
    out = make_sparse(
        cat({pa.indices, pb.indices}, 1),
        cat({pa.values, vb}, 0),
        a.sizes(),
        nnz_of(pa) + nnz_of(pb) <= 1 && (nnz_of(pa) == 0 || nnz_of(pb) == 0));
  } else {
    out = a.clone();
    add_entries_into(out, checked_parts(b, op), alpha, op);
  }
  return scope.done(out, [alpha, unit](const autograd::GradList& g) {
    return autograd::GradList{g[0], unit ? g[0] : mul(g[0], alpha)};
  });
}

Tensor& sparse_add_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  const char* op = "sparse_add_";
  OpScope scope(op, {self, other}, OpScope::kInplace);
  DITTO_CHECK(
      !autograd::GradMode::is_enabled() ||
          (!self.requires_grad() && !other.requires_grad()),
      ValueError,
      op,
      "in-place sums with a sparse tensor are not recorded by autograd: use "
      "add() or run under NoGradGuard");
  Tensor sum = [&] {
    autograd::NoGradGuard no_grad;
    return sparse_add(self, other, alpha);
  }();
  if (self.impl()->is_sparse()) {
    self.impl()->set_sparse(sum.impl()->sparse());
  } else {
    // Validated and computed before anything is written.
    copy_into(self, sum, op);
  }
  return scope.done_inplace(self);
}

Tensor& sparse_zero_(Tensor& self) {
  OpScope scope("sparse_zero", {self}, OpScope::kInplace);
  const SparseParts& p = sparse_parts(self, "sparse_zero");
  Shape vs = p.values.sizes();
  vs[0] = 0;
  self.impl()->set_sparse(make_sparse(
                              detail::new_tensor({sparse_dim_of(p), 0}, kInt64),
                              detail::new_tensor(vs, p.values.dtype()),
                              self.sizes(),
                              true)
                              .impl()
                              ->sparse());
  return scope.done_inplace(self);
}

} // namespace detail

namespace {

// One batch of sparse-dense products: the entries' output rows (key),
// dense rows (src) and coefficients alpha * v.
struct Entries {
  std::vector<int64_t> key;
  std::vector<int64_t> src;
  Tensor coef; // (nnz,), the dense operand's dtype
};

// out (keys, m) [key_e, :] += coef_e * dense[src_e, :] for every entry,
// by the variant the policy picks.
void scatter_products(
    const Entries& en,
    const Tensor& dense,
    Tensor& out,
    bool swap_roles) {
  const int64_t n = int64_t(en.key.size());
  const int64_t m = dense.size(-1);
  const int64_t keys = out.size(0);
  const std::vector<int64_t>& key = swap_roles ? en.src : en.key;
  const std::vector<int64_t>& src = swap_roles ? en.key : en.src;
  dispatch_dtype(out.dtype(), "sparse_mm", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* d = dense.data_ptr<T>();
      const T* c = en.coef.data_ptr<T>();
      T* o = out.data_ptr<T>();
      detail::scatter_updates(
          detail::use_deterministic<detail::Combine::kAdd, T>(),
          n,
          keys,
          m,
          [&](int64_t e) { return key[size_t(e)]; },
          [&](int64_t e, bool atomic) {
            T* row = o + key[size_t(e)] * m;
            const T* in = d + src[size_t(e)] * m;
            const T ce = c[e];
            if (atomic) {
              for (int64_t j = 0; j < m; ++j) {
                std::atomic_ref<T> r(row[j]);
                T cur = r.load(std::memory_order_relaxed);
                while (!r.compare_exchange_weak(
                    cur, std::fma(ce, in[j], cur), std::memory_order_relaxed)) {
                }
              }
            } else {
              axpy_row<T>(row, in, m, ce);
            }
          });
    }
  });
}

// The values' gradient: alpha * dot(grad[key_e, :], dense[src_e, :]).
Tensor entry_dots(
    const Entries& en,
    const Tensor& grad,
    const Tensor& dense,
    const Scalar& alpha) {
  const int64_t n = int64_t(en.key.size());
  const int64_t m = dense.size(-1);
  Tensor out = detail::new_tensor({n}, dense.dtype());
  dispatch_dtype(dense.dtype(), "sparse_mm", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* g = grad.data_ptr<T>();
      const T* d = dense.data_ptr<T>();
      const T a = alpha.to<T>();
      T* o = out.data_ptr<T>();
      parallel_for(
          0,
          n,
          std::max<int64_t>(1, 4096 / std::max<int64_t>(m, 1)),
          [&](int64_t e0, int64_t e1) {
            for (int64_t e = e0; e < e1; ++e) {
              const T* gr = g + en.key[size_t(e)] * m;
              const T* dr = d + en.src[size_t(e)] * m;
              T acc = T(0);
              for (int64_t j = 0; j < m; ++j) {
                acc = T(acc + T(gr[j] * dr[j]));
              }
              o[e] = T(a * acc);
            }
          });
    }
  });
  return out;
}

// The entries of a sparse (batch?, rows, cols) operand whose dense partner
// has `inner` rows per batch: output row batch * rows + r, dense row
// batch * inner + c.
Entries entries_of(
    const SparseParts& p,
    int64_t rows,
    int64_t inner,
    const Scalar& alpha,
    Dtype dt) {
  const int64_t n = nnz_of(p), sd = sparse_dim_of(p);
  const Tensor idx = p.indices.contiguous();
  const int64_t* ip = idx.data_ptr<int64_t>();
  Entries en;
  en.key.resize(size_t(n));
  en.src.resize(size_t(n));
  for (int64_t e = 0; e < n; ++e) {
    const int64_t b = sd == 3 ? ip[e] : 0;
    const int64_t r = ip[(sd - 2) * n + e], c = ip[(sd - 1) * n + e];
    en.key[size_t(e)] = b * rows + r;
    en.src[size_t(e)] = b * inner + c;
  }
  en.coef = mul(p.values.to(dt), alpha).contiguous();
  return en;
}

void check_product(
    const Tensor& s,
    const Tensor& d,
    int64_t rank,
    const char* op) {
  DITTO_CHECK(s.defined() && d.defined(), ValueError, op, "undefined tensor");
  const SparseParts& p = checked_parts(s, op);
  require_strided(d, op);
  DITTO_CHECK(
      s.dim() == rank && sparse_dim_of(p) == rank && d.dim() == rank,
      ValueError,
      op,
      "expected a sparse ",
      rank,
      "-d tensor with no dense dims and a dense ",
      rank,
      "-d tensor, got sizes ",
      shape_str(s.sizes()),
      " (sparse_dim ",
      sparse_dim_of(p),
      ") and ",
      shape_str(d.sizes()));
  DITTO_CHECK(
      is_floating(d.dtype()) && s.dtype() == d.dtype(),
      TypeError,
      op,
      "expected floating tensors of one dtype, got ",
      dtype_name(s.dtype()),
      " and ",
      dtype_name(d.dtype()));
  DITTO_CHECK(
      s.size(-1) == d.size(-2) && (rank == 2 || s.size(0) == d.size(0)),
      ValueError,
      op,
      "sizes do not match: ",
      shape_str(s.sizes()),
      " @ ",
      shape_str(d.sizes()));
}

// beta * input + alpha * (s @ d) for sparse s (2-d, or 3-d batched).
Tensor sparse_product(
    const char* op,
    const Tensor& input,
    const Tensor& s,
    const Tensor& d,
    const Scalar& beta,
    const Scalar& alpha,
    int64_t rank) {
  detail::OpScope scope(op, {input, s, d});
  check_product(s, d, rank, op);
  const int64_t batch = rank == 3 ? s.size(0) : 1;
  const int64_t rows = s.size(-2), inner = s.size(-1), m = d.size(-1);
  Shape out_sizes = rank == 3 ? Shape{batch, rows, m} : Shape{rows, m};
  checked_numel(out_sizes, op);
  const bool zero_beta = beta.to<double>() == 0.0;
  Tensor out;
  if (input.defined() && !zero_beta) {
    require_strided(input, op);
    DITTO_CHECK(
        expands_to(input.sizes(), out_sizes) && input.dtype() == d.dtype(),
        ValueError,
        op,
        "input of sizes ",
        shape_str(input.sizes()),
        " and dtype ",
        dtype_name(input.dtype()),
        " does not broadcast to the output ",
        shape_str(out_sizes),
        " of dtype ",
        dtype_name(d.dtype()));
    out = mul(input.expand(out_sizes), beta).contiguous();
    if (out.is_same(input) || shares_storage(out, input)) {
      out = out.clone();
    }
  } else {
    out = zeros(out_sizes, d.dtype());
  }
  // bmm coalesces first, as PyTorch's.
  const SparseParts p = rank == 3 ? coalesced(s, op) : checked_parts(s, op);
  const Entries en = entries_of(p, rows, inner, alpha, d.dtype());
  const Tensor dc = d.contiguous();
  Tensor flat = out.view({batch * rows, m});
  scatter_products(en, dc, flat, false);
  // Only the gradients some input asks for.
  const bool want_input = input.defined() && input.requires_grad();
  const bool want_values = s.requires_grad();
  const bool want_dense = d.requires_grad();
  return scope.done(
      out,
      [en,
       dc,
       p,
       alpha,
       beta,
       sizes = s.sizes(),
       batch,
       inner,
       m,
       want_input,
       want_values,
       want_dense](const autograd::GradList& g) {
        const Tensor go = g[0].contiguous();
        const Tensor gflat = go.view({-1, m});
        autograd::GradList grads(3);
        if (want_input) {
          grads[0] = mul(go, beta);
        }
        if (want_dense) {
          // d's gradient: the products with rows and columns swapped, scaled
          // by alpha after the sums (PyTorch's alpha * (mat1^T @ grad)).
          const bool unit = alpha.to<double>() == 1.0;
          Entries eb = en;
          if (!unit) {
            eb.coef = p.values.to(go.dtype()).contiguous();
          }
          Tensor gd = zeros({batch * inner, m}, go.dtype());
          scatter_products(eb, gflat, gd, true);
          grads[2] = (unit ? gd : mul(gd, alpha)).view(dc.sizes());
        }
        if (!want_values) {
          return grads;
        }
        // At each stored position once (Note [Sparse gradients]).
        const SparseParts pc =
            p.coalesced ? p : coalesced_parts(p, sizes, nullptr, "sparse_mm");
        const Entries ec = p.coalesced
            ? en
            : entries_of(pc, sizes[sizes.size() - 2], inner, alpha, go.dtype());
        grads[1] = make_sparse(
            pc.indices,
            entry_dots(ec, gflat, dc, alpha).to(p.values.dtype()),
            sizes,
            true);
        return grads;
      });
}

} // namespace

Tensor sparse_bmm(const Tensor& sparse, const Tensor& dense) {
  return sparse_product(
      "sparse_bmm",
      Tensor(),
      sparse,
      dense,
      Scalar(int64_t(0)),
      Scalar(int64_t(1)),
      3);
}

namespace sparse {

Tensor mm(const Tensor& sparse, const Tensor& dense) {
  return sparse_product(
      "sparse_mm",
      Tensor(),
      sparse,
      dense,
      Scalar(int64_t(0)),
      Scalar(int64_t(1)),
      2);
}

Tensor addmm(
    const Tensor& input,
    const Tensor& mat1,
    const Tensor& mat2,
    const Scalar& beta,
    const Scalar& alpha) {
  DITTO_CHECK(input.defined(), ValueError, "sparse_addmm", "undefined input");
  return sparse_product("sparse_addmm", input, mat1, mat2, beta, alpha, 2);
}

} // namespace sparse

} // namespace ditto
