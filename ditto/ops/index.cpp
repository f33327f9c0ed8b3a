#include "ditto/ops/index.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

#include "ditto/determinism/context.h"
#include "ditto/ops/op_util.h"

namespace ditto {
namespace {

// The dims of t with dim first, the others in order.
IntList dim_first(int64_t ndim, int64_t dim) {
  IntList p{dim};
  for (int64_t d = 0; d < ndim; ++d) {
    if (d != dim) {
      p.push_back(d);
    }
  }
  return p;
}

Tensor moved(const Tensor& t, int64_t dim) {
  return t.dim() == 0 ? t.reshape({1}) : t.permute(dim_first(t.dim(), dim));
}

// The index as contiguous int64 values, each checked against size before
// anything is written.
Tensor checked_index(
    const Tensor& index,
    int64_t dim,
    int64_t size,
    const char* op) {
  DITTO_CHECK(index.defined(), ValueError, op, "undefined index");
  DITTO_CHECK(
      index.dtype() == kInt64 || index.dtype() == kInt32,
      TypeError,
      op,
      "expected an int64 or int32 index but got ",
      index.dtype());
  Tensor idx = index.to(kInt64).contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    DITTO_CHECK(
        p[i] >= 0 && p[i] < size,
        IndexError,
        op,
        "index ",
        p[i],
        " is out of bounds for dimension ",
        dim,
        " with size ",
        size);
  }
  return idx;
}

// Inverse of moved(): a dim-first tensor back to the original dim order.
Tensor moved_back(const Tensor& t, int64_t ndim, int64_t dim) {
  if (ndim == 0) {
    return t.reshape({});
  }
  IntList perm = dim_first(ndim, dim);
  IntList inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    inverse[size_t(perm[k])] = int64_t(k);
  }
  return t.permute(inverse);
}

// Accumulating ops add values of self's dtype (not bool) into self.
void check_accumulate_dtypes(
    const Tensor& self,
    const Tensor& values,
    const char* what,
    const char* op) {
  DITTO_CHECK(
      values.dtype() == self.dtype(),
      TypeError,
      op,
      "self (",
      self.dtype(),
      ") and ",
      what,
      " (",
      values.dtype(),
      ") must have the same dtype");
  DITTO_CHECK(self.dtype() != kBool, TypeError, op, "not implemented for bool");
}

// Writes the contiguous working copy back when self was strided.
void write_back(const Tensor& dst, const Tensor& work, const char* op) {
  if (!work.is_same(dst) && !detail::same_view(work, dst)) {
    detail::copy_into(dst, work, op);
  }
}

template <typename T>
void atomic_add(T* p, T v) {
  std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_relaxed);
}

// Destination rows per task of the deterministic variants: about one
// reduction chunk of elements, so tasks are neither tiny nor few.
int64_t rows_per_task(int64_t row_len) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(row_len, 1));
}

// Registered at start-up: see Note [Writing Nondeterministic Operations].
const bool kRegistered = [] {
  determinism::declare_nondeterministic(
      "index_add_",
      "the fast variant adds floating source rows into shared destination "
      "rows with atomic adds from several threads, in whatever order they "
      "finish",
      true);
  determinism::declare_nondeterministic(
      "scatter_add_",
      "the fast variant adds floating values into shared destinations with "
      "atomic adds from several threads, in whatever order they finish",
      true);
  return true;
}();

} // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  detail::OpScope op("index_select");
  DITTO_CHECK(self.defined(), ValueError, "index_select", "undefined tensor");
  DITTO_CHECK(
      index.dim() <= 1,
      ValueError,
      "index_select",
      "index must be 0-d or 1-d, got ",
      index.dim(),
      "-d");
  int64_t d = wrap_dim(dim, self.dim(), "index_select");
  Tensor s = moved(self, d);
  Tensor idx = checked_index(index, d, s.size(0), "index_select");
  const int64_t n = idx.numel();
  Shape out_moved = s.sizes();
  out_moved[0] = n;
  Tensor out = detail::new_tensor(out_moved, self.dtype());
  // Rows of a contiguous dim-first copy are contiguous bytes: one memcpy
  // per selected row.
  Tensor src = s.contiguous();
  const int64_t len = s.size(0) > 0 ? s.numel() / s.size(0) : 0;
  const size_t row_bytes = size_t(len) * self.element_size();
  const int64_t* ip = idx.data_ptr<int64_t>();
  const char* from = static_cast<const char*>(src.raw_data());
  char* to = static_cast<char*>(out.raw_data());
  parallel_for(0, n, rows_per_task(len), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(
          to + size_t(i) * row_bytes,
          from + size_t(ip[i]) * row_bytes,
          row_bytes);
    }
  });
  return op.done(moved_back(out, self.dim(), d).contiguous());
}

