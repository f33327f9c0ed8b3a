#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "ditto/core/api.h"
#include "ditto/core/error.h"

namespace ditto {

// The 16-bit floating types, as c10::Half (IEEE binary16) and
// c10::BFloat16 (float32's top half): storage only. Ops compute on them in
// float32 and round each result once (Note [Storage dtypes]); half.h
// converts.
struct Half {
  uint16_t x;
};
struct BFloat16 {
  uint16_t x;
};

// The one list of dtypes with kernels of their own: C++ type, name, frozen
// code. The codes are PyTorch's ScalarType values; they reach fingerprints
// and files, so they never change.
#define DITTO_FORALL_DTYPES(_) \
  _(uint8_t, UInt8, 0)         \
  _(int32_t, Int32, 3)         \
  _(int64_t, Int64, 4)         \
  _(float, Float32, 6)         \
  _(double, Float64, 7)        \
  _(bool, Bool, 11)

// Note [Storage dtypes]: int8, int16, float16 and bfloat16 are stored,
// converted, viewed, copied and saved like the others, but have no kernels:
// an op computes on them in their compute dtype (int64 or float32, see
// compute_dtype) and rounds its result back once. That is PyTorch's CPU
// arithmetic for float16 and bfloat16 (c10::Half's operators go through
// float), and gives wrapping int8/int16 arithmetic the same bits; an op
// without the conversion raises TypeError naming the op and the dtype.
#define DITTO_FORALL_STORAGE_DTYPES(_) \
  _(int8_t, Int8, 1)                   \
  _(int16_t, Int16, 2)                 \
  _(Half, Float16, 5)                  \
  _(BFloat16, BFloat16, 15)

#define DITTO_FORALL_ALL_DTYPES(_) \
  DITTO_FORALL_DTYPES(_)           \
  DITTO_FORALL_STORAGE_DTYPES(_)

enum class Dtype : uint8_t {
#define DITTO_DTYPE_ENUM(type, name, code) name = code,
  DITTO_FORALL_ALL_DTYPES(DITTO_DTYPE_ENUM)
#undef DITTO_DTYPE_ENUM
};

inline constexpr Dtype kUInt8 = Dtype::UInt8;
inline constexpr Dtype kInt8 = Dtype::Int8;
inline constexpr Dtype kInt16 = Dtype::Int16;
inline constexpr Dtype kInt32 = Dtype::Int32;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kFloat16 = Dtype::Float16;
inline constexpr Dtype kBFloat16 = Dtype::BFloat16;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kBool = Dtype::Bool;
// LibTorch's short names.
inline constexpr Dtype kByte = kUInt8;
inline constexpr Dtype kChar = kInt8;
inline constexpr Dtype kShort = kInt16;
inline constexpr Dtype kInt = kInt32;
inline constexpr Dtype kLong = kInt64;
inline constexpr Dtype kHalf = kFloat16;
inline constexpr Dtype kFloat = kFloat32;
inline constexpr Dtype kDouble = kFloat64;

// Dtypes with kernels (the tables' width) and all dtypes.
inline constexpr int kNumDtypes = 6;
inline constexpr int kNumAllDtypes = 10;

// Dense index, for tables indexed by dtype: 0..kNumDtypes-1 for the dtypes
// with kernels, then the storage dtypes up to kNumAllDtypes-1.
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
    case Dtype::Int8:
      return 6;
    case Dtype::Int16:
      return 7;
    case Dtype::Float16:
      return 8;
    case Dtype::BFloat16:
      return 9;
  }
  return -1;
}

// True for the dtypes with kernels of their own.
constexpr bool has_kernels(Dtype d) {
  return dtype_index(d) >= 0 && dtype_index(d) < kNumDtypes;
}

// The dtype ops compute a storage dtype in: float32 for float16 and
// bfloat16, int64 for int8 and int16; d itself otherwise.
constexpr Dtype compute_dtype(Dtype d) {
  switch (d) {
    case Dtype::Float16:
    case Dtype::BFloat16:
      return Dtype::Float32;
    case Dtype::Int8:
    case Dtype::Int16:
      return Dtype::Int64;
    default:
      return d;
  }
}

template <typename T>
struct DtypeOf;
#define DITTO_DTYPE_OF(type, name, code)        \
  template <>                                   \
  struct DtypeOf<type> {                        \
    static constexpr Dtype value = Dtype::name; \
  };
DITTO_FORALL_ALL_DTYPES(DITTO_DTYPE_OF)
#undef DITTO_DTYPE_OF

template <typename T>
inline constexpr Dtype dtype_of = DtypeOf<T>::value;

constexpr size_t element_size(Dtype d) {
  switch (d) {
#define DITTO_DTYPE_SIZE(type, name, code) \
  case Dtype::name:                        \
    return sizeof(type);
    DITTO_FORALL_ALL_DTYPES(DITTO_DTYPE_SIZE)
#undef DITTO_DTYPE_SIZE
  }
  return 0;
}

constexpr bool is_floating(Dtype d) {
  return d == Dtype::Float32 || d == Dtype::Float64 || d == Dtype::Float16 ||
      d == Dtype::BFloat16;
}

// Integral types, bool excluded.
constexpr bool is_integral(Dtype d) {
  return d == Dtype::UInt8 || d == Dtype::Int8 || d == Dtype::Int16 ||
      d == Dtype::Int32 || d == Dtype::Int64;
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

// TypeError: op has no kernel for d (a storage dtype it does not convert).
[[noreturn]] DITTO_API void throw_no_kernel(const char* op, Dtype d);

// Calls f.template operator()<T>() with T the C++ type of d, e.g.
//   dispatch_dtype(t.dtype(), "sum", [&]<typename T>() { ... });
// for the dtypes with kernels; TypeError naming op for the others.
template <typename F>
decltype(auto) dispatch_dtype(Dtype d, const char* op, F&& f) {
  switch (d) {
#define DITTO_DTYPE_CASE(type, name, code) \
  case Dtype::name:                        \
    return f.template operator()<type>();
    DITTO_FORALL_DTYPES(DITTO_DTYPE_CASE)
#undef DITTO_DTYPE_CASE
    default:
      break;
  }
  throw_no_kernel(op, d);
}

// As dispatch_dtype over every dtype, for code that only moves elements.
template <typename F>
decltype(auto) dispatch_any_dtype(Dtype d, const char* op, F&& f) {
  switch (d) {
#define DITTO_DTYPE_CASE(type, name, code) \
  case Dtype::name:                        \
    return f.template operator()<type>();
    DITTO_FORALL_ALL_DTYPES(DITTO_DTYPE_CASE)
#undef DITTO_DTYPE_CASE
  }
  detail::throw_error<TypeError>(op, "unknown dtype code ", int(d));
}

} // namespace ditto
