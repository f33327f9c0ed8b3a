// The argument checks shared by the NN ops (nn_util.h).

#include "ditto/nn/detail/nn_util.h"

#include "ditto/core/error.h"

namespace ditto::detail {

void check_floating(const Tensor& x, const char* op) {
  DITTO_CHECK(x.defined(), ValueError, op, "undefined tensor");
  DITTO_CHECK(
      is_floating(x.dtype()),
      TypeError,
      op,
      "expected a floating tensor, got ",
      x.dtype());
}

void check_pool_input(const Tensor& x, const char* op) {
  check_floating(x, op);
  DITTO_CHECK(
      (x.dim() == 3 || x.dim() == 4) && x.numel() > 0,
      ValueError,
      op,
      "expected a non-empty 3D or 4D (batch mode) tensor, got sizes ",
      shape_str(x.sizes()));
}

std::vector<int64_t> int_values(
    const Tensor& t,
    const char* op,
    const char* what) {
  DITTO_CHECK(t.defined(), ValueError, op, "undefined ", what);
  DITTO_CHECK(
      t.dim() <= 1 && (t.dtype() == kInt64 || t.dtype() == kInt32),
      ValueError,
      op,
      what,
      " must be a 1-D integer tensor, got ",
      dtype_name(t.dtype()),
      " of sizes ",
      shape_str(t.sizes()));
  const Tensor c = t.to(kInt64).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

void check_normalized_shape(
    const Tensor& x,
    const IntList& normalized_shape,
    const char* op) {
  const auto k = int64_t(normalized_shape.size());
  const bool fits = k >= 1 && x.dim() >= k &&
      IntList(x.sizes().end() - k, x.sizes().end()) == normalized_shape;
  DITTO_CHECK(
      fits,
      ValueError,
      op,
      "Given normalized_shape=",
      shape_str(normalized_shape),
      ", expected input with shape [*, ",
      shape_str(normalized_shape),
      "], but got input of size",
      shape_str(x.sizes()));
}

} // namespace ditto::detail
