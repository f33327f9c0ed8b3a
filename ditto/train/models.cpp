#include "ditto/train/models.h"

#include <map>
#include <mutex>

#include "ditto/core/error.h"

namespace ditto::train {

namespace {

std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, ModelEntry>& registry() {
  static std::map<std::string, ModelEntry> models;
  return models;
}

} // namespace

void register_model(std::string name, std::string description, ModelFactory f) {
  DITTO_CHECK(!name.empty(), ValueError, "register_model", "empty model name");
  DITTO_CHECK(
      bool(f),
      ValueError,
      "register_model",
      "model '",
      name,
      "' has no factory");
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::string key = name;
  registry()[key] =
      ModelEntry{std::move(name), std::move(description), std::move(f)};
}

std::vector<ModelEntry> registered_models() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<ModelEntry> out;
  for (const auto& [name, e] : registry()) {
    out.push_back(e);
  }
  return out;
}

Model make_model(const std::string& name) {
  ModelFactory f;
  std::string known;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(name);
    if (it != registry().end()) {
      f = it->second.factory;
    }
    for (const auto& [n, e] : registry()) {
      known += known.empty() ? n : ", " + n;
    }
  }
  DITTO_CHECK(
      bool(f),
      ValueError,
      "make_model",
      "unknown model '",
      name,
      "' (known: ",
      known.empty() ? "none" : known,
      ")");
  Model m = f();
  DITTO_CHECK(
      m.module && m.forward,
      ValueError,
      "make_model",
      "the factory of model '",
      name,
      "' returned no module or no forward");
  return m;
}

} // namespace ditto::train
