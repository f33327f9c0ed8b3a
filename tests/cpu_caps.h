// The CPU capabilities and thread counts a test forces, for every test
// binary.

#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ditto/core/cpu_capability.h"

namespace ditto::test {

// Every compiled capability this CPU runs. Each compiled one it lacks is
// printed as skipped, with the reason, and recorded in the test's XML
// properties; the suite checks elsewhere (CpuCapability.
// SupportMatchesTheCpu) that nothing the CPU has is skipped.
inline std::vector<CpuCapability> testable_capabilities() {
  std::vector<CpuCapability> out;
  for (CpuCapability c : compiled_cpu_capabilities()) {
    if (cpu_capability_supported(c)) {
      out.push_back(c);
    } else {
      const std::string name(cpu_capability_name(c));
      std::cout << "[  SKIPPED ] capability " << name
                << ": this CPU does not support it\n";
      ::testing::Test::RecordProperty(
          "skipped_capability_" + name, "this CPU does not support it");
    }
  }
  return out;
}

// The thread counts the bit-equality tests compare: 1, 2, 3 and 8, or the
// comma-separated list in DITTO_TEST_THREADS. The sanitizer builds set
// "1,3" (tests/CMakeLists.txt): memory errors and races are what they
// add, and the serial run and an uneven split reach every chunk edge that
// the others do; the release build's run compares all four.
// True in the sanitizer builds (DITTO_TEST_SANITIZED): there, tests whose
// length is repetition (the same check at more thread counts or resume
// points) run one round; the release, scalar-only and AVX2 suites run all.
constexpr bool test_sanitized() {
#ifdef DITTO_TEST_SANITIZED
  return true;
#else
  return false;
#endif
}

// True where the test programs run under an emulator: scripts/cross_arch_check
// and scripts/cpu_check set DITTO_TEST_EMULATED=1 for their qemu runs.
inline bool test_emulated() {
  const char* env = std::getenv("DITTO_TEST_EMULATED");
  return env != nullptr && std::string(env) == "1";
}

// Where tests whose length is the number of points they check (the math
// kernels' accuracy sweeps, the scatter reductions' large inputs) check a
// sample of them: under the sanitizers (their subject is memory and races)
// and under an emulator (qemu runs them 30 to 60 times slower; aarch64's
// long double is software there). The native release, scalar-only and
// AVX2 suites check every point.
inline bool test_thinned() {
  return test_sanitized() || test_emulated();
}

inline std::vector<int> test_thread_counts() {
  const char* env = std::getenv("DITTO_TEST_THREADS");
  if (env == nullptr || *env == '\0') {
    return {1, 2, 3, 8};
  }
  std::vector<int> out;
  std::stringstream in(env);
  std::string item;
  while (std::getline(in, item, ',')) {
    const int n = std::atoi(item.c_str());
    if (n < 1) {
      ADD_FAILURE() << "DITTO_TEST_THREADS: '" << item
                    << "' is not a thread count (expected e.g. 1,3)";
      return {1, 2, 3, 8};
    }
    out.push_back(n);
  }
  return out;
}

// For tests parameterized by capability: skips (GTEST_SKIP, with the
// reason) when the CPU lacks c, else forces it.
#define DITTO_FORCE_CAPABILITY_OR_SKIP(c)                              \
  do {                                                                 \
    if (!::ditto::cpu_capability_supported(c)) {                       \
      GTEST_SKIP() << "capability " << ::ditto::cpu_capability_name(c) \
                   << ": this CPU does not support it";                \
    }                                                                  \
    ::ditto::set_cpu_capability(c);                                    \
  } while (false)

} // namespace ditto::test
