// Sparse COO tensors: the constructor and its checks, coalesce, the
// conversions to and from strided tensors, the parts as tensors, sums with
// sparse operands, and the products of a sparse and a dense matrix with
// their gradients (docs/sparse.md).
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
// - the products follow Note [Sparse products].
//
// Note [Sparse gradients]
// A sparse gradient either has the very indices (the same tensor) of the
// sparse tensor it flows to, and then holds one gradient per stored entry
// (what _values() sends back), or it is coalesced: one value per position,
// which every entry at that position receives (values_at). The backward of
// to_dense and of the products send coalesced gradients, so an entry that
// is stored twice still gets the gradient of its position once per copy,
// never the sum of both.
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

namespace {

using detail::make_sparse;
using detail::require_strided;
using detail::shares_storage;
using detail::sparse_parts;

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

// out[0, n) = fma(s, in[0, n), out): the elementwise kernel of add(a, b,
// alpha) for floating types (one rounding per element, as PyTorch's axpy),
// a plain sum for the others.
template <typename T>
void axpy_row(T* out, const T* in, int64_t n, T s) {
  if constexpr (std::is_floating_point_v<T>) {
    static const int64_t strides[4] = {1, 1, 1, 0};
    kernels::kernel_table()
        .fused[int(kernels::FusedOp::AddScaled)][dtype_index(dtype_of<T>)](
            n,
            reinterpret_cast<char*>(out),
            reinterpret_cast<const char*>(out),
            reinterpret_cast<const char*>(in),
            nullptr,
            strides,
            double(s));
  } else {
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_same_v<T, bool>) {
        out[j] = out[j] || (s && in[j]);
      } else {
        out[j] = T(out[j] + T(s * in[j]));
      }
    }
  }
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

} // namespace

Tensor sparse_coo_tensor(
    const Tensor& indices,
    const Tensor& values,
    const Shape& size) {
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

// ---- products (Note [Sparse products])

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
