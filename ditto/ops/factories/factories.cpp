#include "ditto/ops/factories.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>

#include "ditto/determinism/context.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/sparse.h"

namespace ditto {
namespace {

// What empty() writes while the deterministic mode and the fill flag are on.
Scalar uninitialized_fill_value(Dtype dtype) {
  if (dtype == kFloat16 || dtype == kBFloat16) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  if (dtype == kInt8 || dtype == kInt16) {
    return dtype == kInt8 ? int64_t(INT8_MAX) : int64_t(INT16_MAX);
  }
  return dispatch_dtype(dtype, "empty", [&]<typename T>() -> Scalar {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::quiet_NaN();
    } else {
      return std::numeric_limits<T>::max();
    }
  });
}

Tensor maybe_fill(Tensor t) {
  auto policy = determinism::current_policy();
  if (policy.deterministic && policy.fill_uninitialized_memory) {
    t.fill_(uninitialized_fill_value(t.dtype()));
  }
  return t;
}

Dtype default_dtype_for(const Scalar& s) {
  return s.is_bool() ? kBool : s.is_integral() ? kInt64 : kFloat32;
}

} // namespace

Tensor empty(const Shape& shape, Dtype dtype) {
  return empty(shape, dtype, kCPU);
}

Tensor empty(const Shape& shape, Dtype dtype, Device device) {
  detail::OpScope op("empty");
  return op.done(maybe_fill(detail::new_tensor(shape, dtype, device)));
}

Tensor empty_strided(const Shape& sizes, const Shape& strides, Dtype dtype) {
  detail::OpScope op("empty_strided");
  int64_t extent = strided_extent(sizes, strides, "empty_strided");
  Tensor base = detail::new_tensor({extent}, dtype);
  Tensor t = base.as_strided(sizes, strides, 0);
  if (determinism::current_policy().deterministic &&
      determinism::fill_uninitialized_memory()) {
    base.fill_(uninitialized_fill_value(dtype));
  }
  return op.done(t);
}

Tensor zeros(const Shape& shape, Dtype dtype) {
  return zeros(shape, dtype, kCPU);
}

Tensor zeros(const Shape& shape, Dtype dtype, Device device) {
  detail::OpScope op("zeros");
  checked_numel(shape, "zeros"); // its errors name zeros, not empty
  Tensor t = detail::new_tensor(shape, dtype, device);
  if (device.is_cpu()) {
    std::memset(t.raw_data(), 0, t.nbytes());
  } else {
    t.fill_(0);
  }
  return op.done(t);
}

Tensor ones(const Shape& shape, Dtype dtype) {
  return ones(shape, dtype, kCPU);
}

Tensor ones(const Shape& shape, Dtype dtype, Device device) {
  detail::OpScope op("ones");
  checked_numel(shape, "ones"); // its errors name ones, not full
  return op.done(full(shape, 1, dtype, device));
}

Tensor full(const Shape& shape, const Scalar& value, Dtype dtype) {
  return full(shape, value, dtype, kCPU);
}

Tensor full(
    const Shape& shape,
    const Scalar& value,
    Dtype dtype,
    Device device) {
  detail::OpScope op("full");
  checked_numel(shape, "full");
  Tensor t = detail::new_tensor(shape, dtype, device);
  t.fill_(value);
  return op.done(t);
}

Tensor full(const Shape& shape, const Scalar& value) {
  return full(shape, value, default_dtype_for(value));
}

// Declared with torch's options (factories.ops.toml): without a dtype, the
// value's.
Tensor full(
    const IntArg& size,
    const Scalar& fill_value,
    const TensorOptions& options) {
  const Dtype d = options.dtype_opt().value_or(default_dtype_for(fill_value));
  return detail::with_options(
      full(size, fill_value, d, options.device()), options);
}