namespace {

// Shared validation of gather/scatter_add_: index and src of self's rank,
// index no larger than self off dim and no larger than src anywhere.
void check_scatter_shapes(
    const Tensor& self,
    int64_t d,
    const Tensor& index,
    const Tensor* src,
    const char* op) {
  DITTO_CHECK(
      index.dim() == self.dim(),
      ValueError,
      op,
      "index tensor must have the same number of dimensions as self (",
      index.dim(),
      " vs ",
      self.dim(),
      ")");
  for (int64_t k = 0; k < self.dim(); ++k) {
    DITTO_CHECK(
        k == d || index.size(k) <= self.size(k),
        ValueError,
        op,
        "size of index ",
        shape_str(index.sizes()),
        " exceeds self ",
        shape_str(self.sizes()),
        " at dimension ",
        k);
    if (src) {
      DITTO_CHECK(
          index.size(k) <= src->size(k),
          ValueError,
          op,
          "size of index ",
          shape_str(index.sizes()),
          " exceeds src ",
          shape_str(src->sizes()),
          " at dimension ",
          k);
    }
  }
}

// Offsets (in elements) in a dim-first tensor t of every position of the
// non-dim coordinates of the index (row-major over the index's sizes).
std::vector<int64_t> rest_offsets(const Tensor& t, const Shape& index_rest) {
  int64_t count = 1;
  for (int64_t s : index_rest) {
    count *= s;
  }
  std::vector<int64_t> off(static_cast<size_t>(count));
  std::vector<int64_t> idx(index_rest.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t o = 0;
    for (size_t q = 0; q < index_rest.size(); ++q) {
      o += idx[q] * t.strides()[q + 1];
    }
    off[size_t(k)] = o;
    for (size_t q = index_rest.size(); q-- > 0;) {
      if (++idx[q] < index_rest[q]) {
        break;
      }
      idx[q] = 0;
    }
  }
  return off;
}

} // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  detail::OpScope op("gather");
  DITTO_CHECK(
      self.defined() && index.defined(), ValueError, "gather", "undefined");
  int64_t d = wrap_dim(dim, self.dim(), "gather");
  check_scatter_shapes(self, d, index, nullptr, "gather");
  Tensor s = moved(self, d);
  Tensor idx = checked_index(moved(index, d), d, s.size(0), "gather");
  const int64_t n = idx.size(0);
  Shape rest(idx.sizes().begin() + 1, idx.sizes().end());
  std::vector<int64_t> soff = rest_offsets(s, rest);
  const int64_t cols = int64_t(soff.size());
  Tensor out = detail::new_tensor(idx.sizes(), self.dtype());
  const int64_t* ip = idx.data_ptr<int64_t>();
  dispatch_dtype(self.dtype(), "gather", [&]<typename T>() {
    const T* sp = static_cast<const T*>(s.raw_data());
    T* o = out.data_ptr<T>();
    const int64_t s0 = s.strides()[0];
    parallel_for(0, n * cols, 16384, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        o[k] = sp[ip[k] * s0 + soff[size_t(k % cols)]];
      }
    });
  });
  return op.done(moved_back(out, self.dim(), d).contiguous());
}

