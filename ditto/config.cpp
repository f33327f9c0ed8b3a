#include "ditto/config.h"

#include "ditto/device/device.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/env.h"
#include "ditto/core/parallel.h"
#include "ditto/core/storage.h"
#include "ditto/data/mnist.h"
#include "ditto/determinism/context.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/linalg.h"
#include "ditto/trace/trace.h"

namespace ditto {
namespace {

// The report's values, read once; both forms are printed from it, so the
// text and the JSON cannot disagree.
nlohmann::json report() {
  namespace fs = std::filesystem;
  auto caps = [](const std::vector<CpuCapability>& list) {
    std::vector<std::string> out;
    for (CpuCapability c : list) {
      out.emplace_back(cpu_capability_name(c));
    }
    return out;
  };
  nlohmann::json vars = nlohmann::json::object();
  for (const auto& [name, value] : detail::env_ditto_variables()) {
    vars[name] = value;
  }
  const std::string root = data::kFashionMNISTRoot;
  std::error_code ec;
  const bool found = fs::exists(root + "/train-images-idx3-ubyte.gz", ec) ||
      fs::exists(root + "/train-images-idx3-ubyte", ec);
  const backends::gemm::CpuCaches caches = backends::gemm::cpu_caches();
  auto blocking = [](Dtype d) {
    const backends::gemm::Blocking b = backends::gemm::blocking(d);
    return nlohmann::json{
        {"mr", b.mr}, {"nr", b.nr}, {"kc", b.kc}, {"mc", b.mc}, {"nc", b.nc}};
  };
#ifdef NDEBUG
  const char* build = "release";
#else
  const char* build = "debug";
#endif
  return {
      {"version", version()},
      {"build", build},
      {"compiler", __VERSION__},
      {"cpu_capabilities",
       {{"compiled", caps(compiled_cpu_capabilities())},
        {"supported", caps(supported_cpu_capabilities())},
        {"active", cpu_capability_name(get_cpu_capability())}}},
      {"threads", get_num_threads()},
      {"determinism",
       {{"deterministic_algorithms", are_deterministic_algorithms_enabled()},
        {"warn_only", is_deterministic_algorithms_warn_only_enabled()},
        {"debug_mode", get_deterministic_debug_mode()},
        {"fill_uninitialized_memory",
         determinism::fill_uninitialized_memory()}}},
      {"conv",
       {{"benchmark", backends::conv::benchmark()},
        {"deterministic", backends::conv::deterministic()},
        {"benchmark_limit", backends::conv::benchmark_limit()},
        {"replay_only", backends::conv::replay_only()}}},
      {"gemm",
       {{"workspace_config", backends::gemm::workspace_config()},
        {"workspace_bytes", backends::gemm::workspace_bytes()},
        {"cpu_caches",
         {{"l1d", caches.l1d},
          {"l2", caches.l2},
          {"l3", caches.l3},
          {"source", caches.source}}},
        {"blocking",
         {{"float32", blocking(kFloat32)}, {"float64", blocking(kFloat64)}}}}},
      {"environment", vars},
      {"data", {{"fashion_mnist", root}, {"found", found}}},
      {"trace", trace::active_path()}};
}

} // namespace

const char* version() {
  return DITTO_VERSION;
}

std::string config_report() {
  const nlohmann::json j = report();
  std::ostringstream os;
  auto list = [](const nlohmann::json& caps) {
    std::string s;
    for (const auto& c : caps) {
      s += (s.empty() ? "" : ", ") + c.get<std::string>();
    }
    return s;
  };
  auto yes = [](bool b) { return b ? "true" : "false"; };
  const nlohmann::json& caps = j["cpu_capabilities"];
  const nlohmann::json& det = j["determinism"];
  os << "ditto " << version() << "\n"
     << "  compiler:                        " << __VERSION__ << "\n"
     << "  cpu capabilities compiled:       " << list(caps["compiled"]) << "\n"
     << "  cpu capabilities supported:      " << list(caps["supported"]) << "\n"
     << "  cpu capability active:           "
     << caps["active"].get<std::string>() << "\n"
     << "  threads:                         " << j["threads"] << "\n"
     << "  reduction chunk (elements):      " << kernels::kReduceGrain << "\n"
     << "  storage cache (held / limit):    ";
  if (storage_cache_available()) {
    os << storage_cache_bytes() << " / " << storage_cache_limit() << " bytes";
  } else {
    os << "none";
  }
  const std::string workspace = j["gemm"]["workspace_config"];
  os << "\n"
     << "  deterministic algorithms:        "
     << yes(det["deterministic_algorithms"].get<bool>()) << "\n"
     << "  deterministic warn only:         "
     << yes(det["warn_only"].get<bool>()) << "\n"
     << "  deterministic debug mode:        " << det["debug_mode"] << "\n"
     << "  fill uninitialized memory:       "
     << yes(det["fill_uninitialized_memory"].get<bool>()) << "\n"
     << "  build:                           " << j["build"].get<std::string>()
     << "\n"
     << "  conv benchmark / deterministic:  " << j["conv"]["benchmark"] << " / "
     << j["conv"]["deterministic"] << " (limit " << j["conv"]["benchmark_limit"]
     << ")\n"
     << "  gemm workspace config:           "
     << (workspace.empty() ? std::string("(default)") : workspace) << " ("
     << j["gemm"]["workspace_bytes"] << " bytes)\n";
  const nlohmann::json& cc = j["gemm"]["cpu_caches"];
  os << "  cpu caches (one CPU's share):    L1d "
     << cc["l1d"].get<int64_t>() / 1024 << " KiB, L2 "
     << cc["l2"].get<int64_t>() / 1024 << " KiB, L3 "
     << cc["l3"].get<int64_t>() / 1024 << " KiB ("
     << cc["source"].get<std::string>() << ")\n";
  for (const char* d : {"float32", "float64"}) {
    const nlohmann::json& b = j["gemm"]["blocking"][d];
    os << "  gemm blocking " << d << ":           mr " << b["mr"] << ", nr "
       << b["nr"] << ", kc " << b["kc"] << ", mc " << b["mc"] << ", nc "
       << b["nc"] << "\n";
  }
  os << "  Fashion-MNIST:                   "
     << j["data"]["fashion_mnist"].get<std::string>()
     << (j["data"]["found"].get<bool>() ? "" : " (not found)") << "\n";
  if (j["environment"].empty()) {
    os << "  DITTO_* variables:               (none set)\n";
  }
  for (const auto& [k, v] : j["environment"].items()) {
    os << "  " << k << "=" << v.get<std::string>() << "\n";
  }
  return os.str();
}

std::string config_report_json() {
  return report().dump(2);
}

namespace {
nlohmann::json devices() {
  // The Vulkan devices, each opened (its arithmetic probed): an error
  // opening one is reported in its entry, never raised.
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < vulkan_device_count(); ++i) {
    try {
      const VulkanDeviceInfo d = vulkan_device_info(i);
      devices.push_back(
          {{"device", Device(kVulkan, int16_t(i)).str()},
           {"name", d.name},
           {"type", d.type},
           {"driver", d.driver},
           {"vulkan", d.api_version},
           {"memory_bytes", d.memory_bytes},
           {"float64", d.float64},
           {"fma_rounds_once", d.fma_fused},
           {"denorm_preserve_float32", d.denorm_preserve_float32},
           {"float32_denormals_kept", d.denormals_kept}});
    } catch (const Error& e) {
      devices.push_back(
          {{"device", Device(kVulkan, int16_t(i)).str()}, {"error", e.what()}});
    }
  }
  nlohmann::json vulkan = {
      {"available", is_vulkan_available()}, {"devices", devices}};
  if (!is_vulkan_available()) {
    vulkan["why_not"] = vulkan_unavailable_reason();
  }
  return vulkan;
}
} // namespace

std::string devices_report() {
  const nlohmann::json vk = devices();
  std::ostringstream os;
  auto yes = [](bool b) { return b ? "true" : "false"; };
  if (!vk["available"].get<bool>()) {
    os << "  vulkan devices:                  none ("
       << vk["why_not"].get<std::string>() << ")\n";
  }
  for (const auto& d : vk["devices"]) {
    os << "  " << d["device"].get<std::string>() << ": ";
    if (d.contains("error")) {
      os << d["error"].get<std::string>() << "\n";
      continue;
    }
    os << d["name"].get<std::string>() << " (" << d["type"].get<std::string>()
       << "), " << d["driver"].get<std::string>() << ", Vulkan "
       << d["vulkan"].get<std::string>() << ", "
       << d["memory_bytes"].get<uint64_t>() / (1024 * 1024) << " MiB\n"
       << "      fma rounds once: " << yes(d["fma_rounds_once"].get<bool>())
       << " (else built from float64: " << yes(d["float64"].get<bool>())
       << "); float32 denormals kept: "
       << yes(d["float32_denormals_kept"].get<bool>()) << "\n";
  }
  return os.str();
}

std::string devices_report_json() {
  return devices().dump(2);
}

} // namespace ditto
