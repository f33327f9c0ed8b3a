#pragma once

// Internal: the pause hint of a spin-wait loop. Not installed.

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ditto::detail {

inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

} // namespace ditto::detail