// The *_like factories keep t's device, as PyTorch's do.
Tensor empty_like(const Tensor& t) {
  return empty(t.sizes(), t.dtype(), t.device());
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.sizes(), t.dtype(), t.device());
}
Tensor ones_like(const Tensor& t) {
  return ones(t.sizes(), t.dtype(), t.device());
}
Tensor full_like(const Tensor& t, const Scalar& value) {
  return full(t.sizes(), value, t.dtype(), t.device());
}
Tensor empty_like(const Tensor& t, Dtype dtype) {
  return empty(t.sizes(), dtype, t.device());
}
Tensor zeros_like(const Tensor& t, Dtype dtype) {
  return zeros(t.sizes(), dtype, t.device());
}
Tensor ones_like(const Tensor& t, Dtype dtype) {
  return ones(t.sizes(), dtype, t.device());
}

// The new_* factories: self's dtype and device unless the options give
// theirs (LibTorch's x.new_zeros(size, options)); the options' requires_grad.
// The sizes are checked under the op's own name.
namespace {
TensorOptions new_options(
    const Tensor& self,
    const IntArg& size,
    const TensorOptions& options,
    const char* op) {
  DITTO_CHECK(self.defined(), ValueError, op, "undefined tensor");
  checked_numel(size, op);
  return detail::like_options(self, options);
}
} // namespace

Tensor new_empty(
    const Tensor& self,
    const IntArg& size,
    const TensorOptions& options) {
  detail::OpScope scope("new_empty", {}, detail::OpScope::kComposite);
  return scope.done(empty(size, new_options(self, size, options, "new_empty")));
}
Tensor new_zeros(
    const Tensor& self,
    const IntArg& size,
    const TensorOptions& options) {
  detail::OpScope scope("new_zeros", {}, detail::OpScope::kComposite);
  return scope.done(zeros(size, new_options(self, size, options, "new_zeros")));
}
Tensor new_ones(
    const Tensor& self,
    const IntArg& size,
    const TensorOptions& options) {
  detail::OpScope scope("new_ones", {}, detail::OpScope::kComposite);
  return scope.done(ones(size, new_options(self, size, options, "new_ones")));
}
Tensor new_full(
    const Tensor& self,
    const IntArg& size,
    const Scalar& fill_value,
    const TensorOptions& options) {
  detail::OpScope scope("new_full", {}, detail::OpScope::kComposite);
  return scope.done(
      full(size, fill_value, new_options(self, size, options, "new_full")));
}

Tensor arange(const Scalar& end) {
  return arange(0, end, 1);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step) {
  bool floating =
      start.is_floating() || end.is_floating() || step.is_floating();
  return arange(start, end, step, floating ? kFloat32 : kInt64);
}

Tensor arange(
    const Scalar& start,
    const Scalar& end,
    const Scalar& step,
    Dtype dtype) {
  detail::OpScope op("arange");
  double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
  DITTO_CHECK(
      std::isfinite(s) && std::isfinite(e),
      ValueError,
      "arange",
      "unsupported range: ",
      start,
      " -> ",
      end);
  DITTO_CHECK(st != 0, ValueError, "arange", "step must be nonzero");
  DITTO_CHECK(
      (st > 0 && e >= s) || (st < 0 && e <= s),
      ValueError,
      "arange",
      "upper bound and larger bound inconsistent with step sign");
  DITTO_CHECK(dtype != kBool, TypeError, "arange", "not implemented for bool");
  // The count as PyTorch computes it: ceil((end - start) / step) in double,
  // or exactly in integers when all three are integers.
  bool all_int =
      !start.is_floating() && !end.is_floating() && !step.is_floating();
  // In 128 bits, so no range of int64 values overflows.
  __int128 n128;
  if (all_int) {
    __int128 a = start.to<int64_t>(), b = end.to<int64_t>(),
             c = step.to<int64_t>();
    n128 = c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / (-c);
  } else {
    double count = std::ceil((e - s) / st);
    n128 = count < 0x1p62 ? __int128(count) : __int128(1) << 62;
  }
  DITTO_CHECK(
      n128 < (__int128(1) << 62),
      ValueError,
      "arange",
      "range ",
      start,
      " to ",
      end,
      " by ",
      step,
      " has too many elements");
  const int64_t n = int64_t(n128);
  // Note [Storage dtypes]: made in the compute dtype, rounded once.
  Tensor t = detail::new_tensor({n}, compute_dtype(dtype));
  dispatch_dtype(t.dtype(), "arange", [&]<typename T>() {
    T* p = t.data_ptr<T>();
    if (all_int) {
      // Exact; narrower integer types wrap, as a cast in PyTorch does.
      __int128 a = start.to<int64_t>(), c = step.to<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        p[i] = Scalar(int64_t(a + i * c)).to<T>();
      }
      return;
    }
    // start + i * step in double, then converted as Tensor::to converts.
    for (int64_t i = 0; i < n; ++i) {
      p[i] = Scalar(s + double(i) * st).to<T>();
    }
  });
  return op.done(t.to(dtype));
}

