// Run with DITTO_GEMM_WORKSPACE_CONFIG set to a bad value (tests/CMakeLists:
// workspace_env_bad): every use of the workspace raises the same
// ValueError until the setting is fixed; it is never silently replaced by
// the default (issue 17, defect 6). Exits 0 when that holds.

#include <cstdio>
#include <string>

#include "ditto/ditto.h"

int main() {
  using namespace ditto;
  std::string first;
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      backends::gemm::workspace_bytes();
      std::fprintf(
          stderr, "attempt %d: the bad setting was accepted\n", attempt);
      return 1;
    } catch (const ValueError& e) {
      if (attempt == 0) {
        first = e.what();
      } else if (first != e.what()) {
        std::fprintf(stderr, "a different error: %s\n", e.what());
        return 1;
      }
    }
  }
  if (first.find("[DITTO_GEMM_WORKSPACE_CONFIG]") == std::string::npos) {
    std::fprintf(
        stderr, "the error does not name the variable: %s\n", first.c_str());
    return 1;
  }
  backends::gemm::set_workspace_config(":4096:8");
  if (backends::gemm::workspace_bytes() != int64_t(4096) * 1024 * 8) {
    std::fprintf(stderr, "set_workspace_config did not fix it\n");
    return 1;
  }
  std::printf(
      "workspace_env: the bad setting raised every time: %s\n", first.c_str());
  return 0;
}
