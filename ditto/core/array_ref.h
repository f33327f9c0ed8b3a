#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <vector>

#include "ditto/core/error.h"

namespace ditto {

// LibTorch's vocabulary types, for programs that name them
// (torch::ArrayRef<size_t> in a dataset's get_batch, torch::optional<size_t>
// in its size()).
using std::nullopt;
using std::optional;

// A view of contiguous elements it does not own (LibTorch's ArrayRef): from
// one value, a pointer and a length, a vector, an array or a braced list.
// It must not outlive what it views (a braced list lives to the end of the
// full expression).
template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = size_t;

  constexpr ArrayRef() = default;
  /* implicit */ constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  template <typename A>
  /* implicit */ ArrayRef(const std::vector<T, A>& v)
      : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  /* implicit */ constexpr ArrayRef(const std::array<T, N>& a)
      : data_(a.data()), size_(N) {}
  // The list lives to the end of the full expression that holds it, as
  // long as the call that takes the ArrayRef (what GCC warns about below).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  /* implicit */ constexpr ArrayRef(const std::initializer_list<T>& list)
      : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  constexpr const T* data() const {
    return data_;
  }
  constexpr size_t size() const {
    return size_;
  }
  constexpr bool empty() const {
    return size_ == 0;
  }
  constexpr const T* begin() const {
    return data_;
  }
  constexpr const T* end() const {
    return data_ + size_;
  }
  constexpr const T& operator[](size_t i) const {
    return data_[i];
  }
  // IndexError past the end.
  const T& at(size_t i) const {
    DITTO_CHECK(
        i < size_, IndexError, "ArrayRef::at", "index ", i, " of ", size_);
    return data_[i];
  }
  const T& front() const {
    return at(0);
  }
  const T& back() const {
    return at(size_ - 1);
  }
  std::vector<T> vec() const {
    return std::vector<T>(begin(), end());
  }
  // The n elements from start (LibTorch's slice; IndexError past the end).
  ArrayRef slice(size_t start, size_t n) const {
    DITTO_CHECK(
        start <= size_ && n <= size_ - start,
        IndexError,
        "ArrayRef::slice",
        "elements ",
        start,
        " to ",
        start + n,
        " of ",
        size_);
    return ArrayRef(data_ + start, n);
  }
  ArrayRef slice(size_t start) const {
    return slice(start, start <= size_ ? size_ - start : 0);
  }
  friend bool operator==(ArrayRef a, ArrayRef b) {
    return a.equals(b);
  }
  // As LibTorch prints sizes: "[2, 3]".
  friend std::ostream& operator<<(std::ostream& os, ArrayRef a) {
    os << '[';
    for (size_t i = 0; i < a.size_; ++i) {
      os << (i == 0 ? "" : ", ") << a.data_[i];
    }
    return os << ']';
  }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) {
      return false;
    }
    for (size_t i = 0; i < size_; ++i) {
      if (!(data_[i] == other.data_[i])) {
        return false;
      }
    }
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// LibTorch's name for a tensor's sizes and strides as a view (Tensor::sizes()
// returns a std::vector<int64_t>, which converts).
using IntArrayRef = ArrayRef<int64_t>;

} // namespace ditto
