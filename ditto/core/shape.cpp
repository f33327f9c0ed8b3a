#include "ditto/core/shape.h"

#include <sstream>

#include "ditto/core/error.h"

namespace ditto {

std::string shape_str(const IntList& s) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < s.size(); ++i) {
    os << (i ? ", " : "") << s[i];
  }
  os << "}";
  return os.str();
}

int64_t checked_mul(int64_t a, int64_t b, const char* op, const char* what) {
  int64_t r = 0;
  DITTO_CHECK(
      !__builtin_mul_overflow(a, b, &r),
      ValueError,
      op,
      what,
      " overflows int64 (",
      a,
      " * ",
      b,
      ")");
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* op, const char* what) {
  int64_t r = 0;
  DITTO_CHECK(
      !__builtin_add_overflow(a, b, &r),
      ValueError,
      op,
      what,
      " overflows int64 (",
      a,
      " + ",
      b,
      ")");
  return r;
}

int64_t checked_numel(const Shape& sizes, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    DITTO_CHECK(
        s >= 0,
        ValueError,
        op,
        "negative dimension ",
        s,
        " in shape ",
        shape_str(sizes));
    DITTO_CHECK(
        !__builtin_mul_overflow(n, s, &n),
        ValueError,
        op,
        "shape ",
        shape_str(sizes),
        " has too many elements");
  }
  return n;
}

int64_t strided_extent(
    const Shape& sizes,
    const Shape& strides,
    const char* op) {
  DITTO_CHECK(
      sizes.size() == strides.size(),
      ValueError,
      op,
      "sizes ",
      shape_str(sizes),
      " and strides ",
      shape_str(strides),
      " differ in length");
  for (int64_t st : strides) {
    DITTO_CHECK(st >= 0, ValueError, op, "negative stride ", st);
  }
  if (checked_numel(sizes, op) == 0) {
    return 0;
  }
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span = 0;
    DITTO_CHECK(
        !__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) &&
            !__builtin_add_overflow(extent, span, &extent),
        ValueError,
        op,
        "sizes ",
        shape_str(sizes),
        " and strides ",
        shape_str(strides),
        " reach too far");
  }
  return extent;
}

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    // An empty tensor's dims still need strides: {0, 2^40, 2^40} has none
    // that fit in int64.
    DITTO_CHECK(
        i == 0 || !__builtin_mul_overflow(s, sizes[i] > 0 ? sizes[i] : 1, &s),
        ValueError,
        "empty",
        "shape ",
        shape_str(sizes),
        " has strides that overflow int64");
  }
  return strides;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim > 0 ? ndim : 1; // a 0-d tensor accepts dim 0 and -1
  DITTO_CHECK(
      dim >= -n && dim < n,
      IndexError,
      op,
      "dimension out of range (expected to be in range of [",
      -n,
      ", ",
      n - 1,
      "], but got ",
      dim,
      ")");
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    DITTO_CHECK(
        da == db || da == 1 || db == 1,
        ValueError,
        op,
        "shapes ",
        shape_str(a),
        " and ",
        shape_str(b),
        " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool expands_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) {
    return false;
  }
  const size_t lead = to.size() - from.size();
  for (size_t k = 0; k < from.size(); ++k) {
    if (from[k] != 1 && from[k] != to[lead + k]) {
      return false;
    }
  }
  return true;
}

} // namespace ditto
