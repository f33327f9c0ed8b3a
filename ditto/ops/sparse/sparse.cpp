// Sparse COO tensors: the constructor and its checks, coalesce, the
// conversions to and from strided tensors, the parts as tensors, sums with
// sparse operands (docs/sparse.md); sums and products with sparse operands
// are in sparse_arith.cpp.
//
// Note [Sparse entries in a fixed order]
// A sparse tensor's entries are kept in the order they were given. Every
// sum over entries here runs in that order, so the result depends on the
// entries (as PyTorch's) and never on the thread count:
// - coalesce sorts the entries by position and sums each run of duplicates
//   from its first entry on, in sorted order (PyTorch's CPU coalesce: copy
//   the first, add the others). The sort is PyTorch 1.13's: std::sort of
//   (position, entry) pairs compared by position, an introsort, not
//   stable, so three or more duplicates are added in the order it leaves
//   them. That order is a function of the positions alone (one thread, no
//   timing, no CPU feature), so the result is PyTorch's bits and is the
//   same everywhere; sparse_golden.json holds PyTorch's sums, so a
//   standard library whose std::sort permutes differently fails the test
//   rather than drifting;
// - to_dense and dense + sparse add the entries as stored, each position's
//   in stored order, with fma(alpha, v, out) (PyTorch's CPU loops, with
//   PyTorch's roundings); values_at reads the coalesced entries;
// - the products follow Note [Sparse products] (sparse_arith.cpp).
//
// Note [Sparse gradients]
// A sparse gradient either has the very indices (the same tensor) of the
// sparse tensor it flows to, and then holds one gradient per stored entry
// (what _values() sends back), or it is coalesced: one value per position,
// which every entry at that position receives (values_at). The backward of
// to_dense and of the products send coalesced gradients, so an entry that
// is stored twice still gets the gradient of its position once per copy,
// never the sum of both.

#include "ditto/ops/sparse.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <utility>

#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/detail/sparse_impl.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {
namespace detail {

const SparseParts& sparse_parts(const Tensor& t, const char* op) {
  DITTO_CHECK(t.defined(), ValueError, op, "the tensor is undefined");
  DITTO_CHECK(
      t.impl()->is_sparse(),
      TypeError,
      op,
      "expected a sparse tensor (layout torch.sparse_coo), got a strided one");
  return *t.impl()->sparse();
}

Tensor make_sparse(Tensor indices, Tensor values, Shape sizes, bool coalesced) {
  const Dtype dt = values.dtype();
  auto parts = std::make_shared<SparseParts>(
      SparseParts{std::move(indices), std::move(values), coalesced});
  return Tensor(std::make_shared<TensorImpl>(
      std::shared_ptr<const SparseParts>(std::move(parts)),
      std::move(sizes),
      dt));
}

} // namespace detail

namespace sparse_impl {

int64_t nnz_of(const SparseParts& p) {
  return p.indices.size(1);
}

// Note [Sparse parts checked at use]
// The indices and values a sparse tensor holds are the very tensors
// _indices() and _values() hand out, which a user may write in place, or
// resize, after construction. Every op that reads them checks them again
// first: their shapes against the tensor's, every index against its dim's
// size, and a coalesced tensor's entries in strictly increasing order (its
// kernels rely on it). O(nnz * sparse_dim), where the op itself is at least
// O(nnz); the accessors (_nnz, sparse_dim, _indices...) do not check.
const SparseParts& checked_parts(const Tensor& t, const char* op) {
  const SparseParts& p = sparse_parts(t, op);
  const Tensor& idx = p.indices;
  const Tensor& val = p.values;
  const int64_t dd = val.dim() - 1;
  const int64_t sd = t.dim() - dd;
  bool shapes_ok = val.dim() >= 1 && sd >= 0 && idx.dim() == 2 &&
      idx.dtype() == kInt64 && idx.is_contiguous() && idx.size(0) == sd &&
      idx.size(1) == val.size(0);
  for (int64_t k = 0; shapes_ok && k < dd; ++k) {
    shapes_ok = val.size(k + 1) == t.size(sd + k);
  }
  DITTO_CHECK(
      shapes_ok,
      ValueError,
      op,
      "the sparse tensor's indices or values were changed after "
      "construction: indices ",
      shape_str(idx.sizes()),
      " ",
      dtype_name(idx.dtype()),
      " and values ",
      shape_str(val.sizes()),
      " do not fit its size ",
      shape_str(t.sizes()));
  const int64_t n = idx.size(1);
  const int64_t* ip = idx.data_ptr<int64_t>();
  for (int64_t d = 0; d < sd; ++d) {
    const int64_t size = t.size(d);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t i = ip[d * n + e];
      DITTO_CHECK(
          i >= 0 && i < size,
          IndexError,
          op,
          "index ",
          i,
          " is out of bounds for dim ",
          d,
          " of size ",
          size,
          " (the sparse tensor's indices were written after construction)");
    }
  }
  if (p.coalesced) {
    for (int64_t e = 1; e < n; ++e) {
      int64_t d = 0;
      while (d < sd && ip[d * n + e] == ip[d * n + e - 1]) {
        ++d;
      }
      DITTO_CHECK(
          d < sd && ip[d * n + e] > ip[d * n + e - 1],
          ValueError,
          op,
          "the coalesced sparse tensor's indices were written after "
          "construction: entries ",
          e - 1,
          " and ",
          e,
          " are not in strictly increasing order; build a new tensor from "
          "them (sparse_coo_tensor(t._indices(), t._values(), t.shape)) and "
          "coalesce that");
    }
  }
  return p;
}

