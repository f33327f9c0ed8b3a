#include "ditto/core/state_dict.h"

#include "ditto/core/error.h"

namespace ditto {

StateDict::StateDict(NamedTensors items) {
  for (auto& [name, t] : items) {
    insert(name, t);
  }
}

void StateDict::insert(const std::string& name, const Tensor& t) {
  if (Tensor* old = items_.find(name)) {
    *old = t;
    return;
  }
  items_.insert(name, t);
}

const Tensor* StateDict::find(std::string_view name) const {
  return items_.find(std::string(name));
}

const Tensor& StateDict::at(std::string_view name) const {
  const Tensor* t = find(name);
  DITTO_CHECK(
      t != nullptr,
      KeyError,
      "StateDict",
      "no key \"",
      std::string(name),
      "\"");
  return *t;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  for (const auto& item : items_) {
    out.push_back(item.first);
  }
  return out;
}

} // namespace ditto