Tensor linspace(
    const Scalar& start,
    const Scalar& end,
    int64_t steps,
    Dtype dtype) {
  detail::OpScope op("linspace");
  DITTO_CHECK(
      steps >= 0,
      ValueError,
      "linspace",
      "number of steps must be non-negative, got ",
      steps);
  Tensor t = detail::new_tensor({steps}, compute_dtype(dtype));
  double a = start.to<double>(), b = end.to<double>();
  // PyTorch's scheme: the first half counts up from start, the second half
  // down from end, so both endpoints are exact.
  double step = steps > 1 ? (b - a) / double(steps - 1) : 0.0;
  int64_t half = steps / 2;
  dispatch_dtype(t.dtype(), "linspace", [&]<typename T>() {
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < steps; ++i) {
      double v = (i < half || steps == 1) ? a + step * double(i)
                                          : b - step * double(steps - i - 1);
      p[i] = Scalar(v).to<T>();
    }
  });
  return op.done(t.to(dtype));
}

Tensor eye(int64_t n, Dtype dtype) {
  return eye(n, n, dtype);
}

Tensor eye(int64_t n, int64_t m, Dtype dtype) {
  detail::OpScope op("eye");
  DITTO_CHECK(n >= 0, ValueError, "eye", "n must be non-negative, got ", n);
  DITTO_CHECK(m >= 0, ValueError, "eye", "m must be non-negative, got ", m);
  Tensor t = zeros({n, m}, compute_dtype(dtype));
  dispatch_dtype(t.dtype(), "eye", [&]<typename T>() {
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) {
      p[i * m + i] = T(1);
    }
  });
  return op.done(t.to(dtype));
}

Tensor from_blob(
    void* data,
    const Shape& sizes,
    Dtype dtype,
    std::function<void(void*)> deleter) {
  return from_blob(data, sizes, contiguous_strides(sizes), dtype, deleter);
}

Tensor from_blob(
    void* data,
    const Shape& sizes,
    const Shape& strides,
    Dtype dtype,
    std::function<void(void*)> deleter) {
  DITTO_CHECK(
      data != nullptr || checked_numel(sizes, "from_blob") == 0,
      ValueError,
      "from_blob",
      "null data pointer");
  int64_t extent = strided_extent(sizes, strides, "from_blob");
  size_t nbytes = checked_nbytes(extent, dtype, "from_blob");
  DITTO_CHECK(
      reinterpret_cast<uintptr_t>(data) % element_size(dtype) == 0,
      ValueError,
      "from_blob",
      "data pointer is not aligned to the ",
      element_size(dtype),
      "-byte ",
      dtype,
      " elements");
  return Tensor(std::make_shared<TensorImpl>(
      std::make_shared<Storage>(data, nbytes, std::move(deleter)),
      sizes,
      strides,
      0,
      dtype));
}

