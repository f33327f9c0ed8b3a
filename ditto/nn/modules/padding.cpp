#include "ditto/nn/modules/padding.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

template <int D>
PadNd<D>::PadNd(const char* kind, const char* mode, IntList p, double v)
    : Module(kind + std::to_string(D) + "d"), value(v), mode_(mode) {
  static const char* const kSides[] = {
      "",
      "(left, right)",
      "(left, right, top, bottom)",
      "(left, right, top, bottom, front, back)"};
  DITTO_CHECK(
      p.size() == 1 || p.size() == size_t(2 * D),
      ValueError,
      type_name().c_str(),
      "padding must be one int or ",
      2 * D,
      " ints ",
      kSides[D],
      ", got ",
      p.size(),
      " values");
  padding = p.size() == 1 ? IntList(size_t(2 * D), p[0]) : p;
}

template <int D>
Tensor PadNd<D>::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::pad(x, padding, mode_, value);
}

template <int D>
std::string PadNd<D>::extra_repr() const {
  // PyTorch prints the constant pads' value (ZeroPad2d is a constant pad
  // that does not).
  if (type_name().rfind("ConstantPad", 0) == 0) {
    return "padding=" + py_tuple(padding, padding.size()) +
        ", value=" + py_float(value);
  }
  return py_tuple(padding, padding.size());
}

template class PadNd<1>;
template class PadNd<2>;
template class PadNd<3>;

} // namespace ditto::nn
