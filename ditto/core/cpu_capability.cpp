#include "ditto/core/cpu_capability.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "ditto/core/env.h"
#include "ditto/core/error.h"

namespace ditto {
namespace {

bool cpu_supports(CpuCapability c) {
#if defined(__x86_64__)
  // Needed when the first call comes from a static initializer that runs
  // before libgcc's own; it also checks that the OS saves the registers.
  __builtin_cpu_init();
#endif
  switch (c) {
    case CpuCapability::Scalar:
      return true;
    case CpuCapability::Avx2:
#if defined(__x86_64__)
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
    case CpuCapability::Avx512:
#if defined(__x86_64__)
      return __builtin_cpu_supports("avx512f") &&
          __builtin_cpu_supports("avx512dq") &&
          __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
    case CpuCapability::Neon:
      // Advanced SIMD is part of every AArch64 CPU.
#if defined(__aarch64__)
      return true;
#else
      return false;
#endif
  }
  return false;
}

bool compiled(CpuCapability c) {
  switch (c) {
    case CpuCapability::Scalar:
      return true;
    case CpuCapability::Avx2:
      return DITTO_HAVE_AVX2 != 0;
    case CpuCapability::Avx512:
      return DITTO_HAVE_AVX512 != 0;
    case CpuCapability::Neon:
      return DITTO_HAVE_NEON != 0;
  }
  return false;
}

CpuCapability parse(std::string_view name, const char* op) {
  if (name == "scalar" || name == "default") {
    return CpuCapability::Scalar;
  }
  if (name == "avx2") {
    return CpuCapability::Avx2;
  }
  if (name == "avx512") {
    return CpuCapability::Avx512;
  }
  if (name == "neon") {
    return CpuCapability::Neon;
  }
  detail::throw_error<ValueError>(
      op,
      "unknown CPU capability '",
      name,
      "'; expected scalar, avx2, avx512 or neon");
}

void check_usable(CpuCapability c, const char* op) {
  DITTO_CHECK(
      compiled(c),
      ValueError,
      op,
      "CPU capability ",
      cpu_capability_name(c),
      " is not compiled into this build (DITTO_SIMD=scalar or another "
      "architecture)");
  DITTO_CHECK(
      cpu_supports(c),
      ValueError,
      op,
      "CPU capability ",
      cpu_capability_name(c),
      " is not supported by this CPU");
}

constexpr int kUnset = -1;
std::atomic<int> g_capability{kUnset};

CpuCapability best() {
  for (CpuCapability c :
       {CpuCapability::Avx512, CpuCapability::Avx2, CpuCapability::Neon}) {
    if (compiled(c) && cpu_supports(c)) {
      return c;
    }
  }
  return CpuCapability::Scalar;
}

} // namespace

std::string_view cpu_capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::Scalar:
      return "scalar";
    case CpuCapability::Avx2:
      return "avx2";
    case CpuCapability::Avx512:
      return "avx512";
    case CpuCapability::Neon:
      return "neon";
  }
  return "unknown";
}

CpuCapability get_cpu_capability() {
  int c = g_capability.load(std::memory_order_acquire);
  if (c != kUnset) {
    return CpuCapability(c);
  }
  // The environment is read once; a bad value is an error every time.
  auto env = detail::env_text("DITTO_CPU_CAPABILITY");
  CpuCapability chosen = best();
  if (env) {
    chosen = parse(*env, "DITTO_CPU_CAPABILITY");
    check_usable(chosen, "DITTO_CPU_CAPABILITY");
  }
  int expected = kUnset;
  g_capability.compare_exchange_strong(expected, int(chosen));
  return CpuCapability(g_capability.load());
}

void set_cpu_capability(CpuCapability c) {
  check_usable(c, "set_cpu_capability");
  g_capability.store(int(c), std::memory_order_release);
}

void set_cpu_capability(std::string_view name) {
  set_cpu_capability(parse(name, "set_cpu_capability"));
}

std::vector<CpuCapability> compiled_cpu_capabilities() {
  std::vector<CpuCapability> out;
  for (CpuCapability c :
       {CpuCapability::Scalar,
        CpuCapability::Avx2,
        CpuCapability::Avx512,
        CpuCapability::Neon}) {
    if (compiled(c)) {
      out.push_back(c);
    }
  }
  return out;
}

bool cpu_capability_supported(CpuCapability c) {
  return compiled(c) && cpu_supports(c);
}

std::vector<CpuCapability> supported_cpu_capabilities() {
  std::vector<CpuCapability> out;
  for (CpuCapability c : compiled_cpu_capabilities()) {
    if (cpu_supports(c)) {
      out.push_back(c);
    }
  }
  return out;
}

} // namespace ditto
