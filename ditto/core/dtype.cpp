#include "ditto/core/dtype.h"

#include "ditto/core/device.h"

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

std::ostream& operator<<(std::ostream& os, const Device& d) {
  os << "cpu";
  if (d.index >= 0) {
    os << ":" << d.index;
  }
  return os;
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

Dtype promote_types(Dtype a, Dtype b) {
  return rank(a) >= rank(b) ? a : b;
}

} // namespace ditto
