#pragma once

// LibTorch's tensor indexing (torch::indexing): x.index({0, Slice(1, None),
// "...", None, idx}) reads what Python's x[0, 1:, ..., None, idx] reads, and
// x.index_put_({...}, value) writes it. Integers select, slices slice
// (clamped to the dim, step > 0), None inserts a dim, one Ellipsis ("...")
// stands for the dims not named, booleans add a dim of one or none, and
// tensors are advanced indices (int64/int32 positions, or bool/uint8 masks
// covering as many dims as they have) passed to ditto::index /
// index_put_. The Python binding's t[...] is the same code.

#include <cstdint>
#include <optional>
#include <ostream>
#include <type_traits>

#include "ditto/core/api.h"
#include "ditto/core/array_ref.h"
#include "ditto/core/tensor.h"

namespace ditto::indexing {

struct EllipsisIndexType final {};
inline constexpr EllipsisIndexType Ellipsis{};
// None is nullopt, as LibTorch's: Slice(1, None), x.index({None}).
inline constexpr std::nullopt_t None = std::nullopt;

// start:stop:step, each optional (Python's defaults: 0, the dim's size, 1).
class DITTO_API Slice {
 public:
  Slice(
      std::optional<int64_t> start = std::nullopt,
      std::optional<int64_t> stop = std::nullopt,
      std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step) {}
  std::optional<int64_t> start() const {
    return start_;
  }
  std::optional<int64_t> stop() const {
    return stop_;
  }
  std::optional<int64_t> step() const {
    return step_;
  }

 private:
  std::optional<int64_t> start_, stop_, step_;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const Slice& s);

enum class TensorIndexType { None, Ellipsis, Integer, Boolean, Slice, Tensor };

// One entry of an index list.
class DITTO_API TensorIndex {
 public:
  /* implicit */ TensorIndex(std::nullopt_t) : type_(TensorIndexType::None) {}
  /* implicit */ TensorIndex(EllipsisIndexType)
      : type_(TensorIndexType::Ellipsis) {}
  // "..." only (ValueError otherwise).
  /* implicit */ TensorIndex(const char* str);
  template <
      typename T,
      std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> =
          0>
  /* implicit */ TensorIndex(T integer)
      : type_(TensorIndexType::Integer), integer_(int64_t(integer)) {}
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  /* implicit */ TensorIndex(T boolean)
      : type_(TensorIndexType::Boolean), boolean_(boolean) {}
  /* implicit */ TensorIndex(Slice slice)
      : type_(TensorIndexType::Slice), slice_(slice) {}
  // An undefined tensor takes the dim whole (as ":"), as in ditto::index.
  /* implicit */ TensorIndex(Tensor tensor);

  TensorIndexType type() const {
    return type_;
  }
  bool is_none() const {
    return type_ == TensorIndexType::None;
  }
  bool is_ellipsis() const {
    return type_ == TensorIndexType::Ellipsis;
  }
  bool is_integer() const {
    return type_ == TensorIndexType::Integer;
  }
  bool is_boolean() const {
    return type_ == TensorIndexType::Boolean;
  }
  bool is_slice() const {
    return type_ == TensorIndexType::Slice;
  }
  bool is_tensor() const {
    return type_ == TensorIndexType::Tensor;
  }
  int64_t integer() const {
    return integer_;
  }
  bool boolean() const {
    return boolean_;
  }
  const Slice& slice() const {
    return slice_;
  }
  const Tensor& tensor() const {
    return tensor_;
  }

 private:
  TensorIndexType type_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const TensorIndex& i);

// self indexed by indices (a view when no tensor or boolean is among them).
DITTO_API Tensor get(const Tensor& self, ArrayRef<TensorIndex> indices);
// self[indices] = values (broadcast), or value.
DITTO_API void set(
    Tensor& self,
    ArrayRef<TensorIndex> indices,
    const Tensor& values);
DITTO_API void set(
    Tensor& self,
    ArrayRef<TensorIndex> indices,
    const Scalar& value);

} // namespace ditto::indexing