int64_t sparse_dim_of(const SparseParts& p) {
  return p.indices.size(0);
}

// Elements per entry: the product of the dense sizes.
int64_t row_len_of(const Tensor& values) {
  int64_t n = 1;
  for (int64_t d = 1; d < values.dim(); ++d) {
    n *= values.size(d);
  }
  return n;
}

// Row-major strides of the first sparse_dim sizes (checked: their product
// fits int64).
std::vector<int64_t> position_strides(
    const Shape& sizes,
    int64_t sparse_dim,
    const char* op) {
  const Shape lead(sizes.begin(), sizes.begin() + sparse_dim);
  if (checked_numel(lead, op) == 0) {
    // No position exists (and so no entry): a size of 0 may sit beside
    // sizes whose partial products overflow.
    return std::vector<int64_t>(size_t(sparse_dim), 0);
  }
  return contiguous_strides(lead);
}

// Each entry's position in the row-major order of the sparse dims.
std::vector<int64_t> positions(
    const Tensor& indices,
    const Shape& sizes,
    const char* op) {
  const int64_t sd = indices.size(0), n = indices.size(1);
  const std::vector<int64_t> st = position_strides(sizes, sd, op);
  const Tensor idx = indices.contiguous();
  const int64_t* ip = idx.data_ptr<int64_t>();
  std::vector<int64_t> pos(size_t(n), 0);
  for (int64_t d = 0; d < sd; ++d) {
    for (int64_t e = 0; e < n; ++e) {
      pos[size_t(e)] += ip[d * n + e] * st[size_t(d)];
    }
  }
  return pos;
}

// The checks of sparse_coo_tensor, with PyTorch's messages; returns the
// indices as a fresh int64 copy.
Tensor checked_indices(
    const Tensor& indices,
    const Tensor& values,
    const Shape* size,
    const char* op) {
  DITTO_CHECK(
      indices.defined() && values.defined(),
      ValueError,
      op,
      "indices and values must be defined");
  require_strided(indices, op);
  require_strided(values, op);
  DITTO_CHECK(
      is_integral(indices.dtype()) && indices.dtype() != kBool,
      TypeError,
      op,
      "indices must be an int64 tensor, got ",
      dtype_name(indices.dtype()));
  DITTO_CHECK(
      indices.dim() == 2,
      ValueError,
      op,
      "indices must be sparse_dim x nnz, but got: ",
      shape_str(indices.sizes()));
  DITTO_CHECK(
      values.dim() >= 1,
      ValueError,
      op,
      "values must have at least one dim (nnz), but got a 0-dim tensor");
  DITTO_CHECK(
      indices.size(1) == values.size(0),
      ValueError,
      op,
      "indices and values must have same nnz, but got nnz from indices: ",
      indices.size(1),
      ", nnz from values: ",
      values.size(0));
  const int64_t sd = indices.size(0), dd = values.dim() - 1;
  if (size != nullptr) {
    DITTO_CHECK(
        int64_t(size->size()) == sd + dd,
        ValueError,
        op,
        "number of dimensions must be sparse_dim (",
        sd,
        ") + dense_dim (",
        dd,
        "), but got ",
        size->size());
    checked_numel(*size, op);
    for (int64_t d = 0; d < dd; ++d) {
      DITTO_CHECK(
          (*size)[size_t(sd + d)] == values.size(d + 1),
          ValueError,
          op,
          "values has incorrect size, expected ",
          shape_str(Shape(size->begin() + sd, size->end())),
          ", got ",
          shape_str(Shape(values.sizes().begin() + 1, values.sizes().end())));
    }
  }
  Tensor idx = indices.to(kInt64).contiguous();
  if (idx.is_same(indices) || shares_storage(idx, indices)) {
    idx = idx.clone();
  }
  const int64_t n = idx.size(1);
  const int64_t* ip = idx.data_ptr<int64_t>();
  for (int64_t d = 0; d < sd; ++d) {
    for (int64_t e = 0; e < n; ++e) {
      const int64_t i = ip[d * n + e];
      DITTO_CHECK(
          i >= 0, ValueError, op, "found negative index ", i, " for dim ", d);
      DITTO_CHECK(
          size == nullptr || i < (*size)[size_t(d)],
          ValueError,
          op,
          "size is inconsistent with indices: for dim ",
          d,
          ", size is ",
          (*size)[size_t(d)],
          " but found index ",
          i);
    }
  }
  return idx;
}

