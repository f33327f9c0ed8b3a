#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "ditto/core/api.h"
#include "ditto/core/error.h"

namespace ditto {

// The one list of dtypes: C++ type, name, frozen code. The codes are
// PyTorch's ScalarType values; they reach fingerprints and files, so they
// never change.
#define DITTO_FORALL_DTYPES(_) \
  _(uint8_t, UInt8, 0)         \
  _(int32_t, Int32, 3)         \
  _(int64_t, Int64, 4)         \
  _(float, Float32, 6)         \
  _(double, Float64, 7)        \
  _(bool, Bool, 11)

enum class Dtype : uint8_t {
#define DITTO_DTYPE_ENUM(type, name, code) name = code,
  DITTO_FORALL_DTYPES(DITTO_DTYPE_ENUM)
#undef DITTO_DTYPE_ENUM
};

inline constexpr Dtype kUInt8 = Dtype::UInt8;
inline constexpr Dtype kInt32 = Dtype::Int32;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kBool = Dtype::Bool;
// LibTorch's short names.
inline constexpr Dtype kByte = kUInt8;
inline constexpr Dtype kInt = kInt32;
inline constexpr Dtype kLong = kInt64;
inline constexpr Dtype kFloat = kFloat32;
inline constexpr Dtype kDouble = kFloat64;

inline constexpr int kNumDtypes = 6;

// Dense index 0..kNumDtypes-1, for tables indexed by dtype.
constexpr int dtype_index(Dtype d) {
  switch (d) {
    case Dtype::UInt8:
      return 0;
    case Dtype::Int32:
      return 1;
    case Dtype::Int64:
      return 2;
    case Dtype::Float32:
      return 3;
    case Dtype::Float64:
      return 4;
    case Dtype::Bool:
      return 5;
  }
  return -1;
}

template <typename T>
struct DtypeOf;
#define DITTO_DTYPE_OF(type, name, code)        \
  template <>                                   \
  struct DtypeOf<type> {                        \
    static constexpr Dtype value = Dtype::name; \
  };
DITTO_FORALL_DTYPES(DITTO_DTYPE_OF)
#undef DITTO_DTYPE_OF

template <typename T>
inline constexpr Dtype dtype_of = DtypeOf<T>::value;

constexpr size_t element_size(Dtype d) {
  switch (d) {
#define DITTO_DTYPE_SIZE(type, name, code) \
  case Dtype::name:                        \
    return sizeof(type);
    DITTO_FORALL_DTYPES(DITTO_DTYPE_SIZE)
#undef DITTO_DTYPE_SIZE
  }
  return 0;
}

constexpr bool is_floating(Dtype d) {
  return d == Dtype::Float32 || d == Dtype::Float64;
}

// Integral types, bool excluded.
constexpr bool is_integral(Dtype d) {
  return d == Dtype::UInt8 || d == Dtype::Int32 || d == Dtype::Int64;
}

// TypeError naming op unless d is one of the dtypes above (a Dtype cast
// from an arbitrary integer is not).
DITTO_API void check_dtype(Dtype d, const char* op);

// Bytes of count elements of d; ValueError naming op if that overflows.
DITTO_API size_t checked_nbytes(int64_t count, Dtype d, const char* op);

// "float32", "int64", ... as PyTorch spells them after "torch.".
DITTO_API std::string_view dtype_name(Dtype d);
DITTO_API std::ostream& operator<<(std::ostream& os, Dtype d);

// The dtype both operands are converted to, as torch.promote_types.
DITTO_API Dtype promote_types(Dtype a, Dtype b);

// Calls f.template operator()<T>() with T the C++ type of d, e.g.
//   dispatch_dtype(t.dtype(), "sum", [&]<typename T>() { ... });
template <typename F>
decltype(auto) dispatch_dtype(Dtype d, const char* op, F&& f) {
  switch (d) {
#define DITTO_DTYPE_CASE(type, name, code) \
  case Dtype::name:                        \
    return f.template operator()<type>();
    DITTO_FORALL_DTYPES(DITTO_DTYPE_CASE)
#undef DITTO_DTYPE_CASE
  }
  detail::throw_error<TypeError>(op, "unknown dtype code ", int(d));
}

} // namespace ditto
