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

} // namespace ditto::trace
