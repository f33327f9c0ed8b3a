#include "ditto/nn/modules/padding.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

ZeroPad2d::ZeroPad2d(const char* name, const char* mode, IntList p)
    : Module(name), mode_(mode) {
  DITTO_CHECK(
      p.size() == 1 || p.size() == 4,
      ValueError,
      name,
      "padding must be one int or four ints (left, right, top, bottom), got ",
      p.size(),
      " values");
  padding = p.size() == 4 ? p : IntList{p[0], p[0], p[0], p[0]};
}

Tensor ZeroPad2d::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::pad(x, padding, mode_);
}

std::string ZeroPad2d::extra_repr() const {
  return py_tuple(padding, 4);
}

} // namespace ditto::nn
