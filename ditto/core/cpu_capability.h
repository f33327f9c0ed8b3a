#pragma once

#include <string_view>
#include <vector>

#include "ditto/core/api.h"

namespace ditto {

// The instruction sets ditto's kernels are compiled for: scalar everywhere,
// AVX2 and AVX-512 on x86-64, NEON on aarch64. Every variant gives the same
// bits (R5), on either architecture; the fastest one the CPU supports runs
// by default.
enum class CpuCapability { Scalar = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };

DITTO_API std::string_view cpu_capability_name(CpuCapability c);

// The variant in use. Chosen at first use from DITTO_CPU_CAPABILITY
// (scalar|avx2|avx512|neon) if set, else the best the CPU supports.
DITTO_API CpuCapability get_cpu_capability();
// Forces a variant; ValueError if it was not compiled in or the CPU lacks it.
DITTO_API void set_cpu_capability(CpuCapability c);
DITTO_API void set_cpu_capability(std::string_view name);

// Variants in this build (DITTO_SIMD=all or scalar), and those the CPU runs.
DITTO_API std::vector<CpuCapability> compiled_cpu_capabilities();
DITTO_API std::vector<CpuCapability> supported_cpu_capabilities();
// Whether c is compiled in and this CPU (and its OS) runs it.
DITTO_API bool cpu_capability_supported(CpuCapability c);

} // namespace ditto