Tensor& index_add_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source) {
  const char* name = "index_add_";
  detail::OpScope op(name);
  DITTO_CHECK(
      self.defined() && source.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      index.defined() && index.dim() <= 1,
      ValueError,
      name,
      "index must be 0-d or 1-d");
  check_accumulate_dtypes(self, source, "source", name);
  int64_t d = wrap_dim(dim, self.dim(), name);
  DITTO_CHECK(
      source.dim() == self.dim() || (self.dim() <= 1 && source.dim() <= 1),
      ValueError,
      name,
      "source ",
      shape_str(source.sizes()),
      " and self ",
      shape_str(self.sizes()),
      " differ in rank");
  Tensor W0 = moved(self, d);
  Tensor src = moved(source, d);
  DITTO_CHECK(
      index.numel() == src.size(0),
      ValueError,
      name,
      "index has ",
      index.numel(),
      " entries but source has ",
      src.size(0),
      " along dim ",
      d);
  for (int64_t k = 1; k < W0.dim(); ++k) {
    DITTO_CHECK(
        src.size(k) == W0.size(k),
        ValueError,
        name,
        "source ",
        shape_str(source.sizes()),
        " must match self ",
        shape_str(self.sizes()),
        " except along dim ",
        d);
  }
  Tensor idx = checked_index(index, d, W0.size(0), name);
  detail::check_no_internal_overlap(self, name);
  // Work on contiguous rows; copy back at the end if self is strided.
  Tensor W = W0.is_contiguous() ? W0 : W0.contiguous();
  src = (detail::shares_storage(src, self) ? src.clone() : src).contiguous();
  const int64_t n = idx.numel();
  const int64_t rows = W.size(0);
  const int64_t len = rows > 0 ? W.numel() / rows : 0;
  const int64_t* ip = idx.data_ptr<int64_t>();
  const bool deterministic = are_deterministic_algorithms_enabled();
  dispatch_dtype(self.dtype(), name, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      T* w = W.data_ptr<T>();
      const T* s = src.data_ptr<T>();
      if (deterministic) {
        // Owner computes: destination rows are cut into fixed blocks; each
        // block adds its source rows in index order, as the serial loop.
        const int64_t per = rows_per_task(len);
        const int64_t blocks = (rows + per - 1) / per;
        std::vector<int64_t> start(static_cast<size_t>(blocks + 1), 0);
        for (int64_t i = 0; i < n; ++i) {
          ++start[size_t(ip[i] / per + 1)];
        }
        std::partial_sum(start.begin(), start.end(), start.begin());
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::vector<int64_t> fill(start.begin(), start.end() - 1);
        for (int64_t i = 0; i < n; ++i) {
          order[size_t(fill[size_t(ip[i] / per)]++)] = i;
        }
        parallel_chunks(blocks, [&](int64_t blk) {
          for (int64_t k = start[size_t(blk)]; k < start[size_t(blk + 1)];
               ++k) {
            const int64_t i = order[size_t(k)];
            T* dst = w + ip[i] * len;
            const T* from = s + i * len;
            for (int64_t c = 0; c < len; ++c) {
              dst[c] = T(dst[c] + from[c]);
            }
          }
        });
      } else {
        // Fast: source rows in parallel, atomic adds into shared rows; the
        // order of floating additions varies from run to run.
        parallel_for(0, n, rows_per_task(len), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            T* dst = w + ip[i] * len;
            const T* from = s + i * len;
            for (int64_t c = 0; c < len; ++c) {
              atomic_add(dst + c, from[c]);
            }
          }
        });
      }
    }
  });
  write_back(W0, W, name);
  op.done(self);
  return self;
}

Tensor& scatter_add_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source) {
  const char* name = "scatter_add_";
  detail::OpScope op(name);
  DITTO_CHECK(
      self.defined() && source.defined() && index.defined(),
      ValueError,
      name,
      "undefined tensor");
  check_accumulate_dtypes(self, source, "src", name);
  int64_t d = wrap_dim(dim, self.dim(), name);
  DITTO_CHECK(
      source.dim() == self.dim(),
      ValueError,
      name,
      "src must have the same number of dimensions as self");
  check_scatter_shapes(self, d, index, &source, name);
  Tensor W0 = moved(self, d);
  Tensor idx = checked_index(moved(index, d), d, W0.size(0), name);
  detail::check_no_internal_overlap(self, name);
  Tensor W = W0.is_contiguous() ? W0 : W0.contiguous();
  Tensor src =
      moved(detail::shares_storage(source, self) ? source.clone() : source, d);
  const int64_t n = idx.size(0);
  Shape rest(idx.sizes().begin() + 1, idx.sizes().end());
  std::vector<int64_t> woff = rest_offsets(W, rest);
  std::vector<int64_t> soff = rest_offsets(src, rest);
  const int64_t cols = int64_t(woff.size());
  const int64_t* ip = idx.data_ptr<int64_t>();
  const bool deterministic = are_deterministic_algorithms_enabled();
  dispatch_dtype(self.dtype(), name, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      T* w = W.data_ptr<T>();
      const T* s = static_cast<const T*>(src.raw_data());
      const int64_t w0 = W.strides()[0], s0 = src.strides()[0];
      if (deterministic) {
        // Contributions to one target share its column: columns in
        // parallel, each adding its rows in index order, as the serial loop.
        parallel_for(0, cols, 256, [&](int64_t b, int64_t e) {
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t c = b; c < e; ++c) {
              T* dst = w + ip[i * cols + c] * w0 + woff[size_t(c)];
              *dst = T(*dst + s[i * s0 + soff[size_t(c)]]);
            }
          }
        });
      } else {
        parallel_for(
            0,
            n,
            std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)),
            [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                for (int64_t c = 0; c < cols; ++c) {
                  atomic_add(
                      w + ip[i * cols + c] * w0 + woff[size_t(c)],
                      s[i * s0 + soff[size_t(c)]]);
                }
              }
            });
      }
    }
  });
  write_back(W0, W, name);
  op.done(self);
  return self;
}

} // namespace ditto
