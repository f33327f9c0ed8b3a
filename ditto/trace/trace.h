#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::trace {

enum class Phase { kForward, kBackward };

// One op as the hook sees it: the op the user called (or the backward op
// the autograd engine ran, "mul_backward"), its inputs and its outputs.
// The vectors live only during the call.
struct Event {
  std::string_view op;
  Phase phase = Phase::kForward;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
};

// Called after every top-level op. Off by default; when off an op pays one
// relaxed atomic load.
using Hook = std::function<void(const Event& event)>;

// Installs hook (an empty function removes it).
DITTO_API void set_hook(Hook hook);
DITTO_API bool enabled();

// Reports an op to the hook; used by ditto's op frame and by custom ops.
DITTO_API void record(const Event& event);

// One op's place in this thread's nesting of ops: only outermost ops are
// reported (what the user called, not the ops it calls). Every op frame
// holds one; the autograd engine holds one per backward node.
class DITTO_API Frame {
 public:
  Frame();
  ~Frame();
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  bool outermost() const {
    return outermost_;
  }

 private:
  bool outermost_;
};

// The phase this thread's ops are reported with: forward, or backward
// while the autograd engine runs (it holds a PhaseGuard).
DITTO_API Phase current_phase();
class DITTO_API PhaseGuard {
 public:
  explicit PhaseGuard(Phase phase);
  ~PhaseGuard();
  PhaseGuard(const PhaseGuard&) = delete;
  PhaseGuard& operator=(const PhaseGuard&) = delete;

 private:
  Phase previous_;
};

} // namespace ditto::trace
