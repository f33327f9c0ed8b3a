#include "ditto/kernels/cpu/gemm_blocking.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "ditto/core/env.h"
#include "ditto/core/error.h"
#include "ditto/kernels/cpu/kernel_table.h"

// Note [GEMM blocking from the caches]
// A product runs as BLIS's loops (gemm_kernels.cpp, linalg.cpp): a thread
// takes output tiles of up to nc columns; per panel of kc values of k it
// packs B's kc x nc panel, then per block of mc rows of A packs the block
// and runs the register tiles (mr x nr) over every sliver of B (kc x nr)
// and every sliver of A (mr x kc). Each level is sized for the cache that
// holds it while the level inside runs, from this CPU's sizes:
//   kc: a sliver of B is read again by every register tile of the block of
//       A, so it sits in L1: kc x nr values take kL1Part of L1;
//   mc: the block of A is read again for every sliver of B, so it sits in
//       L2: mc x kc values take kL2PartA of one CPU's share of L2;
//   nc: the panel of B is read once per block of A, a sliver at a time,
//       so it need not stay in L2: kc x nc values take up to kL2PartB
//       times L2 (the slivers it has not reached yet wait in L3). A is
//       packed again for every panel of columns, so wider is cheaper:
//       with B's panel at most L2, float64 (nc 256 on Zen 5) and AVX2
//       (256) ran 5 to 8% slower at 2048^3 than with four times L2 (1280),
//       at 1 and 2 threads; float32 on AVX-512 (640 against 2688) and the
//       1024^3 products were equal within the noise.
// The parts were measured, each block swept with the others fixed (bench,
// mm 512 to 2048 at 1 and 2 threads): on Zen 4 (32 KiB L1d) a sliver
// filling L1 (kc 256, AVX-512) was fastest, on Zen 5 (48 KiB) kc 384
// (AVX-512) and 768 (AVX2), again filling L1, beat 3/4 of it by 2 to 5%;
// mc changed the time by less than the noise between 1/8 and 1/2 of L2.
// (BLIS's Zen configurations, sized the same way, give a block of A about
// a quarter of L2, and a panel of B of 4080 columns, for L3.) What the register
// tile is stays the capability's (gemm_kernels.cpp). None of this changes a
// bit: each output is one fma chain over k in order whatever the blocks (Note
// [GEMM accumulation order]); a test forces five blockings on every capability,
// at the fewest and the most threads, and compares the bits
// (Linalg.EveryBlockingComputesTheSameChain).

namespace ditto::kernels {
namespace {

// Fractions of each cache level given to the operand that lives there.
constexpr double kL1Part = 1.0;
constexpr double kL2PartA = 0.25;
constexpr double kL2PartB = 4.0;

// Rows of A per block are a multiple of every register tile's row count
// (12, 8, 6, 4): the kernel rounds to its own, this keeps the printed value
// the one that runs.
constexpr int64_t kRowQuantum = 24;
// Columns per panel of B: a multiple of every register tile's columns.
constexpr int64_t kColQuantum = 128;
constexpr int64_t kMaxBlock = 65536;

int64_t round_down(int64_t v, int64_t q) {
  return v / q * q;
}

// ---- detection

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) {
    return std::nullopt;
  }
  return line;
}

// CPUs in a list such as "0-3,8-11".
int64_t count_cpus(const std::string& list) {
  int64_t n = 0;
  std::istringstream in(list);
  std::string part;
  while (std::getline(in, part, ',')) {
    const size_t dash = part.find('-');
    n += dash == std::string::npos
        ? 1
        : std::max(
              1L,
              std::atol(part.c_str() + dash + 1) - std::atol(part.c_str()) + 1);
  }
  return std::max<int64_t>(1, n);
}