namespace detail {
Tensor tensor_from_bytes(
    const void* data,
    int64_t count,
    Dtype dtype,
    const Shape& shape,
    bool shape_given) {
  detail::OpScope op("tensor");
  Shape s = shape_given ? shape : Shape{count};
  int64_t n = checked_numel(s, "tensor");
  DITTO_CHECK(
      n == count,
      ValueError,
      "tensor",
      "shape ",
      shape_str(s),
      " needs ",
      n,
      " values but ",
      count,
      " were given");
  Tensor t = new_tensor(s, dtype);
  if (count > 0) {
    std::memcpy(t.raw_data(), data, size_t(count) * element_size(dtype));
  }
  return op.done(t);
}
} // namespace detail

std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {
  return os << "TensorOptions(dtype=" << o.dtype() << ", device=" << o.device()
            << ", requires_grad=" << (o.requires_grad() ? "true" : "false")
            << ")";
}

// ---- LibTorch's torch::tensor forms

namespace {

template <typename To, typename From>
Tensor braced(std::initializer_list<From> values, Shape shape) {
  std::vector<To> v(values.begin(), values.end());
  if constexpr (std::is_same_v<To, bool>) {
    std::vector<uint8_t> bytes(v.begin(), v.end());
    return detail::tensor_from_bytes(
        bytes.data(), int64_t(bytes.size()), kBool, shape, true);
  } else {
    return detail::tensor_from_bytes(
        v.data(), int64_t(v.size()), dtype_of<To>, shape, true);
  }
}

} // namespace

Tensor tensor(std::initializer_list<double> values) {
  return braced<float>(values, {int64_t(values.size())});
}
Tensor tensor(std::initializer_list<float> values) {
  return braced<float>(values, {int64_t(values.size())});
}
Tensor tensor(std::initializer_list<int> values) {
  return braced<int64_t>(values, {int64_t(values.size())});
}
Tensor tensor(std::initializer_list<int64_t> values) {
  return braced<int64_t>(values, {int64_t(values.size())});
}
Tensor tensor(std::initializer_list<bool> values) {
  return braced<bool>(values, {int64_t(values.size())});
}
Tensor tensor(double value) {
  return braced<float>({value}, {});
}
Tensor tensor(int64_t value) {
  return braced<int64_t>({value}, {});
}
Tensor tensor(int value) {
  return braced<int64_t>({value}, {});
}
Tensor tensor(bool value) {
  return braced<bool>({value}, {});
}

Tensor scalar_tensor(const Scalar& value, Dtype dtype) {
  detail::OpScope op("scalar_tensor");
  return op.done(full({}, value, dtype));
}

// ---- Tensor methods that copy

Tensor Tensor::contiguous() const {
  if (is_contiguous()) {
    return *this;
  }
  return clone();
}

Tensor clone(const Tensor& self) {
  DITTO_CHECK(self.defined(), ValueError, "clone", "undefined tensor");
  detail::OpScope op("clone", {self});
  Tensor out = detail::new_tensor(self.sizes(), self.dtype(), self.device());
  detail::copy_into(out, self, "clone");
  return op.done(out, [](const autograd::GradList& g) { return g; });
}

// non_blocking changes nothing in the three forms of to: every copy, between
// devices too, completes before to returns.
Tensor Tensor::to(Dtype d, bool /*non_blocking*/, bool copy) const {
  check_defined("to");
  if (d == dtype() && !copy) {
    return *this;
  }
  detail::OpScope op("to", {*this});
  Tensor out = detail::new_tensor(sizes(), d, device());
  detail::copy_into(out, *this, "to");
  // The engine casts the gradient back to this tensor's dtype.
  return op.done(out, [](const autograd::GradList& g) { return g; });
}

