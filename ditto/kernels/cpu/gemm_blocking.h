#pragma once

// The GEMM's cache blocking, chosen from the CPU it runs on (Note [GEMM
// blocking from the caches] in gemm_blocking.cpp). Internal; the public
// face is backends::gemm in ditto/ops/linalg.h.

#include <cstdint>
#include <string>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/dtype.h"
#include "ditto/ops/linalg.h"

namespace ditto::kernels {

// The blocking of the capability in force for float32 or float64 (the
// override, if any, applied).
backends::gemm::Blocking gemm_blocking(Dtype dtype);
backends::gemm::Blocking gemm_blocking(CpuCapability c, Dtype dtype);

} // namespace ditto::kernels
