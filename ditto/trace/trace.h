#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::trace {

// Called after every public op with the op's name and its outputs. Off by
// default; when off an op pays one relaxed atomic load.
using Hook =
    std::function<void(std::string_view op, const std::vector<Tensor>& outs)>;

// Installs hook (an empty function removes it).
DITTO_API void set_hook(Hook hook);
DITTO_API bool enabled();

// Reports an op to the hook; used by ditto's ops and by custom ops.
DITTO_API void record(std::string_view op, const std::vector<Tensor>& outs);

} // namespace ditto::trace