Tensor build_sparse(
    const Tensor& indices,
    const Tensor& values,
    const Shape* size) {
  const char* op = "sparse_coo_tensor";
  detail::OpScope scope(op, {indices, values});
  Tensor idx = checked_indices(indices, values, size, op);
  const int64_t sd = idx.size(0), n = idx.size(1);
  Shape sizes;
  if (size != nullptr) {
    sizes = *size;
  } else {
    const int64_t* ip = idx.data_ptr<int64_t>();
    for (int64_t d = 0; d < sd; ++d) {
      int64_t top = -1;
      for (int64_t e = 0; e < n; ++e) {
        top = std::max(top, ip[d * n + e]);
      }
      DITTO_CHECK(
          top < INT64_MAX,
          ValueError,
          op,
          "index ",
          top,
          " in dim ",
          d,
          " leaves no room for the inferred size");
      sizes.push_back(top + 1);
    }
    sizes.insert(sizes.end(), values.sizes().begin() + 1, values.sizes().end());
    checked_numel(sizes, op);
  }
  position_strides(sizes, sd, op);
  Tensor vals = values.detach().contiguous();
  Tensor out = make_sparse(idx, vals, sizes, n <= 1);
  return scope.done(out, [idx, sd](const autograd::GradList& g) {
    return autograd::GradList{Tensor(), detail::values_at(g[0], idx, sd)};
  });
}

// The coalesced parts of p: entries sorted by position, duplicates summed
// in stored order (Note [Sparse entries in a fixed order]). slot (if given)
// receives each input entry's output entry.
SparseParts coalesced_parts(
    const SparseParts& p,
    const Shape& sizes,
    std::vector<int64_t>* slot,
    const char* op) {
  const int64_t n = nnz_of(p), sd = sparse_dim_of(p);
  const std::vector<int64_t> pos = positions(p.indices, sizes, op);
  // PyTorch's order: its CPU sort of the positions is std::sort of
  // (position, entry) pairs compared by position (Note [Sparse entries in a
  // fixed order]).
  std::vector<std::pair<int64_t, int64_t>> keyed(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    keyed[size_t(e)] = {pos[size_t(e)], e};
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    order[size_t(k)] = keyed[size_t(k)].second;
  }
  // first[u]: where run u starts in order; runs[u + 1] its end.
  std::vector<int64_t> starts;
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 ||
        pos[size_t(order[size_t(k)])] != pos[size_t(order[size_t(k - 1)])]) {
      starts.push_back(k);
    }
  }
  const int64_t u = int64_t(starts.size());
  starts.push_back(n);
  if (slot != nullptr) {
    slot->assign(size_t(n), 0);
    for (int64_t r = 0; r < u; ++r) {
      for (int64_t k = starts[size_t(r)]; k < starts[size_t(r + 1)]; ++k) {
        (*slot)[size_t(order[size_t(k)])] = r;
      }
    }
  }
  Tensor idx = detail::new_tensor({sd, u}, kInt64);
  const Tensor in_idx = p.indices.contiguous();
  const int64_t* ip = in_idx.data_ptr<int64_t>();
  int64_t* op_ = idx.data_ptr<int64_t>();
  for (int64_t d = 0; d < sd; ++d) {
    for (int64_t r = 0; r < u; ++r) {
      op_[d * u + r] = ip[d * n + order[size_t(starts[size_t(r)])]];
    }
  }
  const Tensor v = p.values.contiguous();
  Shape vs = v.sizes();
  vs[0] = u;
  Tensor vals = detail::new_tensor(vs, v.dtype());
  const int64_t len = row_len_of(v);
  dispatch_dtype(v.dtype(), op, [&]<typename T>() {
    const T* src = v.data_ptr<T>();
    T* dst = vals.data_ptr<T>();
    parallel_for(
        0,
        u,
        std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)),
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            T* o = dst + r * len;
            const int64_t k0 = starts[size_t(r)], k1 = starts[size_t(r + 1)];
            std::copy_n(src + order[size_t(k0)] * len, len, o);
            for (int64_t k = k0 + 1; k < k1; ++k) {
              const T* s = src + order[size_t(k)] * len;
              for (int64_t j = 0; j < len; ++j) {
                if constexpr (std::is_same_v<T, bool>) {
                  o[j] = o[j] || s[j];
                } else {
                  o[j] = T(o[j] + s[j]);
                }
              }
            }
          }
        });
  });
  return SparseParts{idx, vals, true};
}

