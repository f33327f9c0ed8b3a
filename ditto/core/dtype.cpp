#include "ditto/core/dtype.h"

#include <cstddef>

#include "ditto/core/device.h"
#include "ditto/core/storage.h"

namespace ditto {

std::string_view dtype_name(Dtype d) {
  switch (d) {
    case Dtype::UInt8:
      return "uint8";
    case Dtype::Int32:
      return "int32";
    case Dtype::Int64:
      return "int64";
    case Dtype::Float32:
      return "float32";
    case Dtype::Float64:
      return "float64";
    case Dtype::Bool:
      return "bool";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, Dtype d) {
  return os << dtype_name(d);
}

namespace {
// bool < uint8 < int32 < int64 < float32 < float64, except that the mix of
// uint8 with a signed type takes the signed one (we have no int16).
int rank(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return 0;
    case Dtype::UInt8:
      return 1;
    case Dtype::Int32:
      return 2;
    case Dtype::Int64:
      return 3;
    case Dtype::Float32:
      return 4;
    case Dtype::Float64:
      return 5;
  }
  return 0;
}
} // namespace

void check_dtype(Dtype d, const char* op) {
  DITTO_CHECK(
      dtype_index(d) >= 0, TypeError, op, "invalid dtype code ", int(d));
}

size_t checked_nbytes(int64_t count, Dtype d, const char* op) {
  check_dtype(d, op);
  int64_t bytes = 0;
  // Keep sizes below PTRDIFF_MAX so pointer arithmetic never overflows.
  DITTO_CHECK(
      count >= 0 &&
          !__builtin_mul_overflow(count, int64_t(element_size(d)), &bytes) &&
          bytes <= PTRDIFF_MAX - int64_t(kStorageAlignment),
      ValueError,
      op,
      count,
      " elements of ",
      d,
      " do not fit in memory");
  return size_t(bytes);
}

Dtype promote_types(Dtype a, Dtype b) {
  return rank(a) >= rank(b) ? a : b;
}

} // namespace ditto
