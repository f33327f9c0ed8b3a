#include "ditto/ops/detail/index_util.h"

#include "ditto/ops/detail/op_util.h"

namespace ditto::detail {
namespace {

// The dims of an ndim tensor with dim first, the others in order.
IntList dim_first(int64_t ndim, int64_t dim) {
  IntList p{dim};
  for (int64_t d = 0; d < ndim; ++d) {
    if (d != dim) {
      p.push_back(d);
    }
  }
  return p;
}

} // namespace

Tensor moved(const Tensor& t, int64_t dim) {
  return t.dim() == 0 ? t.reshape({1}) : t.permute(dim_first(t.dim(), dim));
}

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

void check_index_dtype(const Tensor& index, const char* op) {
  DITTO_CHECK(index.defined(), ValueError, op, "undefined index");
  DITTO_CHECK(
      index.dtype() == kInt64 || index.dtype() == kInt32,
      TypeError,
      op,
      "expected an int64 or int32 index but got ",
      index.dtype());
}

Tensor checked_index(
    const Tensor& index,
    int64_t dim,
    int64_t size,
    const char* op,
    bool allow_negative) {
  check_index_dtype(index, op);
  // A contiguous int64 index that needs no wrapping is read in place.
  Tensor idx = index;
  // A device's index comes to the host to be checked (and planned).
  if (allow_negative || index.dtype() != kInt64 || !index.is_contiguous() ||
      !index.is_cpu()) {
    idx = new_tensor(index.sizes(), kInt64);
    copy_into(idx, index, op);
  }
  int64_t* p = const_cast<int64_t*>(idx.data_ptr<int64_t>());
  const int64_t low = allow_negative ? -size : 0;
  const int64_t n = idx.numel();
  constexpr int64_t kChunk = 1 << 16;
  std::vector<char> bad(static_cast<size_t>((n + kChunk - 1) / kChunk), 0);
  parallel_for(0, n, kChunk, [&](int64_t b, int64_t e) {
    bool ok = true;
    for (int64_t i = b; i < e; ++i) {
      ok &= p[i] >= low && p[i] < size;
    }
    bad[static_cast<size_t>(b / kChunk)] = ok ? 0 : 1;
  });
  for (size_t c = 0; c < bad.size(); ++c) {
    if (!bad[c]) {
      continue;
    }
    // The first bad value in index order names the error.
    for (int64_t i = int64_t(c) * kChunk; i < n; ++i) {
      DITTO_CHECK(
          p[i] >= low && p[i] < size,
          IndexError,
          op,
          "index ",
          p[i],
          " is out of bounds for dimension ",
          dim,
          " with size ",
          size);
    }
  }
  if (allow_negative) {
    parallel_for(0, n, kChunk, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        p[i] += p[i] < 0 ? size : 0;
      }
    });
  }
  return idx;
}

void check_same_dtype(
    const Tensor& self,
    const Tensor& values,
    const char* what,
    const char* op,
    bool accumulate) {
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
  DITTO_CHECK(
      !accumulate || self.dtype() != kBool,
      TypeError,
      op,
      "accumulation is not implemented for bool");
}

Tensor working_copy(const Tensor& dst) {
  return dst.is_contiguous() ? dst : dst.contiguous();
}

void write_back(const Tensor& dst, const Tensor& work, const char* op) {
  if (!work.is_same(dst) && !same_view(work, dst)) {
    copy_into(dst, work, op);
  }
}

Tensor unaliased(const Tensor& src, const Tensor& self) {
  return shares_storage(src, self) ? src.clone() : src;
}

std::vector<int64_t> rest_offsets(
    const Tensor& t,
    const Shape& extent,
    size_t first) {
  int64_t count = 1;
  for (int64_t s : extent) {
    count *= s;
  }
  std::vector<int64_t> off(static_cast<size_t>(count));
  std::vector<int64_t> pos(extent.size(), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t o = 0;
    for (size_t q = 0; q < extent.size(); ++q) {
      o += pos[q] * t.strides()[q + first];
    }
    off[size_t(k)] = o;
    for (size_t q = extent.size(); q-- > 0;) {
      if (++pos[q] < extent[q]) {
        break;
      }
      pos[q] = 0;
    }
  }
  return off;
}

} // namespace ditto::detail
