#include "ditto/config.h"

#include <sstream>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/parallel.h"
#include "ditto/core/storage.h"
#include "ditto/determinism/context.h"
#include "ditto/kernels/cpu/kernel_table.h"

namespace ditto {

const char* version() {
  return DITTO_VERSION;
}

std::string config_report() {
  std::ostringstream os;
  auto list = [&](const std::vector<CpuCapability>& caps) {
    std::string s;
    for (CpuCapability c : caps) {
      s += (s.empty() ? "" : ", ") + std::string(cpu_capability_name(c));
    }
    return s;
  };
  auto yes = [](bool b) { return b ? "true" : "false"; };
  os << "ditto " << version() << "\n"
     << "  compiler:                        " << __VERSION__ << "\n"
     << "  cpu capabilities compiled:       "
     << list(compiled_cpu_capabilities()) << "\n"
     << "  cpu capabilities supported:      "
     << list(supported_cpu_capabilities()) << "\n"
     << "  cpu capability active:           "
     << cpu_capability_name(get_cpu_capability()) << "\n"
     << "  threads:                         " << get_num_threads() << "\n"
     << "  reduction chunk (elements):      " << kernels::kReduceGrain << "\n"
     << "  storage cache (held / limit):    ";
  if (storage_cache_available()) {
    os << storage_cache_bytes() << " / " << storage_cache_limit() << " bytes";
  } else {
    os << "none";
  }
  os << "\n"
     << "  deterministic algorithms:        "
     << yes(are_deterministic_algorithms_enabled()) << "\n"
     << "  deterministic warn only:         "
     << yes(is_deterministic_algorithms_warn_only_enabled()) << "\n"
     << "  deterministic debug mode:        " << get_deterministic_debug_mode()
     << "\n"
     << "  fill uninitialized memory:       "
     << yes(determinism::fill_uninitialized_memory()) << "\n";
  return os.str();
}

} // namespace ditto
