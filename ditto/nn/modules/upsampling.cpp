#include "ditto/nn/modules/upsampling.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"

namespace ditto::nn {

std::string UpsampleImpl::extra_repr() const {
  const auto& o = options;
  std::string s;
  if (!o.size().empty()) {
    s = "size=" + py_int_or_tuple(o.size());
  } else {
    const auto& f = o.scale_factor();
    s = "scale_factor=";
    if (f.size() == 1) {
      s += py_float(f[0]);
    } else {
      // Appended piece by piece: GCC 12 sees a false overlap (-Wrestrict)
      // in "(" + std::string once this function stands alone.
      s += "(";
      s += py_float(f[0]);
      s += ", ";
      s += py_float(f[1]);
      s += ")";
    }
  }
  return s + ", mode=" + functional::interpolate_mode_name(o.mode());
}

} // namespace ditto::nn
