// The device parser (Device(const std::string&), ditto/core/device.h),
// against an oracle written from its rules: "cpu", "cpu:0", "vulkan" or
// "vulkan:N" with N decimal digits (leading zeros allowed) in [0, 32767];
// anything else is a ValueError. A parsed device prints as text that
// parses back to it.

#include <cstdlib>
#include <string>

#include "fuzz/fuzz_util.h"

namespace {

// The index the text names, -1 for none, -2 for text that is not a device.
int oracle(const std::string& s, bool* vulkan) {
  const size_t colon = s.find(':');
  const std::string kind = s.substr(0, colon);
  if (kind != "cpu" && kind != "vulkan") {
    return -2;
  }
  *vulkan = kind == "vulkan";
  if (colon == std::string::npos) {
    return -1;
  }
  const std::string digits = s.substr(colon + 1);
  if (digits.empty()) {
    return -2;
  }
  long v = 0;
  int significant = 0; // leading zeros are fine and do not count
  for (char c : digits) {
    if (c < '0' || c > '9') {
      return -2;
    }
    significant += v != 0 || c != '0';
    if (significant > 9) {
      return -2; // beyond any index
    }
    v = v * 10 + (c - '0');
  }
  if (v > 32767 || (!*vulkan && v != 0)) {
    return -2;
  }
  return int(v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  bool vulkan = false;
  const int want = oracle(text, &vulkan);
  bool parsed = false;
  ditto::Device d;
  ditto::fuzz::typed_error_or_result([&] {
    d = ditto::Device(text);
    parsed = true;
  });
  if (parsed != (want != -2)) {
    std::abort(); // accepted what the rules refuse, or the reverse
  }
  if (parsed) {
    if (d.is_vulkan() != vulkan || d.index != want ||
        !(ditto::Device(d.str()) == d)) {
      std::abort();
    }
  }
  return 0;
}
