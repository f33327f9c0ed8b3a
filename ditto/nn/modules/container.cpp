#include "ditto/nn/modules/container.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"

namespace ditto::nn {

Tensor Sequential::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  Tensor y = x;
  for (const auto& step : steps_) {
    y = step(y);
  }
  return y;
}

Module& Sequential::operator[](size_t i) const {
  DITTO_CHECK(
      i < steps_.size(),
      IndexError,
      "Sequential",
      "index ",
      i,
      " is out of range for ",
      steps_.size(),
      " modules");
  return *children()[i];
}

Module& ModuleList::operator[](size_t i) const {
  DITTO_CHECK(
      i < items_.size(),
      IndexError,
      "ModuleList",
      "index ",
      i,
      " is out of range for ",
      items_.size(),
      " modules");
  return *items_[i];
}

Module& ModuleDict::operator[](const std::string& name) const {
  for (const auto& [k, m] : items_) {
    if (k == name) {
      return *m;
    }
  }
  detail::throw_error<KeyError>("ModuleDict", "no module named \"", name, "\"");
}

bool ModuleDict::contains(const std::string& name) const {
  for (const auto& item : items_) {
    if (item.first == name) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) {
    out.push_back(item.first);
  }
  return out;
}

} // namespace ditto::nn
