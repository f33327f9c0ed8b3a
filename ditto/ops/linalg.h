#pragma once

#include <string>

#include "ditto/core/scalar.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // mm ... linear: linalg/linalg.ops.toml

namespace ditto {

// Matrix products of float32 or float64 tensors (both the same dtype).
// Every output element is one chain of fused multiply-adds over k in order
// (Note [GEMM accumulation order]): the same bits for any thread count and
// on every CPU capability. Split-K (small outputs with a huge k) is the
// exception to the chain: see docs/linalg.md.

// mm, bmm, matmul, addmm and linear are declared in linalg/linalg.ops.toml
// (generated into declared.h).

namespace backends::gemm {

// The split-K reduction workspace, as PyTorch's CUBLAS_WORKSPACE_CONFIG:
// ":SIZE_KiB:COUNT[:SIZE_KiB:COUNT...]" (total SIZE_KiB * 1024 * COUNT
// bytes). Read once from DITTO_GEMM_WORKSPACE_CONFIG at first use; set_...
// replaces it (ValueError, and no change, for bad syntax). It bounds how
// many split-K partials are held at once, never the bits; the deterministic
// mode works with any size, the default included.
DITTO_API void set_workspace_config(const std::string& config);
// The configuration in force ("" when unset).
DITTO_API std::string workspace_config();
// Its size in bytes (unset: 8 MiB).
DITTO_API int64_t workspace_bytes();

// The data caches of one CPU as the products' blocking sees them, in bytes:
// l2 and l3 are one logical CPU's share (the size over the CPUs that share
// it). Detected once, from Linux's sysfs, else CPUID (leaf 4, 0x8000001D,
// then 0x80000005/6), else the defaults 32 KiB / 512 KiB / 2 MiB; each
// level DITTO_CPU_CACHES names ("l1d=32K,l2=512K,l3=4M") replaces the
// detected one: another machine's blocking, for experiments.
struct CpuCaches {
  int64_t l1d = 0, l2 = 0, l3 = 0;
  std::string source; // where the sizes came from
};
DITTO_API CpuCaches cpu_caches();

// The cache blocking of the products on the CPU (Note [GEMM blocking from
// the caches] in ditto/kernels/cpu/gemm_blocking.cpp): register tiles of mr
// rows x nr columns (the capability's), panels of kc values of k whose
// slivers of B (kc x nr) stay in L1, blocks of mc rows of A (mc x kc) that
// stay in L2, and output tiles of at most nc columns, B's kc x nc panel
// packed once per tile. It decides only where values wait, never which
// fused multiply-adds run in which order: the bits are the same for every
// blocking (tested).
struct Blocking {
  int64_t mr = 0, nr = 0, kc = 0, mc = 0, nc = 0;
};
// The blocking in force for float32 or float64 products on the active CPU
// capability.
DITTO_API Blocking blocking(Dtype dtype = kFloat32);
// The blocking the given caches give a register tile of mr x nr values of
// dtype, no override applied: another machine's, without that machine.
DITTO_API Blocking
derive_blocking(const CpuCaches& caches, int64_t mr, int64_t nr, Dtype dtype);
// Forces kc, mc and nc (0: the value the caches give), for experiments;
// read at first use from DITTO_GEMM_BLOCKING ("kc=256,mc=192,nc=4096", any
// of them). ValueError, and no change, for a value out of [0, 65536].
DITTO_API void set_blocking(int64_t kc, int64_t mc, int64_t nc);

} // namespace backends::gemm

} // namespace ditto
