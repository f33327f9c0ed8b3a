// The index entries of LibTorch's x.index({...}) (ditto/core/indexing.h):
// their checks and their printing. What an index list does to a tensor is
// ops/index/indexing.cpp.

#include "ditto/core/indexing.h"

#include <cstring>
#include <ostream>

#include "ditto/core/error.h"

namespace ditto::indexing {

TensorIndex::TensorIndex(const char* str) : type_(TensorIndexType::Ellipsis) {
  DITTO_CHECK(
      str != nullptr && std::strcmp(str, "...") == 0,
      ValueError,
      "TensorIndex",
      "expected \"...\" to represent an ellipsis index, got \"",
      str ? str : "(null)",
      "\"");
}

TensorIndex::TensorIndex(Tensor tensor)
    : type_(TensorIndexType::Tensor), tensor_(std::move(tensor)) {}

std::ostream& operator<<(std::ostream& os, const Slice& s) {
  auto part = [&os](const std::optional<int64_t>& v) {
    if (v) {
      os << *v;
    } else {
      os << "None";
    }
  };
  part(s.start());
  os << ":";
  part(s.stop());
  os << ":";
  part(s.step());
  return os;
}

std::ostream& operator<<(std::ostream& os, const TensorIndex& i) {
  switch (i.type()) {
    case TensorIndexType::None:
      return os << "None";
    case TensorIndexType::Ellipsis:
      return os << "...";
    case TensorIndexType::Integer:
      return os << i.integer();
    case TensorIndexType::Boolean:
      return os << (i.boolean() ? "true" : "false");
    case TensorIndexType::Slice:
      return os << i.slice();
    case TensorIndexType::Tensor:
      return os << "Tensor";
  }
  return os;
}

} // namespace ditto::indexing
