// The tuning cache: the algorithms benchmarking chose, saved as versioned
// JSON (atomically) and loaded for replay.

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/file_io.h"
#include "ditto/core/json_read.h"
#include "ditto/core/parallel.h"
#include "ditto/determinism/context.h"
#include "ditto/ops/detail/conv/algorithms.h"

namespace ditto::backends::conv {

using detail::conv::Dir;
using detail::conv::kDirNames;
using detail::conv::state;

void clear_tuning_cache() {
  std::lock_guard<std::mutex> lock(state().mu);
  state().timed.clear();
  state().loaded.clear();
}

std::string tuning_cache_json() {
  nlohmann::json j;
  j["format"] = "ditto.conv_tuning_cache";
  j["version"] = 1;
  j["cpu_capability"] = std::string(cpu_capability_name(get_cpu_capability()));
  j["threads"] = get_num_threads();
  {
    std::lock_guard<std::mutex> lock(state().mu);
    std::map<std::string, std::string> all = state().loaded;
    for (const auto& [k, v] : state().timed) {
      all[k] = v;
    }
    j["entries"] = all;
  }
  return j.dump(1) + "\n";
}

void save_tuning_cache(const std::string& path) {
  detail::write_file_atomic(
      path, tuning_cache_json(), "backends::conv::save_tuning_cache");
}

bool load_tuning_cache(const std::string& path) {
  const char* op = "backends::conv::load_tuning_cache";
  auto warn = [&](const std::string& message) {
    determinism::warn(
        "conv tuning cache",
        detail::str_cat(message, "; the cache is unchanged"));
    return false;
  };
  auto reject = [&](const std::string& why) {
    return warn(detail::str_cat("[", op, "] ", path, ": ", why));
  };
  std::map<std::string, std::string> entries;
  try {
    // A file (not a directory or device), at most 64 MiB, at most 64 levels
    // deep (Note [Limits on JSON read from files]).
    nlohmann::json j = detail::parse_json(
        detail::read_regular_file(path, op, detail::kJsonMaxBytes), op, path);
    if (j.value("format", "") != "ditto.conv_tuning_cache") {
      return reject("not a ditto conv tuning cache");
    }
    // (Compared as JSON: value<int> of a float would be undefined.)
    const nlohmann::json version = j.value("version", nlohmann::json());
    if (version != 1) {
      return reject("unsupported version " + version.dump());
    }
    const std::string cap = j.at("cpu_capability").get<std::string>();
    if (cap != cpu_capability_name(get_cpu_capability())) {
      return reject(
          "made for CPU capability " + cap + ", this process runs " +
          std::string(cpu_capability_name(get_cpu_capability())));
    }
    entries = j.at("entries").get<std::map<std::string, std::string>>();
    for (const auto& [k, v] : entries) {
      const std::string dir = k.substr(0, k.find('|'));
      int d = -1;
      for (int q = 0; q < 3; ++q) {
        if (dir == kDirNames[q]) {
          d = q;
        }
      }
      const bool known =
          d >= 0 && detail::conv::find_algorithm(Dir(d), v) != nullptr;
      if (!known) {
        return reject("unknown algorithm '" + v + "' for key " + k);
      }
    }
  } catch (const Error& e) {
    return warn(e.what());
  } catch (const std::exception& e) {
    return reject(std::string("corrupt: ") + e.what());
  }
  std::lock_guard<std::mutex> lock(state().mu);
  state().loaded = std::move(entries);
  return true;
}

} // namespace ditto::backends::conv
