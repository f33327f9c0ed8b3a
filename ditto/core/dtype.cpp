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
    case Dtype::Int8:
      return "int8";
    case Dtype::Int16:
      return "int16";
    case Dtype::Float16:
      return "float16";
    case Dtype::BFloat16:
      return "bfloat16";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, Dtype d) {
  return os << dtype_name(d);
}

void throw_no_kernel(const char* op, Dtype d) {
  if (dtype_index(d) < 0) {
    detail::throw_error<TypeError>(op, "unknown dtype code ", int(d));
  }
  detail::throw_error<TypeError>(
      op,
      "not implemented for ",
      d,
      " (convert with .to(",
      compute_dtype(d),
      ") first)");
}

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

// torch.promote_types: the category (bool < integral < floating) decides
// first; within integers the wider wins, uint8 with a signed type takes the
// signed type that holds both (int16 for int8); float16 with bfloat16 is
// float32.
Dtype promote_types(Dtype a, Dtype b) {
  if (a == b) {
    return a;
  }
  auto category = [](Dtype d) {
    return d == Dtype::Bool ? 0 : is_floating(d) ? 2 : 1;
  };
  if (category(a) != category(b)) {
    return category(a) > category(b) ? a : b;
  }
  if (category(a) == 2) {
    auto rank = [](Dtype d) {
      return d == Dtype::Float64 ? 3 : d == Dtype::Float32 ? 2 : 1;
    };
    if (rank(a) == 1 && rank(b) == 1) {
      return Dtype::Float32; // float16 with bfloat16
    }
    return rank(a) >= rank(b) ? a : b;
  }
  auto bytes = [](Dtype d) { return element_size(d); };
  if (a == Dtype::UInt8 || b == Dtype::UInt8) {
    Dtype other = a == Dtype::UInt8 ? b : a;
    return other == Dtype::Int8 ? Dtype::Int16 : other;
  }
  return bytes(a) >= bytes(b) ? a : b;
}

} // namespace ditto
