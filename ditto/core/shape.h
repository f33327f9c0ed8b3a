#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ditto/core/api.h"

namespace ditto {

// Sizes, strides and other integer lists are written with braces: {2, 3}.
using Shape = std::vector<int64_t>;
using IntList = std::vector<int64_t>;

// An integer list argument that also takes one int for every dim, as
// LibTorch's IntArrayRef and ExpandingArray arguments do:
// max_pool2d(x, 2), Conv2dOptions(1, 10, /*kernel_size=*/5), stride({2, 1}).
// It is an IntList (functions read it as one).
class IntArg : public IntList {
 public:
  IntArg() = default;
  IntArg(int64_t value) : IntList{value} {}
  IntArg(std::initializer_list<int64_t> values) : IntList(values) {}
  IntArg(const IntList& values) : IntList(values) {}
  IntArg(IntList&& values) : IntList(std::move(values)) {}
};

// An optional integer list (torch's `int[1]? dim`, LibTorch's
// OptionalIntArrayRef): std::nullopt (every dim), one int, or a list.
// sum(x), sum(x, 1), sum(x, {0, 2}) and sum(x, std::nullopt) all read.
class OptionalIntArg {
 public:
  OptionalIntArg() = default;
  OptionalIntArg(std::nullopt_t) {}
  OptionalIntArg(int64_t value) : value_(IntList{value}) {}
  OptionalIntArg(std::initializer_list<int64_t> values)
      : value_(IntList(values)) {}
  OptionalIntArg(const IntList& values) : value_(values) {}
  OptionalIntArg(const std::optional<IntList>& values) : value_(values) {}
  bool has_value() const {
    return value_.has_value();
  }
  explicit operator bool() const {
    return value_.has_value();
  }
  const IntList& operator*() const {
    return *value_;
  }
  const IntList* operator->() const {
    return &*value_;
  }
  // The list, or `otherwise` when there is none.
  IntList value_or(IntList otherwise) const {
    return value_ ? *value_ : std::move(otherwise);
  }

 private:
  std::optional<IntList> value_;
};

// "{2, 3}", as error messages print shapes.
DITTO_API std::string shape_str(const IntList& s);

// a * b and a + b for shape arithmetic (sizes, strides, padding, dilation):
// ValueError naming op and what was being computed on int64 overflow. The
// one checked-arithmetic helper every shape computation uses.
DITTO_API int64_t
checked_mul(int64_t a, int64_t b, const char* op, const char* what);
DITTO_API int64_t
checked_add(int64_t a, int64_t b, const char* op, const char* what);

// Product of sizes; throws ValueError naming op on a negative size or on
// overflow.
DITTO_API int64_t checked_numel(const Shape& sizes, const char* op);

// Elements a storage needs so that sizes/strides (from offset 0) stay in
// bounds: 0 for an empty tensor. ValueError naming op on mismatched lengths,
// negative sizes or strides, or overflow.
DITTO_API int64_t
strided_extent(const Shape& sizes, const Shape& strides, const char* op);

// Row-major strides of a contiguous tensor of these sizes.
DITTO_API Shape contiguous_strides(const Shape& sizes);

// Wraps a possibly negative dim into [0, ndim); IndexError otherwise.
DITTO_API int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// The broadcast shape of a and b; ValueError naming op if incompatible.
DITTO_API Shape
broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// True when a tensor of shape `from` broadcasts to shape `to` (to
// unchanged).
DITTO_API bool expands_to(const Shape& from, const Shape& to);

} // namespace ditto
