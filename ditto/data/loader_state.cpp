// LoaderState as JSON: what DataLoader::state_dict() returns, written and
// read back.

#include "ditto/data/loader.h"

#include <nlohmann/json.hpp>

#include "ditto/core/error.h"
#include "ditto/core/json_int.h"
#include "ditto/core/json_read.h"

namespace ditto::data {
namespace {

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

std::vector<uint8_t> unhex(const std::string& s) {
  DITTO_CHECK(
      s.size() % 2 == 0, ValueError, "LoaderState.from_json", "odd hex string");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    DITTO_CHECK(
        false, ValueError, "LoaderState.from_json", "bad hex digit '", c, "'");
    return 0;
  };
  std::vector<uint8_t> out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = uint8_t(nibble(s[2 * i]) * 16 + nibble(s[2 * i + 1]));
  }
  return out;
}

} // namespace

std::string LoaderState::to_json() const {
  nlohmann::json j;
  j["format"] = "ditto.LoaderState";
  j["version"] = 1;
  j["epoch"] = epoch;
  j["batches"] = batches;
  j["epoch_done"] = epoch_done;
  j["base_seed"] = std::to_string(base_seed);
  j["seed_mode"] = seed_mode == SeedMode::PerSample ? "per_sample" : "pytorch";
  j["num_workers"] = num_workers;
  j["sampler"] = {
      {"consumed", sampler.consumed},
      {"has_seed", sampler.has_seed},
      {"seed", std::to_string(sampler.seed)},
      {"generator_state", hex(sampler.generator_state)},
      {"epoch", sampler.epoch}};
  j["generator"] = hex(generator);
  std::vector<std::string> w;
  for (const auto& g : worker_generators) {
    w.push_back(hex(g));
  }
  j["worker_generators"] = w;
  return j.dump(1);
}

LoaderState LoaderState::from_json(const std::string& text) {
  const char* name = "LoaderState.from_json";
  LoaderState s;
  try {
    nlohmann::json j = detail::parse_json(text, name, "state");
    DITTO_CHECK(
        j.value("format", "") == "ditto.LoaderState" &&
            j.value("version", nlohmann::json()) == 1,
        ValueError,
        name,
        "not a ditto.LoaderState of version 1");
    s.epoch = detail::json_int(j.at("epoch"));
    s.batches = detail::json_int(j.at("batches"));
    s.epoch_done = j.at("epoch_done").get<bool>();
    s.base_seed = std::stoull(j.at("base_seed").get<std::string>());
    const std::string mode = j.at("seed_mode").get<std::string>();
    DITTO_CHECK(
        mode == "per_sample" || mode == "pytorch",
        ValueError,
        name,
        "unknown seed_mode '",
        mode,
        "'");
    s.seed_mode =
        mode == "per_sample" ? SeedMode::PerSample : SeedMode::PyTorch;
    const int64_t workers = detail::json_int(j.at("num_workers"));
    DITTO_CHECK(
        workers >= 0 && workers <= std::numeric_limits<int>::max(),
        ValueError,
        name,
        "num_workers ",
        workers,
        " is out of range");
    s.num_workers = int(workers);
    const auto& sp = j.at("sampler");
    s.sampler.consumed = detail::json_int(sp.at("consumed"));
    s.sampler.has_seed = sp.at("has_seed").get<bool>();
    s.sampler.seed = std::stoull(sp.at("seed").get<std::string>());
    s.sampler.generator_state =
        unhex(sp.at("generator_state").get<std::string>());
    s.sampler.epoch = detail::json_int(sp.at("epoch"));
    s.generator = unhex(j.at("generator").get<std::string>());
    for (const auto& g : j.at("worker_generators")) {
      s.worker_generators.push_back(unhex(g.get<std::string>()));
    }
  } catch (const nlohmann::json::exception& e) {
    DITTO_CHECK(false, ValueError, name, "malformed state: ", e.what());
  } catch (const std::logic_error& e) {
    if (dynamic_cast<const Error*>(&e) == nullptr) {
      DITTO_CHECK(false, ValueError, name, "malformed number: ", e.what());
    }
    throw;
  }
  return s;
}

} // namespace ditto::data