Tensor Tensor::to(
    Device d,
    std::optional<Dtype> t,
    bool non_blocking,
    bool copy) const {
  check_defined("to");
  if (t && *t != dtype()) {
    // Convert where the tensor is (on the CPU when either end is the CPU);
    // at least one step copies.
    return device().is_cpu() ? to(*t, non_blocking).to(d, {}, non_blocking)
                             : to(d, {}, non_blocking).to(*t, non_blocking);
  }
  const Device from = device();
  if (d == from && !copy) {
    return *this;
  }
  detail::OpScope op("to", {*this});
  // As PyTorch's preserve_format: a dense tensor whose dims are only
  // permuted (a transpose) keeps its strides on the other device.
  std::vector<int64_t> perm(static_cast<size_t>(dim()));
  for (int64_t i = 0; i < dim(); ++i) {
    perm[size_t(i)] = i;
  }
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    return stride(x) > stride(y);
  });
  Tensor out;
  if (dim() >= 2 && !is_contiguous() && permute(perm).is_contiguous()) {
    std::vector<int64_t> inverse(perm.size());
    Shape permuted;
    for (size_t i = 0; i < perm.size(); ++i) {
      inverse[size_t(perm[i])] = int64_t(i);
      permuted.push_back(size(perm[i]));
    }
    out = detail::new_tensor(permuted, dtype(), d).permute(inverse);
  } else {
    out = detail::new_tensor(sizes(), dtype(), d);
  }
  detail::copy_into(out, *this, "to");
  return op.done(out, [from](const autograd::GradList& g) {
    return autograd::GradList{g[0].defined() ? g[0].to(from) : g[0]};
  });
}

Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  DITTO_CHECK(other.defined(), ValueError, "to", "other is undefined");
  return to(other.device(), other.dtype(), non_blocking, copy);
}

// non_blocking changes nothing: every copy, between devices too, completes
// before copy_ returns.
Tensor& Tensor::copy_(const Tensor& src, bool /*non_blocking*/) {
  check_defined("copy_");
  DITTO_CHECK(src.defined(), ValueError, "copy_", "the source is undefined");
  detail::OpScope op("copy_", {*this, src}, detail::OpScope::kInplace);
  detail::copy_into(*this, src, "copy_");
  // The old values are overwritten: no gradient to them. The engine sums a
  // broadcast source's gradient back to its shape.
  return op.done_inplace(*this, [](const autograd::GradList& g) {
    return autograd::GradList{Tensor(), g[0]};
  });
}

Tensor& Tensor::fill_(const Scalar& value) {
  check_defined("fill_");
  detail::OpScope op("fill_", {*this}, detail::OpScope::kInplace);
  detail::check_no_internal_overlap(*this, "fill_");
  // Note [Storage dtypes]: the value in the compute dtype, rounded once by
  // the copy.
  const Dtype c = compute_dtype(dtype());
  dispatch_dtype(c, "fill_", [&]<typename T>() {
    T v = value.to_checked<T>("fill_");
    Tensor src = from_blob(&v, {}, c);
    detail::copy_into(*this, src, "fill_");
  });
  return op.done_inplace(
      *this, [](const autograd::GradList&) { return autograd::GradList{{}}; });
}

Tensor& Tensor::resize_(const IntArg& shape) {
  check_defined("resize_");
  DITTO_CHECK(
      !autograd::requires_grad(*this),
      ValueError,
      "resize_",
      "cannot resize variables that require grad");
  detail::OpScope op("resize_", {*this}, detail::OpScope::kInplace);
  int64_t n = checked_numel(shape, "resize_");
  const int64_t offset = impl_->offset();
  size_t need = checked_nbytes(offset + n, dtype(), "resize_");
  Storage& st = *impl_->storage();
  const size_t old_bytes = st.nbytes();
  if (need > old_bytes) {
    st.grow(need);
    auto policy = determinism::current_policy();
    if (policy.deterministic && policy.fill_uninitialized_memory) {
      const int64_t es = int64_t(element_size());
      const int64_t first = (int64_t(old_bytes) + es - 1) / es;
      const int64_t total = int64_t(need) / es;
      Tensor fresh = Tensor(impl_).as_strided({total - first}, {1}, first);
      fresh.fill_(uninitialized_fill_value(dtype()));
    }
  }
  impl_->set_sizes_contiguous(shape);
  return op.done_inplace(*this);
}

Tensor& Tensor::zero_() {
  if (defined() && impl_->is_sparse()) {
    return detail::sparse_zero_(*this);
  }
  return fill_(0);
}

} // namespace ditto