bool from_sysfs(CpuCaches& c) {
  const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index";
  bool any = false;
  for (int i = 0; i < 8; ++i) {
    const std::string d = dir + std::to_string(i) + "/";
    auto level = read_line(d + "level");
    auto type = read_line(d + "type");
    auto size = read_line(d + "size");
    if (!level || !type || !size || *type == "Instruction") {
      continue;
    }
    auto bytes = detail::parse_byte_size(*size);
    if (!bytes) {
      continue;
    }
    auto shared = read_line(d + "shared_cpu_list");
    const int64_t share = *bytes / (shared ? count_cpus(*shared) : 1);
    if (*level == "1") {
      c.l1d = share;
    } else if (*level == "2") {
      c.l2 = share;
    } else if (*level == "3") {
      c.l3 = share;
    }
    any = true;
  }
  return any && c.l1d > 0;
}

#if defined(__x86_64__) || defined(__i386__)
// Leaf 4 (Intel) or 0x8000001D (AMD): one sub-leaf per cache.
bool from_cpuid_leaf(unsigned leaf, CpuCaches& c) {
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (static_cast<unsigned>(__get_cpuid_max(leaf & 0x80000000u, nullptr)) <
      leaf) {
    return false;
  }
  bool any = false;
  for (unsigned i = 0; i < 8; ++i) {
    __cpuid_count(leaf, i, a, b, cx, d);
    const unsigned type = a & 31; // 1 data, 2 instruction, 3 unified
    if (type == 0) {
      break;
    }
    if (type == 2) {
      continue;
    }
    // Up to 2^64 bytes from the fields' widths: a hypervisor's nonsense is
    // taken as no answer (over kMaxCache) rather than overflowing.
    const unsigned __int128 bytes = (unsigned __int128)((b >> 22) + 1) *
        (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) * (uint64_t(cx) + 1);
    const unsigned __int128 share = bytes / (((a >> 14) & 0xfff) + 1);
    if (share > static_cast<unsigned __int128>(kMaxCache)) {
      continue;
    }
    switch ((a >> 5) & 7) {
      case 1:
        c.l1d = int64_t(share);
        break;
      case 2:
        c.l2 = int64_t(share);
        break;
      case 3:
        c.l3 = int64_t(share);
        break;
      default:
        break;
    }
    any = true;
  }
  return any && c.l1d > 0;
}

// AMD's older leaves: L1d and L2 per core, L3 for the package (its sharing
// unknown: divided by the CPUs this process may see).
bool from_cpuid_amd_legacy(CpuCaches& c) {
  unsigned a = 0, b = 0, cx = 0, d = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) <
      0x80000006u) {
    return false;
  }
  __cpuid(0x80000005u, a, b, cx, d);
  c.l1d = int64_t(cx >> 24) << 10;
  __cpuid(0x80000006u, a, b, cx, d);
  c.l2 = int64_t(cx >> 16) << 10;
  const int64_t cpus = std::max(1u, std::thread::hardware_concurrency());
  c.l3 = (int64_t(d >> 18) << 19) / cpus;
  return c.l1d > 0 && c.l2 > 0;
}
#endif

CpuCaches detect() {
  CpuCaches c;
  if (from_sysfs(c)) {
    c.source = "sysfs";
  }
#if defined(__x86_64__) || defined(__i386__)
  else if (from_cpuid_leaf(4, c)) {
    c.source = "cpuid leaf 4";
  } else if (from_cpuid_leaf(0x8000001Du, c)) {
    c.source = "cpuid leaf 0x8000001d";
  } else if (from_cpuid_amd_legacy(c)) {
    c.source = "cpuid leaves 0x80000005-6";
  }
#endif
  else {
    c.source = "defaults";
  }
  // Levels nothing reported (no L3 on many small CPUs): the defaults.
  if (c.l1d <= 0) {
    c.l1d = int64_t(32) << 10;
  }
  if (c.l2 <= 0) {
    c.l2 = int64_t(512) << 10;
  }
  if (c.l3 <= 0) {
    c.l3 = int64_t(2) << 20;
  }
  return c;
}

