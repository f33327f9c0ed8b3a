#pragma once

// Deferred initialization: work queued to run, in queue order, before any
// op runs, any tensor's data is read or written, or any generator is
// seeded or read. nn layers queue their initial draws here instead of
// drawing in their constructors, so that a container can put its
// arguments' draws in source order: C++ leaves the order in which function
// arguments are built unspecified (GCC builds them right to left), and
// nn::Sequential(nn::Linear(4, 3), nn::Linear(3, 2)) must draw as PyTorch
// does. To anything that can observe it, the work has already happened.
// See docs/nn.md.

#include <atomic>
#include <cstdint>
#include <functional>

#include "ditto/core/api.h"

namespace ditto::detail {

// Queues fn; returns its ticket (never 0).
DITTO_API uint64_t defer_init(std::function<void()> fn);
// Removes ticket's work from the queue and returns it; empty if it already
// ran or was taken (or ticket is 0).
DITTO_API std::function<void()> take_deferred(uint64_t ticket);
DITTO_API void run_deferred_slow();
DITTO_API extern std::atomic<int> g_deferred_pending;

// Runs everything queued (nothing to do in the common case: one load).
inline void run_deferred() {
  if (g_deferred_pending.load(std::memory_order_acquire) != 0) {
    run_deferred_slow();
  }
}

} // namespace ditto::detail
