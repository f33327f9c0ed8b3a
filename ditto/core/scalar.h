#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "ditto/core/api.h"
#include "ditto/core/dtype.h"

namespace ditto {

// A number without a tensor: what full, fill_ and `t + 2` take. It remembers
// whether it is a bool, an integer or a floating value, which decides type
// promotion as for a Python scalar in PyTorch.
class DITTO_API Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) { // NOLINT: implicit on purpose, as at::Scalar
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      i_ = v ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::Int;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::Float;
      d_ = static_cast<double>(v);
    }
  }

  Kind kind() const {
    return kind_;
  }
  bool is_floating() const {
    return kind_ == Kind::Float;
  }
  bool is_integral() const {
    return kind_ == Kind::Int;
  }
  bool is_bool() const {
    return kind_ == Kind::Bool;
  }

  // The value converted to T with C++ conversion rules (floating to integer
  // truncates; callers check range where it matters).
  template <typename T>
  T to() const {
    if (kind_ == Kind::Float) {
      if constexpr (std::is_same_v<T, bool>) {
        return d_ != 0.0;
      } else if constexpr (std::is_integral_v<T>) {
        // NaN and values outside int64 give the int64 minimum, as the
        // kernels' conversions do; then two's complement truncation.
        bool ok = d_ >= -9223372036854775808.0 && d_ < 9223372036854775808.0;
        int64_t i = ok ? static_cast<int64_t>(d_) : INT64_MIN;
        if constexpr (std::is_same_v<T, int32_t>) {
          return i >= INT32_MIN && i <= INT32_MAX ? int32_t(i) : INT32_MIN;
        } else {
          return static_cast<T>(static_cast<uint64_t>(i));
        }
      } else {
        return static_cast<T>(d_);
      }
    }
    if constexpr (std::is_same_v<T, bool>) {
      return i_ != 0;
    } else {
      return static_cast<T>(i_);
    }
  }

  // The value as T, or ValueError naming op if T cannot hold it (out of
  // range, or NaN/inf into an integer), as PyTorch checks fill values.
  template <typename T>
  T to_checked(const char* op) const {
    if constexpr (!std::is_same_v<T, bool>) {
      bool ok = true;
      if constexpr (std::is_floating_point_v<T>) {
        ok = kind_ != Kind::Float || d_ != d_ ||
            (d_ >= -double(std::numeric_limits<T>::max()) &&
             d_ <= double(std::numeric_limits<T>::max())) ||
            d_ == d_ * 2; // +-inf
      } else if (kind_ == Kind::Float) {
        ok = d_ >= double(std::numeric_limits<T>::min()) &&
            d_ < double(std::numeric_limits<T>::max()) + 1.0;
      } else {
        ok = i_ >= int64_t(std::numeric_limits<T>::min()) &&
            (std::is_same_v<T, int64_t> ||
             i_ <= int64_t(std::numeric_limits<T>::max()));
      }
      if (!ok) {
        throw_overflow(op, dtype_of<T>);
      }
    }
    return to<T>();
  }

  // The dtype a tensor made from this scalar alone would get.
  Dtype dtype() const {
    return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kInt64 : kFloat64;
  }

 private:
  [[noreturn]] void throw_overflow(const char* op, Dtype d) const;

  Kind kind_;
  int64_t i_ = 0;
  double d_ = 0.0;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const Scalar& s);

} // namespace ditto
