// backends::gemm: the GEMM workspace setting (DITTO_GEMM_WORKSPACE_CONFIG,
// PyTorch's CUBLAS_WORKSPACE_CONFIG role: how many split-K partials the
// products of linalg.cpp hold at once) and the blocking's public calls.

#include <mutex>
#include <string>

#include "ditto/core/env.h"
#include "ditto/core/error.h"
#include "ditto/kernels/cpu/gemm_blocking.h"
#include "ditto/ops/linalg.h"

namespace ditto {
namespace {

struct WorkspaceConfig {
  std::mutex mu;
  bool loaded = false;
  std::string config;
  int64_t bytes = int64_t(8) << 20;
};

WorkspaceConfig& workspace() {
  static WorkspaceConfig w;
  return w;
}

// Total bytes of a ":SIZE_KiB:COUNT..." string; ValueError if malformed.
int64_t parse_workspace(const std::string& config, const char* op) {
  // The fields: each a ':' then 1 to 9 digits (at most 2^40 bytes in all,
  // so no overflow on the way), in pairs.
  std::vector<std::string> fields;
  bool well_formed = !config.empty();
  for (size_t at = 0; well_formed && at < config.size();) {
    size_t end = at + 1;
    while (end < config.size() && config[end] >= '0' && config[end] <= '9') {
      ++end;
    }
    well_formed = config[at] == ':' && end > at + 1;
    fields.push_back(config.substr(at + 1, end - at - 1));
    at = end;
  }
  DITTO_CHECK(
      well_formed && fields.size() % 2 == 0,
      ValueError,
      op,
      "expected \":SIZE_KiB:COUNT[:SIZE_KiB:COUNT...]\" (such as \":4096:8\"), "
      "got \"",
      config,
      "\"");
  int64_t total = 0;
  for (size_t f = 0; f < fields.size(); f += 2) {
    const std::string& size = fields[f];
    const std::string& count = fields[f + 1];
    DITTO_CHECK(
        size.size() < 10 && count.size() < 10,
        ValueError,
        op,
        "workspace \"",
        config,
        "\" is too large");
    const int64_t kib = std::stoll(size), times = std::stoll(count);
    DITTO_CHECK(
        kib <= (int64_t(1) << 30) && times <= (int64_t(1) << 30) &&
            (times == 0 || kib <= ((int64_t(1) << 30) - total / 1024) / times),
        ValueError,
        op,
        "workspace \"",
        config,
        "\" is too large (at most 1 TiB)");
    total += kib * 1024 * times;
  }
  return total;
}

void load_workspace_locked(WorkspaceConfig& w) {
  if (w.loaded) {
    return;
  }
  // Marked loaded only once it parsed: a bad setting raises the same
  // ValueError for every product that needs it, until it is fixed (here or
  // with set_workspace_config), instead of silently becoming the default.
  if (auto env = detail::env_text("DITTO_GEMM_WORKSPACE_CONFIG")) {
    const int64_t bytes = parse_workspace(*env, "DITTO_GEMM_WORKSPACE_CONFIG");
    w.bytes = bytes;
    w.config = *env;
  }
  w.loaded = true;
}

// The workspace's size in bytes (ValueError for a malformed
// DITTO_GEMM_WORKSPACE_CONFIG, every time until it is fixed).
int64_t workspace_bytes_now() {
  WorkspaceConfig& w = workspace();
  std::lock_guard<std::mutex> lock(w.mu);
  load_workspace_locked(w);
  return w.bytes;
}

} // namespace

namespace backends::gemm {

void set_workspace_config(const std::string& config) {
  const int64_t bytes =
      parse_workspace(config, "backends::gemm::set_workspace_config");
  WorkspaceConfig& w = workspace();
  std::lock_guard<std::mutex> lock(w.mu);
  w.loaded = true;
  w.config = config;
  w.bytes = bytes;
}

std::string workspace_config() {
  WorkspaceConfig& w = workspace();
  std::lock_guard<std::mutex> lock(w.mu);
  load_workspace_locked(w);
  return w.config;
}

int64_t workspace_bytes() {
  return workspace_bytes_now();
}

} // namespace backends::gemm

} // namespace ditto

// backends::gemm: the checks of the public calls over the kernels blocking
// (ditto/kernels/cpu/gemm_blocking.cpp).
namespace ditto::backends::gemm {
namespace {

Blocking to_public(const kernels::Blocking& b) {
  return {b.mr, b.nr, b.kc, b.mc, b.nc};
}

} // namespace

CpuCaches cpu_caches() {
  const kernels::CpuCaches& c = kernels::detected_caches();
  return {c.l1d, c.l2, c.l3, c.source};
}

Blocking blocking(Dtype dtype) {
  DITTO_CHECK(
      dtype == kFloat32 || dtype == kFloat64,
      TypeError,
      "backends::gemm::blocking",
      "expected float32 or float64, got ",
      dtype);
  return to_public(kernels::gemm_blocking(dtype));
}

Blocking derive_blocking(
    const CpuCaches& caches,
    int64_t mr,
    int64_t nr,
    Dtype dtype) {
  const char* op = "backends::gemm::derive_blocking";
  DITTO_CHECK(
      dtype == kFloat32 || dtype == kFloat64,
      TypeError,
      op,
      "expected float32 or float64, got ",
      dtype);
  DITTO_CHECK(
      mr >= 1 && mr <= 64 && nr >= 1 && nr <= 256,
      ValueError,
      op,
      "register tile ",
      mr,
      " x ",
      nr,
      " is outside 1..64 x 1..256");
  DITTO_CHECK(
      caches.l1d >= 1024 && caches.l2 >= 1024 && caches.l3 >= 0 &&
          caches.l1d <= kernels::kMaxCache && caches.l2 <= kernels::kMaxCache &&
          caches.l3 <= kernels::kMaxCache,
      ValueError,
      op,
      "cache sizes must be from 1 KiB to 1 TiB (L3 may be 0), got L1d ",
      caches.l1d,
      ", L2 ",
      caches.l2,
      ", L3 ",
      caches.l3);
  const kernels::CpuCaches c{caches.l1d, caches.l2, caches.l3, caches.source};
  return to_public(
      kernels::derive_blocking(c, mr, nr, dtype == kFloat64 ? 8 : 4));
}

void set_blocking(int64_t kc, int64_t mc, int64_t nc) {
  const char* op = "backends::gemm::set_blocking";
  kernels::check_block(op, "kc", kc);
  kernels::check_block(op, "mc", mc);
  kernels::check_block(op, "nc", nc);
  kernels::force_blocking(kc, mc, nc);
}

} // namespace ditto::backends::gemm