// The coalesced parts of a sparse tensor (its own when already coalesced).
SparseParts coalesced(const Tensor& t, const char* op) {
  const SparseParts& p = checked_parts(t, op);
  if (p.coalesced) {
    return p;
  }
  return coalesced_parts(p, t.sizes(), nullptr, op);
}

// dense (strided, contiguous, of the sparse tensor's sizes) += alpha * each
// stored entry, in stored order per position: the owner-computes loop
// (Note [Owner computes]), so every position sees its entries in the
// serial loop's order on any number of threads (PyTorch's CPU loop, which
// runs the entries on several threads at once).
void add_entries_into(
    Tensor& dense,
    const SparseParts& p,
    const Scalar& alpha,
    const char* op) {
  const std::vector<int64_t> pos = positions(p.indices, dense.sizes(), op);
  const Tensor v = p.values.to(dense.dtype()).contiguous();
  const int64_t len = row_len_of(v);
  const int64_t keys = len > 0 ? dense.numel() / len : 0;
  dispatch_dtype(dense.dtype(), op, [&]<typename T>() {
    T* out = dense.data_ptr<T>();
    const T* vals = v.data_ptr<T>();
    const T a = alpha.to<T>();
    detail::owner_computes(
        int64_t(pos.size()),
        keys,
        len,
        [&](int64_t e) { return pos[size_t(e)]; },
        [&](int64_t e) {
          axpy_row<T>(out + pos[size_t(e)] * len, vals + e * len, len, a);
        });
  });
}

// Rows rows[e] of x (contiguous, len elements a row) as a new tensor of
// sizes (rows.size() rows): to_sparse's values and values_at's gather.
Tensor gather_rows(
    const Tensor& x,
    const std::vector<int64_t>& rows,
    int64_t len,
    const Shape& sizes) {
  Tensor out = detail::new_tensor(sizes, x.dtype());
  const size_t row_bytes = size_t(len) * x.element_size();
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  parallel_for(0, int64_t(rows.size()), 1024, [&](int64_t e0, int64_t e1) {
    for (int64_t e = e0; e < e1; ++e) {
      std::memcpy(
          dst + size_t(e) * row_bytes,
          src + size_t(rows[size_t(e)]) * row_bytes,
          row_bytes);
    }
  });
  return out;
}

} // namespace sparse_impl

using namespace sparse_impl;

Tensor sparse_coo_tensor(
    const Tensor& indices,
    const Tensor& values,
    const IntArg& size) {
  return build_sparse(indices, values, &size);
}

Tensor sparse_coo_tensor(const Tensor& indices, const Tensor& values) {
  return build_sparse(indices, values, nullptr);
}

// ---- the parts and their facts

int64_t Tensor::sparse_dim() const {
  if (defined() && !impl_->is_sparse()) {
    return dim(); // PyTorch: a strided tensor's dims are all "sparse"
  }
  return sparse_dim_of(sparse_parts(*this, "sparse_dim"));
}

int64_t Tensor::dense_dim() const {
  if (defined() && !impl_->is_sparse()) {
    return 0;
  }
  return sparse_parts(*this, "dense_dim").values.dim() - 1;
}

int64_t Tensor::_nnz() const {
  return nnz_of(sparse_parts(*this, "_nnz"));
}

bool Tensor::is_coalesced() const {
  return sparse_parts(*this, "is_coalesced").coalesced;
}

Tensor Tensor::_indices() const {
  // Integer: no gradient, nothing to record.
  return sparse_parts(*this, "_indices").indices;
}

Tensor Tensor::_values() const {
  const char* op = "_values";
  detail::OpScope scope(op, {*this});
  const SparseParts& p = sparse_parts(*this, op);
  Tensor out = p.values.detach();
  return scope.done(
      out,
      [idx = p.indices, sizes = sizes(), c = p.coalesced](
          const autograd::GradList& g) {
        return autograd::GradList{make_sparse(idx, g[0], sizes, c)};
      });
}

