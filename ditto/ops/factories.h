#pragma once

#include <functional>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "ditto/core/tensor.h"
#include "ditto/core/tensor_options.h"
#include "ditto/ops/declared.h"

namespace ditto {

// Uninitialized memory (see determinism::fill_uninitialized_memory).
DITTO_API Tensor empty(const Shape& shape, Dtype dtype = kFloat32);
DITTO_API Tensor
empty_strided(const Shape& sizes, const Shape& strides, Dtype dtype = kFloat32);
DITTO_API Tensor zeros(const Shape& shape, Dtype dtype = kFloat32);
DITTO_API Tensor ones(const Shape& shape, Dtype dtype = kFloat32);
DITTO_API Tensor full(const Shape& shape, const Scalar& value, Dtype dtype);
// Without a dtype, full infers it from the value (bool, int64 or float32), as
// torch.full does.
DITTO_API Tensor full(const Shape& shape, const Scalar& value);
// On a device (docs/device.md): zeros({2, 3}, kFloat32, Device("vulkan")).
DITTO_API Tensor empty(const Shape& shape, Dtype dtype, Device device);
DITTO_API Tensor zeros(const Shape& shape, Dtype dtype, Device device);
DITTO_API Tensor ones(const Shape& shape, Dtype dtype, Device device);
DITTO_API Tensor
full(const Shape& shape, const Scalar& value, Dtype dtype, Device device);

DITTO_API Tensor empty_like(const Tensor& t);
DITTO_API Tensor zeros_like(const Tensor& t);
DITTO_API Tensor ones_like(const Tensor& t);
DITTO_API Tensor full_like(const Tensor& t, const Scalar& value);
DITTO_API Tensor empty_like(const Tensor& t, Dtype dtype);
DITTO_API Tensor zeros_like(const Tensor& t, Dtype dtype);
DITTO_API Tensor ones_like(const Tensor& t, Dtype dtype);

// [0, end) or [start, end) by step; dtype inferred as torch.arange does
// (int64 for integer arguments, float32 otherwise) unless given.
DITTO_API Tensor arange(const Scalar& end);
DITTO_API Tensor
arange(const Scalar& start, const Scalar& end, const Scalar& step = 1);
DITTO_API Tensor
arange(const Scalar& start, const Scalar& end, const Scalar& step, Dtype dtype);
DITTO_API Tensor linspace(
    const Scalar& start,
    const Scalar& end,
    int64_t steps,
    Dtype dtype = kFloat32);
DITTO_API Tensor eye(int64_t n, Dtype dtype = kFloat32);
DITTO_API Tensor eye(int64_t n, int64_t m, Dtype dtype = kFloat32);

// Wraps caller memory without copying; the caller keeps it alive (or passes
// a deleter that frees it). Strides default to contiguous.
DITTO_API Tensor from_blob(
    void* data,
    const Shape& sizes,
    Dtype dtype,
    std::function<void(void*)> deleter = {});
DITTO_API Tensor from_blob(
    void* data,
    const Shape& sizes,
    const Shape& strides,
    Dtype dtype,
    std::function<void(void*)> deleter = {});

namespace detail {
DITTO_API Tensor tensor_from_bytes(
    const void* data,
    int64_t count,
    Dtype dtype,
    const Shape& shape,
    bool shape_given);
} // namespace detail

// Copies values into a new tensor; without a shape it is one-dimensional.
template <typename T>
Tensor tensor(const std::vector<T>& values, const Shape& shape) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return detail::tensor_from_bytes(
        bytes.data(), int64_t(bytes.size()), kBool, shape, true);
  } else {
    return detail::tensor_from_bytes(
        values.data(), int64_t(values.size()), dtype_of<T>, shape, true);
  }
}
template <typename T>
Tensor tensor(const std::vector<T>& values) {
  return tensor(values, Shape{int64_t(values.size())});
}
template <typename T>
Tensor tensor(std::initializer_list<T> values, const Shape& shape) {
  return tensor(std::vector<T>(values), shape);
}
template <typename T>
Tensor tensor(std::initializer_list<T> values) {
  return tensor(std::vector<T>(values));
}
// A zero-dimensional tensor holding one value.
DITTO_API Tensor scalar_tensor(const Scalar& value, Dtype dtype);

