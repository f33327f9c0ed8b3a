// Built with -mavx2 outside any per-capability namespace: the function the
// ISA audit (tools/isa_audit.sh) must report.

#include <cstddef>

extern "C" void planted_scale(float* x, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = x[i] * s + 1.0f;
  }
}