Tensor Tensor::indices() const {
  DITTO_CHECK(
      sparse_parts(*this, "indices").coalesced,
      ValueError,
      "indices",
      "Cannot get indices on an uncoalesced tensor, please call .coalesce() "
      "first");
  return _indices();
}

Tensor Tensor::values() const {
  DITTO_CHECK(
      sparse_parts(*this, "values").coalesced,
      ValueError,
      "values",
      "Cannot get values on an uncoalesced tensor, please call .coalesce() "
      "first");
  return _values();
}

Tensor Tensor::coalesce() const {
  const char* op = "coalesce";
  detail::OpScope scope(op, {*this});
  const SparseParts& p = checked_parts(*this, op);
  if (p.coalesced) {
    return *this; // as PyTorch: the same tensor
  }
  std::vector<int64_t> slot;
  SparseParts c = coalesced_parts(p, sizes(), &slot, op);
  Tensor out = make_sparse(c.indices, c.values, sizes(), true);
  // The same tensor in another form: its gradient passes unchanged.
  return scope.done(out, [](const autograd::GradList& g) {
    return autograd::GradList{g[0]};
  });
}

Tensor Tensor::to_dense() const {
  const char* op = "to_dense";
  detail::OpScope scope(op, {*this});
  DITTO_CHECK(defined(), ValueError, op, "the tensor is undefined");
  if (!impl_->is_sparse()) {
    return *this; // PyTorch 1.13 gives a strided tensor back unchanged
  }
  Tensor out = zeros(sizes(), dtype());
  add_entries_into(out, checked_parts(*this, op), Scalar(int64_t(1)), op);
  if (!scope.needs_grad()) {
    return scope.done(out);
  }
  // The gradient at each stored position (once each: Note [Sparse
  // gradients]): the coalesced positions, sorted only when recording.
  return scope.done(
      out,
      [idx = coalesced(*this, op).indices,
       sizes = sizes()](const autograd::GradList& g) {
        const int64_t sd = idx.size(0);
        return autograd::GradList{
            make_sparse(idx, detail::values_at(g[0], idx, sd), sizes, true)};
      });
}

Tensor Tensor::to_sparse() const {
  return to_sparse(defined() ? dim() : 0);
}

Tensor Tensor::to_sparse(int64_t sparse_dim) const {
  const char* op = "to_sparse";
  detail::OpScope scope(op, {*this});
  DITTO_CHECK(defined(), ValueError, op, "the tensor is undefined");
  DITTO_CHECK(
      !impl_->is_sparse(),
      TypeError,
      op,
      "the tensor is sparse already (layout torch.sparse_coo)");
  DITTO_CHECK(
      sparse_dim >= 0 && sparse_dim <= dim(),
      ValueError,
      op,
      "sparse_dim must be less than or equal to self.dim(), got ",
      sparse_dim,
      " for a ",
      dim(),
      "-dim tensor");
  const Tensor x = contiguous();
  Shape lead(sizes().begin(), sizes().begin() + sparse_dim);
  const int64_t rows = checked_numel(lead, op);
  const int64_t len = rows > 0 ? numel() / rows : 0;
  // An entry per position whose dense part has a nonzero (NaN counts).
  std::vector<int64_t> keep;
  dispatch_dtype(dtype(), op, [&]<typename T>() {
    const T* p = x.data_ptr<T>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < len; ++j) {
        if (!(p[r * len + j] == T(0))) {
          keep.push_back(r);
          break;
        }
      }
    }
  });
  const int64_t n = int64_t(keep.size());
  Tensor idx = detail::new_tensor({sparse_dim, n}, kInt64);
  int64_t* ip = idx.data_ptr<int64_t>();
  for (int64_t e = 0; e < n; ++e) {
    int64_t r = keep[size_t(e)];
    for (int64_t d = sparse_dim - 1; d >= 0; --d) {
      ip[d * n + e] = r % lead[size_t(d)];
      r /= lead[size_t(d)];
    }
  }
  Shape vs{n};
  vs.insert(vs.end(), sizes().begin() + sparse_dim, sizes().end());
  Tensor out = make_sparse(idx, gather_rows(x, keep, len, vs), sizes(), true);
  return scope.done(out, [](const autograd::GradList& g) {
    return autograd::GradList{g[0].is_sparse() ? g[0].to_dense() : g[0]};
  });
}

} // namespace ditto
