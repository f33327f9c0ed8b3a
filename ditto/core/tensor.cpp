#include "ditto/core/tensor.h"

#include "ditto/core/deferred.h"
#include "ditto/core/view.h"

#include <algorithm>
#include <optional>

namespace ditto {
namespace {

void require_defined(const Tensor& self, const char* op) {
  DITTO_CHECK(self.defined(), ValueError, op, "the tensor is undefined");
}

Tensor make_view(
    const Tensor& base,
    Shape sizes,
    Shape strides,
    int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(
      base.storage(),
      std::move(sizes),
      std::move(strides),
      offset,
      base.dtype()));
}

} // namespace

namespace detail {
// Resolves one -1 in a requested shape against numel.
Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      DITTO_CHECK(!infer, ValueError, op, "only one dimension can be inferred");
      infer = i;
    } else {
      DITTO_CHECK(
          shape[i] >= 0, ValueError, op, "invalid shape dimension ", shape[i]);
      DITTO_CHECK(
          !__builtin_mul_overflow(known, shape[i], &known),
          ValueError,
          op,
          "shape ",
          shape_str(shape),
          " has too many elements");
    }
  }
  if (infer) {
    DITTO_CHECK(
        known != 0 && numel % known == 0,
        ValueError,
        op,
        "shape '",
        shape_str(shape),
        "' is invalid for input of size ",
        numel);
    out[*infer] = numel / known;
  } else {
    DITTO_CHECK(
        known == numel,
        ValueError,
        op,
        "shape '",
        shape_str(shape),
        "' is invalid for input of size ",
        numel);
  }
  return out;
}

} // namespace detail

