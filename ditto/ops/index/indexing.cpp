// LibTorch's Tensor::index / index_put_ with TensorIndex lists
// (ditto/core/indexing.h), also the Python binding's t[...]: the basic
// indices make a view, the advanced ones then go to ditto::index or
// index_put_ over the dims of that view.

#include <algorithm>

#include "ditto/core/indexing.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"

namespace ditto::indexing {
namespace {

// The view after the basic indices and, when there is an advanced index,
// one entry per leading dim of the view: the index, or undefined for a dim
// taken whole.
struct Indexed {
  Tensor view;
  std::vector<Tensor> advanced;
  bool has_advanced = false;
};

bool is_mask(const Tensor& t) {
  return t.dtype() == kBool || t.dtype() == kUInt8;
}

// The dims of self an entry names.
int64_t dims_named(const TensorIndex& i) {
  switch (i.type()) {
    case TensorIndexType::None:
    case TensorIndexType::Ellipsis:
    case TensorIndexType::Boolean:
      return 0;
    case TensorIndexType::Tensor:
      return i.tensor().defined() && is_mask(i.tensor())
          ? std::max<int64_t>(i.tensor().dim(), 1)
          : 1;
    default:
      return 1;
  }
}

// Python's slice.indices(size) for a positive step: start and the count.
std::pair<int64_t, int64_t> slice_range(
    const Slice& s,
    int64_t size,
    const char* op) {
  const int64_t step = s.step().value_or(1);
  DITTO_CHECK(step > 0, ValueError, op, "step must be greater than zero");
  auto clamp = [size](int64_t v) {
    if (v < 0) {
      v += size;
    }
    return std::clamp<int64_t>(v, 0, size);
  };
  const int64_t start = clamp(s.start().value_or(0));
  const int64_t stop = clamp(s.stop().value_or(size));
  const int64_t n = stop > start ? (stop - start - 1) / step + 1 : 0;
  return {start, n};
}

Indexed apply(const Tensor& self, ArrayRef<TensorIndex> items, const char* op) {
  DITTO_CHECK(self.defined(), ValueError, op, "undefined tensor");
  int64_t named = 0;
  int ellipses = 0;
  for (const TensorIndex& item : items) {
    named += dims_named(item);
    ellipses += item.is_ellipsis() ? 1 : 0;
  }
  DITTO_CHECK(
      ellipses <= 1,
      IndexError,
      op,
      "an index can only have a single ellipsis ('...')");
  DITTO_CHECK(
      named <= self.dim(),
      IndexError,
      op,
      "too many indices for tensor of dimension ",
      self.dim());
  Indexed r;
  r.view = self;
  int64_t dim = 0; // the dim of r.view the next entry applies to
  for (const TensorIndex& item : items) {
    switch (item.type()) {
      case TensorIndexType::None:
        r.view = r.view.unsqueeze(dim);
        r.advanced.emplace_back();
        ++dim;
        break;
      case TensorIndexType::Ellipsis: {
        const int64_t skip = self.dim() - named;
        r.advanced.insert(r.advanced.end(), size_t(skip), Tensor());
        dim += skip;
        break;
      }
      case TensorIndexType::Boolean:
        // x[True] is x[None]; x[False] is x[None][[]] (empty).
        r.view = r.view.unsqueeze(dim);
        r.has_advanced = true;
        r.advanced.push_back(
            item.boolean() ? ditto::tensor(std::vector<int64_t>{0})
                           : empty({0}, kInt64));
        ++dim;
        break;
      case TensorIndexType::Slice: {
        const int64_t step = item.slice().step().value_or(1);
        auto [start, n] = slice_range(item.slice(), r.view.size(dim), op);
        // One past the last element taken (start + n * step could
        // overflow for a huge step).
        const int64_t end = n == 0 ? start : start + (n - 1) * step + 1;
        r.view = r.view.slice(dim, start, end, step);
        r.advanced.emplace_back();
        ++dim;
        break;
      }
      case TensorIndexType::Integer:
        r.view = r.view.select(dim, item.integer());
        break;
      case TensorIndexType::Tensor: {
        const Tensor& idx = item.tensor();
        if (!idx.defined()) {
          r.advanced.emplace_back();
          ++dim;
        } else if (is_mask(idx)) {
          // One entry: index() reads a k-dim mask as covering k dims.
          r.has_advanced = true;
          r.advanced.push_back(idx.to(kBool));
          dim += std::max<int64_t>(idx.dim(), 1);
        } else {
          r.has_advanced = true;
          r.advanced.push_back(idx);
          ++dim;
        }
        break;
      }
    }
  }
  return r;
}

} // namespace

Tensor get(const Tensor& self, ArrayRef<TensorIndex> indices) {
  Indexed r = apply(self, indices, "index");
  if (r.has_advanced) {
    return ditto::index(r.view, r.advanced);
  }
  if (r.view.is_same(self)) { // x.index({"..."}), x.index({}): a new view
    return self.as_strided(self.sizes(), self.strides(), self.storage_offset());
  }
  return r.view;
}

void set(Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& values) {
  Indexed r = apply(self, indices, "index_put_");
  if (r.has_advanced) {
    r.view.index_put_(r.advanced, values);
  } else {
    r.view.copy_(values);
  }
}

void set(Tensor& self, ArrayRef<TensorIndex> indices, const Scalar& value) {
  Indexed r = apply(self, indices, "index_put_");
  if (r.has_advanced) {
    r.view.index_put_(r.advanced, scalar_tensor(value, self.dtype()));
  } else {
    r.view.fill_(value);
  }
}

} // namespace ditto::indexing

namespace ditto {

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> i) const {
  return indexing::get(*this, i);
}

Tensor Tensor::index(ArrayRef<indexing::TensorIndex> i) const {
  return indexing::get(*this, i);
}

Tensor& Tensor::index_put_(
    std::initializer_list<indexing::TensorIndex> i,
    const Tensor& values) {
  indexing::set(*this, i, values);
  return *this;
}

Tensor& Tensor::index_put_(
    ArrayRef<indexing::TensorIndex> i,
    const Tensor& values) {
  indexing::set(*this, i, values);
  return *this;
}

Tensor& Tensor::index_put_(
    std::initializer_list<indexing::TensorIndex> i,
    const Scalar& value) {
  indexing::set(*this, i, value);
  return *this;
}

Tensor& Tensor::index_put_(
    ArrayRef<indexing::TensorIndex> i,
    const Scalar& value) {
  indexing::set(*this, i, value);
  return *this;
}

} // namespace ditto
