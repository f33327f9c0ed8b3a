// The CPU capabilities a test forces, for every test binary.

#pragma once

#include <gtest/gtest.h>

#include <iostream>
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
