#pragma once

// The GEMM's cache blocking, chosen from the CPU it runs on (Note [GEMM
// blocking from the caches] in gemm_blocking.cpp). Internal; the public
// face is backends::gemm in ditto/ops/linalg.h (ops/linalg/gemm_settings.cpp
// checks the arguments and copies these types into its public ones), so the
// kernels include nothing of ops/.

#include <cstdint>
#include <string>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/dtype.h"
namespace ditto::kernels {

// The data caches of one CPU as the products' blocking sees them, in bytes
// (backends::gemm::CpuCaches is the public copy).
struct CpuCaches {
  int64_t l1d = 0, l2 = 0, l3 = 0;
  std::string source; // where the sizes came from
};

// Register tiles of mr x nr outputs, panels of kc values of k, blocks of mc
// rows of A, output tiles of at most nc columns (backends::gemm::Blocking is
// the public copy).
struct Blocking {
  int64_t mr = 0, nr = 0, kc = 0, mc = 0, nc = 0;
};

// The blocking of the capability in force for float32 or float64 (the
// override, if any, applied).
Blocking gemm_blocking(Dtype dtype);
Blocking gemm_blocking(CpuCapability c, Dtype dtype);

// The caches, detected once, with DITTO_CPU_CACHES applied.
const CpuCaches& detected_caches();
// The blocking caches give a register tile of mr x nr elements of
// element_size bytes (no override, no argument check).
Blocking derive_blocking(
    const CpuCaches& caches,
    int64_t mr,
    int64_t nr,
    int64_t element_size);
// The largest cache size taken from anywhere (1 TiB).
inline constexpr int64_t kMaxCache = int64_t(1) << 40;
// ValueError from op unless 0 <= v <= 65536 (a kc, mc or nc).
void check_block(const char* op, const char* name, int64_t v);
// Forces kc, mc and nc (0: from the caches), replacing DITTO_GEMM_BLOCKING.
void force_blocking(int64_t kc, int64_t mc, int64_t nc);

} // namespace ditto::kernels