// ---- LibTorch's forms (ditto/core/tensor_options.h).

namespace detail {
// requires_grad as the options ask.
inline Tensor with_options(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) {
    t.requires_grad_(true);
  }
  return t;
}
// t on the options' device (made on the CPU first; no op here draws on a
// device).
inline Tensor on_device(Tensor t, const TensorOptions& o) {
  return with_options(o.has_device() ? t.to(o.device()) : t, o);
}
// The options of a *_like factory: self's dtype and device unless o gives
// them.
inline TensorOptions like_options(const Tensor& self, const TensorOptions& o) {
  return o.dtype(o.dtype_opt().value_or(self.dtype()))
      .device(o.device_opt().value_or(self.device()));
}
} // namespace detail

// LibTorch's forms with options (zeros(size, options), arange(start, end,
// step, options), ...) are declared with torch's options
// (factories/factories.ops.toml, ditto/ops/declared.h).

// LibTorch's torch::tensor of braced values: floating values give the
// default dtype (float32), integers int64, bools bool. (tensor<T>(...) and
// tensor(std::vector<T>) keep T's dtype: tensor<double>({1, 2}) is
// float64.)
DITTO_API Tensor tensor(std::initializer_list<double> values);
DITTO_API Tensor tensor(std::initializer_list<float> values);
DITTO_API Tensor tensor(std::initializer_list<int> values);
DITTO_API Tensor tensor(std::initializer_list<int64_t> values);
DITTO_API Tensor tensor(std::initializer_list<bool> values);
// Rows of braced values: tensor({{1.0, 2.0}, {3.0, 4.0}}) is (2, 2),
// float32 for floating values, int64 for integers. (A template, not two
// overloads: clang finds nested braced lists ambiguous between those.)
template <typename T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows) {
  static_assert(std::is_arithmetic_v<T>, "tensor: rows of numbers");
  using To = std::conditional_t<std::is_floating_point_v<T>, float, int64_t>;
  const size_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
  std::vector<To> v;
  for (const auto& row : rows) {
    DITTO_CHECK(
        row.size() == cols,
        ValueError,
        "tensor",
        "expected sequence of length ",
        cols,
        " at dim 1 (got ",
        row.size(),
        ")");
    v.insert(v.end(), row.begin(), row.end());
  }
  return detail::tensor_from_bytes(
      v.data(),
      int64_t(v.size()),
      dtype_of<To>,
      {int64_t(rows.size()), int64_t(cols)},
      true);
}
// One value: a zero-dimensional tensor (float32, int64 or bool).
DITTO_API Tensor tensor(double value);
DITTO_API Tensor tensor(int64_t value);
DITTO_API Tensor tensor(int value);
DITTO_API Tensor tensor(bool value);
// With options: tensor({1.0, 2.0}, dtype(kFloat64).requires_grad(true)).
inline Tensor tensor(
    std::initializer_list<double> values,
    const TensorOptions& o) {
  Tensor t = tensor(values);
  return detail::on_device(o.has_dtype() ? t.to(o.dtype()) : t, o);
}
inline Tensor tensor(
    std::initializer_list<int64_t> values,
    const TensorOptions& o) {
  Tensor t = tensor(values);
  return detail::on_device(o.has_dtype() ? t.to(o.dtype()) : t, o);
}
inline Tensor tensor(
    std::initializer_list<int> values,
    const TensorOptions& o) {
  Tensor t = tensor(values);
  return detail::on_device(o.has_dtype() ? t.to(o.dtype()) : t, o);
}

} // namespace ditto
