#include "ditto/trace/trace.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace ditto::trace {
namespace {
std::atomic<bool> g_enabled{false};
std::mutex g_mu;
std::shared_ptr<const Hook> g_hook;
// Ops run by the hook itself (fingerprinting, printing) are not reported.
thread_local bool tls_in_hook = false;
thread_local int tls_depth = 0;
thread_local Phase tls_phase = Phase::kForward;
} // namespace

Frame::Frame() : outermost_(tls_depth == 0) {
  ++tls_depth;
}

Frame::~Frame() {
  --tls_depth;
}

Phase current_phase() {
  return tls_phase;
}

PhaseGuard::PhaseGuard(Phase phase) : previous_(tls_phase) {
  tls_phase = phase;
}

PhaseGuard::~PhaseGuard() {
  tls_phase = previous_;
}

void set_hook(Hook hook) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_hook = hook ? std::make_shared<const Hook>(std::move(hook)) : nullptr;
  g_enabled.store(g_hook != nullptr, std::memory_order_release);
}

bool enabled() {
  return g_enabled.load(std::memory_order_relaxed);
}

void record(const Event& event) {
  if (tls_in_hook) {
    return;
  }
  std::shared_ptr<const Hook> hook;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    hook = g_hook;
  }
  if (!hook) {
    return;
  }
  tls_in_hook = true;
  try {
    (*hook)(event);
  } catch (...) {
    tls_in_hook = false;
    throw;
  }
  tls_in_hook = false;
}

} // namespace ditto::trace
