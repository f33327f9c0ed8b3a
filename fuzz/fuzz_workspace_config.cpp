// The GEMM workspace configuration string: accepted, or a ValueError that
// leaves the configuration as it was.

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  const std::string config(reinterpret_cast<const char*>(data), size);
  const std::string before = backends::gemm::workspace_config();
  const int64_t bytes_before = backends::gemm::workspace_bytes();
  if (fuzz::typed_error_or_result(
          [&] { backends::gemm::set_workspace_config(config); })) {
    fuzz::require(
        backends::gemm::workspace_config() == config, "not what was set");
    fuzz::require(backends::gemm::workspace_bytes() >= 0, "negative bytes");
    backends::gemm::set_workspace_config(":4096:8");
  } else {
    fuzz::require(
        backends::gemm::workspace_config() == before &&
            backends::gemm::workspace_bytes() == bytes_before,
        "a refused configuration changed it");
  }
  return 0;
}
