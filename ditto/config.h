#pragma once

#include <string>

#include "ditto/core/api.h"

namespace ditto {

// "0.1.0"
DITTO_API const char* version();

// The environment report, what `ditto env` prints: the build and every
// setting that can change what ditto computes or how (version, compiled and
// active CPU capability, thread count, the determinism, convolution and GEMM
// settings), the DITTO_* variables and the Fashion-MNIST data.
DITTO_API std::string config_report();

// The same report as a JSON object, indented by 2 (what `ditto env --json`
// prints): version, build, compiler, cpu_capabilities {compiled, supported,
// active}, threads, determinism {deterministic_algorithms, warn_only,
// debug_mode, fill_uninitialized_memory}, conv {benchmark, deterministic,
// benchmark_limit, replay_only}, gemm {workspace_config, workspace_bytes},
// environment (each DITTO_* variable), data {fashion_mnist, found}, trace.
DITTO_API std::string config_report_json();

// The Vulkan devices (`ditto env`'s last lines), each opened and its
// arithmetic probed (docs/device.md); apart from config_report so that a
// report does not start a device driver.
DITTO_API std::string devices_report();
DITTO_API std::string devices_report_json();

} // namespace ditto