namespace {
// Strides that let a tensor of old sizes/strides be viewed with new sizes,
// or nothing when a dimension would span two non-contiguous chunks (the same
// rule as PyTorch's computeStride).
std::optional<Shape> view_strides(
    const Shape& old_sizes,
    const Shape& old_strides,
    const Shape& new_sizes) {
  Shape new_strides(new_sizes.size());
  if (old_sizes.empty()) {
    std::fill(new_strides.begin(), new_strides.end(), 1);
    return new_strides;
  }
  int64_t numel = 1;
  for (int64_t s : old_sizes) {
    numel *= s;
  }
  if (numel == 0) {
    if (old_sizes == new_sizes) {
      return old_strides;
    }
    return contiguous_strides(new_sizes);
  }
  int64_t view_d = int64_t(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = int64_t(old_sizes.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    if (tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 &&
         old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) {
        return std::nullopt;
      }
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) {
    return std::nullopt;
  }
  return new_strides;
}

} // namespace

void TensorImpl::set_sizes_contiguous(Shape sizes) {
  strides_ = contiguous_strides(sizes);
  sizes_ = std::move(sizes);
}

namespace detail {
Tensor new_tensor(const Shape& sizes, Dtype dtype) {
  return new_tensor(sizes, dtype, kCPU);
}

Tensor new_tensor(const Shape& sizes, Dtype dtype, Device device) {
  int64_t n = checked_numel(sizes, "empty");
  return Tensor(std::make_shared<TensorImpl>(
      std::make_shared<Storage>(checked_nbytes(n, dtype, "empty"), device),
      sizes,
      contiguous_strides(sizes),
      0,
      dtype));
}
} // namespace detail

void Tensor::check_defined(const char* op) const {
  DITTO_CHECK(impl_ != nullptr, ValueError, op, "the tensor is undefined");
}

void Tensor::check_dtype_access(Dtype requested, const char* op) const {
  check_defined(op);
  DITTO_CHECK(
      requested == impl_->dtype(),
      TypeError,
      op,
      "expected a ",
      impl_->dtype(),
      " pointer type but got ",
      requested);
}

Dtype Tensor::dtype() const {
  check_defined("dtype");
  return impl_->dtype();
}

Device Tensor::device() const {
  check_defined("device");
  if (impl_->is_sparse()) {
    return impl_->sparse()->values.device();
  }
  return impl_->storage()->device();
}

Layout Tensor::layout() const {
  check_defined("layout");
  return impl_->is_sparse() ? kSparse : kStrided;
}

void detail::require_strided(const Tensor& t, const char* op) {
  DITTO_CHECK(
      !t.defined() || !t.impl()->is_sparse(),
      TypeError,
      op,
      "got a sparse tensor (layout torch.sparse_coo), which this op does not "
      "take: convert it with to_dense() first");
}

const Shape& Tensor::sizes() const {
  check_defined("sizes");
  return impl_->sizes();
}

const Shape& Tensor::strides() const {
  check_defined("strides");
  detail::require_strided(*this, "strides");
  return impl_->strides();
}

int64_t Tensor::size(int64_t d) const {
  DITTO_CHECK(dim() > 0, IndexError, "size", "a 0-d tensor has no dims");
  return sizes()[wrap_dim(d, dim(), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  DITTO_CHECK(dim() > 0, IndexError, "stride", "a 0-d tensor has no dims");
  return strides()[wrap_dim(d, dim(), "stride")];
}

int64_t Tensor::storage_offset() const {
  check_defined("storage_offset");
  return impl_->offset();
}

int64_t Tensor::dim() const {
  return int64_t(sizes().size());
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes()) {
    n *= s;
  }
  return n;
}

size_t Tensor::element_size() const {
  return ditto::element_size(dtype());
}

size_t Tensor::nbytes() const {
  return size_t(numel()) * element_size();
}

bool Tensor::is_contiguous() const {
  detail::require_strided(*this, "is_contiguous");
  const Shape& sz = sizes();
  const Shape& st = impl_->strides();
  for (int64_t s : sz) {
    if (s == 0) {
      return true; // empty tensors are contiguous, as in PyTorch
    }
  }
  int64_t expected = 1;
  for (size_t i = sz.size(); i-- > 0;) {
    if (sz[i] != 1 && st[i] != expected) {
      return false;
    }
    expected *= sz[i];
  }
  return true;
}

const std::shared_ptr<Storage>& Tensor::storage() const {
  check_defined("storage");
  detail::require_strided(*this, "storage");
  return impl_->storage();
}

void* Tensor::raw_data() const {
  check_defined("data_ptr");
  detail::require_strided(*this, "data_ptr");
  DITTO_CHECK(
      impl_->storage()->device().is_cpu(),
      ValueError,
      "data_ptr",
      "the tensor's elements are on ",
      impl_->storage()->device(),
      ", not in host memory: copy them with .cpu() first");
  detail::run_deferred();
  return static_cast<char*>(impl_->storage()->data()) +
      impl_->offset() * int64_t(ditto::element_size(impl_->dtype()));
}

Scalar Tensor::item_scalar() const {
  check_defined("item");
  DITTO_CHECK(
      numel() == 1,
      ValueError,
      "item",
      "a tensor with ",
      numel(),
      " elements cannot be converted to a scalar");
  if (!device().is_cpu()) {
    return cpu().item_scalar();
  }
  if (!has_kernels(dtype())) { // Note [Storage dtypes]: exact
    return to(compute_dtype(dtype())).item_scalar();
  }
  return dispatch_dtype(dtype(), "item", [&]<typename T>() {
    return Scalar(*static_cast<const T*>(raw_data()));
  });
}

namespace detail {

Tensor as_strided_view(
    const Tensor& self,
    const Shape& sizes,
    const Shape& strides,
    int64_t offset) {
  require_defined(self, "as_strided");
  const char* op = "as_strided";
  DITTO_CHECK(offset >= 0, ValueError, op, "negative offset ", offset);
  int64_t extent = strided_extent(sizes, strides, op);
  int64_t capacity = int64_t(
      self.impl()->storage()->nbytes() / ditto::element_size(self.dtype()));
  DITTO_CHECK(
      extent == 0 || (extent <= capacity && offset <= capacity - extent),
      ValueError,
      op,
      "sizes ",
      shape_str(sizes),
      ", strides ",
      shape_str(strides),
      " and offset ",
      offset,
      " reach ",
      extent,
      " elements past the offset, but the storage has ",
      capacity);
  return make_view(self, sizes, strides, offset);
}

Tensor shape_view(const Tensor& self, const Shape& shape) {
  require_defined(self, "view");
  Shape sizes = infer_size(shape, self.numel(), "view");
  auto strides =
      view_strides(self.impl()->sizes(), self.impl()->strides(), sizes);
  DITTO_CHECK(
      strides.has_value(),
      ValueError,
      "view",
      "view size ",
      shape_str(shape),
      " is not compatible with input tensor's size ",
      shape_str(self.impl()->sizes()),
      " and stride ",
      shape_str(self.impl()->strides()),
      " (at least one dimension spans across two contiguous subspaces); "
      "use reshape instead");
  return make_view(self, sizes, *strides, self.impl()->offset());
}

Tensor permute_view(const Tensor& self, const IntList& dims) {
  require_defined(self, "permute");
  int64_t n = self.dim();
  DITTO_CHECK(
      int64_t(dims.size()) == n,
      ValueError,
      "permute",
      "number of dims ",
      shape_str(dims),
      " doesn't match the tensor's ",
      n,
      " dims");
  Shape sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    DITTO_CHECK(!seen[d], ValueError, "permute", "repeated dim ", dims[i]);
    seen[d] = true;
    sizes[i] = self.impl()->sizes()[d];
    strides[i] = self.impl()->strides()[d];
  }
  return make_view(self, sizes, strides, self.impl()->offset());
}

Tensor transpose_view(const Tensor& self, int64_t dim0, int64_t dim1) {
  require_defined(self, "transpose");
  int64_t n = self.dim();
  if (n == 0) {
    wrap_dim(dim0, n, "transpose");
    wrap_dim(dim1, n, "transpose");
    return make_view(self, {}, {}, self.impl()->offset());
  }
  int64_t a = wrap_dim(dim0, n, "transpose");
  int64_t b = wrap_dim(dim1, n, "transpose");
  Shape sizes = self.impl()->sizes(), strides = self.impl()->strides();
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return make_view(self, sizes, strides, self.impl()->offset());
}

Tensor narrow_view(
    const Tensor& self,
    int64_t d,
    int64_t start,
    int64_t length) {
  require_defined(self, "narrow");
  DITTO_CHECK(
      self.dim() > 0, IndexError, "narrow", "cannot narrow a 0-d tensor");
  d = wrap_dim(d, self.dim(), "narrow");
  int64_t size = self.impl()->sizes()[d];
  if (start < 0) {
    start += size;
  }
  DITTO_CHECK(
      start >= 0 && start <= size,
      IndexError,
      "narrow",
      "start ",
      start,
      " out of range for dimension ",
      d,
      " of size ",
      size);
  DITTO_CHECK(
      length >= 0 && length <= size - start,
      IndexError,
      "narrow",
      "start (",
      start,
      ") + length (",
      length,
      ") exceeds dimension size (",
      size,
      ")");
  return slice_view(self, d, start, start + length, 1);
}

Tensor select_view(const Tensor& self, int64_t d, int64_t index) {
  require_defined(self, "select");
  DITTO_CHECK(
      self.dim() > 0, IndexError, "select", "cannot select from a 0-d tensor");
  d = wrap_dim(d, self.dim(), "select");
  int64_t size = self.impl()->sizes()[d];
  DITTO_CHECK(
      index >= -size && index < size,
      IndexError,
      "select",
      "index ",
      index,
      " is out of bounds for dimension ",
      d,
      " with size ",
      size);
  if (index < 0) {
    index += size;
  }
  Shape sizes = self.impl()->sizes(), strides = self.impl()->strides();
  int64_t offset = self.impl()->offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, offset);
}

Tensor slice_view(
    const Tensor& self,
    int64_t d,
    int64_t start,
    int64_t end,
    int64_t step) {
  require_defined(self, "slice");
  DITTO_CHECK(self.dim() > 0, IndexError, "slice", "cannot slice a 0-d tensor");
  d = wrap_dim(d, self.dim(), "slice");
  DITTO_CHECK(
      step > 0, ValueError, "slice", "step must be positive, got ", step);
  int64_t size = self.impl()->sizes()[d];
  // Python slice semantics: negative bounds count from the end, then clamp.
  if (start < 0) {
    start = start + size < 0 ? 0 : start + size;
  }
  if (end < 0) {
    end = end + size < 0 ? 0 : end + size;
  }
  start = std::min(start, size);
  end = std::clamp(end, start, size);
  Shape sizes = self.impl()->sizes(), strides = self.impl()->strides();
  int64_t offset = self.impl()->offset() + start * strides[d];
  sizes[d] = end > start ? (end - start - 1) / step + 1 : 0;
  DITTO_CHECK(
      !__builtin_mul_overflow(strides[d], step, &strides[d]),
      ValueError,
      "slice",
      "step ",
      step,
      " is too large for stride ",
      self.impl()->strides()[d]);
  return make_view(self, sizes, strides, offset);
}

Tensor unsqueeze_view(const Tensor& self, int64_t d) {
  require_defined(self, "unsqueeze");
  d = wrap_dim(d, self.dim() + 1, "unsqueeze");
  Shape sizes = self.impl()->sizes(), strides = self.impl()->strides();
  int64_t st = d < self.dim() ? sizes[d] * strides[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  return make_view(self, sizes, strides, self.impl()->offset());
}

Tensor squeeze_view(const Tensor& self) {
  require_defined(self, "squeeze");
  Shape sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (self.impl()->sizes()[i] != 1) {
      sizes.push_back(self.impl()->sizes()[i]);
      strides.push_back(self.impl()->strides()[i]);
    }
  }
  return make_view(self, sizes, strides, self.impl()->offset());
}

Tensor squeeze_view(const Tensor& self, int64_t d) {
  require_defined(self, "squeeze");
  d = wrap_dim(d, self.dim(), "squeeze");
  Shape sizes = self.impl()->sizes(), strides = self.impl()->strides();
  if (self.dim() > 0 && sizes[d] == 1) {
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  return make_view(self, sizes, strides, self.impl()->offset());
}

Tensor expand_view(const Tensor& self, const Shape& shape) {
  require_defined(self, "expand");
  int64_t n = int64_t(shape.size());
  DITTO_CHECK(
      n >= self.dim(),
      ValueError,
      "expand",
      "the number of sizes provided (",
      n,
      ") must be greater or equal to the number of dimensions in the tensor (",
      self.dim(),
      ")");
  Shape sizes(n), strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t j = i - (n - self.dim());
    int64_t want = shape[i];
    if (j < 0) {
      DITTO_CHECK(
          want >= 0,
          ValueError,
          "expand",
          "-1 is not allowed in a leading, non-existing dimension ",
          i);
      sizes[i] = want;
      strides[i] = 0;
      continue;
    }
    int64_t have = self.impl()->sizes()[j];
    if (want == -1) {
      want = have;
    }
    DITTO_CHECK(
        want >= 0,
        ValueError,
        "expand",
        "invalid size ",
        shape[i],
        " for dimension ",
        i,
        ".  Target sizes: ",
        shape_str(shape));
    DITTO_CHECK(
        have == want || have == 1,
        ValueError,
        "expand",
        "the expanded size of the tensor (",
        want,
        ") must match the existing size (",
        have,
        ") at non-singleton dimension ",
        i,
        ".  Target sizes: ",
        shape_str(shape),
        ".  Tensor sizes: ",
        shape_str(self.impl()->sizes()));
    sizes[i] = want;
    strides[i] = have == want ? self.impl()->strides()[j] : 0;
  }
  checked_numel(sizes, "expand");
  return make_view(self, sizes, strides, self.impl()->offset());
}

Shape flatten_shape(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  require_defined(self, "flatten");
  if (self.dim() == 0) {
    return {1};
  }
  int64_t s = wrap_dim(start_dim, self.dim(), "flatten");
  int64_t e = wrap_dim(end_dim, self.dim(), "flatten");
  DITTO_CHECK(
      s <= e,
      ValueError,
      "flatten",
      "start_dim ",
      start_dim,
      " cannot come after end_dim ",
      end_dim);
  Shape sizes;
  int64_t merged = 1;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < s || i > e) {
      sizes.push_back(self.impl()->sizes()[i]);
    } else {
      merged *= self.impl()->sizes()[i];
      if (i == e) {
        sizes.push_back(merged);
      }
    }
  }
  return sizes;
}

std::optional<Tensor> try_shape_view(const Tensor& self, const Shape& sizes) {
  auto strides = view_strides(self.sizes(), self.strides(), sizes);
  if (!strides) {
    return std::nullopt;
  }
  return make_view(self, sizes, *strides, self.storage_offset());
}

} // namespace detail

void Scalar::throw_overflow(const char* op, Dtype d) const {
  detail::throw_error<ValueError>(
      op,
      "value ",
      *this,
      " cannot be converted to type ",
      d,
      " without overflow");
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return os << (s.to<bool>() ? "True" : "False");
    case Scalar::Kind::Int:
      return os << s.to<int64_t>();
    case Scalar::Kind::Float:
      return os << s.to<double>();
  }
  return os;
}

} // namespace ditto
