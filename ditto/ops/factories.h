#pragma once

#include <functional>
#include <initializer_list>
#include <vector>

#include "ditto/core/tensor.h"

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

} // namespace ditto