// The caches, detected once, with DITTO_CPU_CACHES applied (a bad value
// raises every time it is read, as every DITTO_* variable).
const CpuCaches& caches() {
  static std::atomic<const CpuCaches*> ready{nullptr};
  if (const CpuCaches* c = ready.load(std::memory_order_acquire)) {
    return *c;
  }
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!ready.load(std::memory_order_relaxed)) {
    CpuCaches c = detect();
    if (auto env = detail::env_sizes(
            "DITTO_CPU_CACHES",
            {"l1d", "l2", "l3"},
            1024,
            int64_t(1) << 34,
            "\"l1d=SIZE,l2=SIZE,l3=SIZE\" (any of them; sizes such as 48K "
            "or 1M, from 1K to 16G)")) {
      for (const auto& [key, bytes] : *env) {
        (key == "l1d" ? c.l1d : key == "l2" ? c.l2 : c.l3) = bytes;
      }
      c.source += ", DITTO_CPU_CACHES";
    }
    static const CpuCaches resolved = c;
    ready.store(&resolved, std::memory_order_release);
  }
  return *ready.load(std::memory_order_relaxed);
}

// ---- the override

struct Override {
  std::atomic<int64_t> kc{0}, mc{0}, nc{0};
  std::once_flag env_read;
};

Override& forced() {
  static Override o;
  return o;
}

// DITTO_GEMM_BLOCKING, read once ("kc=256,mc=192,nc=4096").
void read_blocking_env() {
  auto env = detail::env_sizes(
      "DITTO_GEMM_BLOCKING",
      {"kc", "mc", "nc"},
      0,
      kMaxBlock,
      "\"kc=N,mc=N,nc=N\" (any of them, each N in [0, 65536])");
  if (!env) {
    return;
  }
  Override& o = forced();
  o.kc = env->count("kc") ? env->at("kc") : 0;
  o.mc = env->count("mc") ? env->at("mc") : 0;
  o.nc = env->count("nc") ? env->at("nc") : 0;
}

} // namespace

void check_block(const char* what, const char* name, int64_t v) {
  DITTO_CHECK(
      v >= 0 && v <= kMaxBlock,
      ValueError,
      what,
      name,
      " must be in [0, ",
      kMaxBlock,
      "] (0: from the caches), got ",
      v);
}

const CpuCaches& detected_caches() {
  return caches();
}

Blocking derive_blocking(
    const CpuCaches& c,
    int64_t mr,
    int64_t nr,
    int64_t es) {
  Blocking b;
  b.mr = mr;
  b.nr = nr;
  b.kc = std::clamp<int64_t>(
      round_down(int64_t(double(c.l1d) * kL1Part) / (nr * es), 32), 64, 2048);
  b.mc = std::clamp<int64_t>(
      round_down(int64_t(double(c.l2) * kL2PartA) / (b.kc * es), kRowQuantum),
      kRowQuantum,
      3072);
  b.nc = std::clamp<int64_t>(
      round_down(int64_t(double(c.l2) * kL2PartB) / (b.kc * es), kColQuantum),
      kColQuantum,
      8192);
  return b;
}

Blocking gemm_blocking(CpuCapability cap, Dtype dtype) {
  const KernelTable& t = kernel_table(cap);
  const int i = dtype == kFloat64 ? 1 : 0;
  Blocking b = derive_blocking(
      caches(), t.gemm_mr[i], t.gemm_nr[i], dtype == kFloat64 ? 8 : 4);
  Override& o = forced();
  std::call_once(o.env_read, read_blocking_env);
  if (const int64_t kc = o.kc.load(std::memory_order_relaxed)) {
    b.kc = kc;
  }
  if (const int64_t mc = o.mc.load(std::memory_order_relaxed)) {
    b.mc = mc;
  }
  if (const int64_t nc = o.nc.load(std::memory_order_relaxed)) {
    b.nc = nc;
  }
  return b;
}

Blocking gemm_blocking(Dtype dtype) {
  return gemm_blocking(get_cpu_capability(), dtype);
}

void force_blocking(int64_t kc, int64_t mc, int64_t nc) {
  auto& o = forced();
  // Replaces DITTO_GEMM_BLOCKING for good (a bad value there included).
  std::call_once(o.env_read, [] {});
  o.kc = kc;
  o.mc = mc;
  o.nc = nc;
}

} // namespace ditto::kernels
