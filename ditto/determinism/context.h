#pragma once

#include <string_view>

#include "ditto/core/api.h"

namespace ditto {

// PyTorch's switches, with PyTorch's names and defaults. mode and warn_only
// are written together: use_deterministic_algorithms(false, true) leaves
// warn_only set while the mode is off, as in PyTorch.
DITTO_API void use_deterministic_algorithms(bool mode, bool warn_only = false);
DITTO_API bool are_deterministic_algorithms_enabled();
DITTO_API bool is_deterministic_algorithms_warn_only_enabled();
// "default" or 0: mode off; "warn" or 1: on with warn_only; "error" or 2: on.
DITTO_API void set_deterministic_debug_mode(std::string_view mode);
DITTO_API void set_deterministic_debug_mode(int mode);
DITTO_API int get_deterministic_debug_mode();

namespace determinism {

// Whether empty(), empty_like(), empty_strided() fill their memory (NaN for
// floating types, the maximum for integers, true for bool) while the
// deterministic mode is on. Default true (PyTorch 2.1+).
DITTO_API bool fill_uninitialized_memory();
DITTO_API void set_fill_uninitialized_memory(bool fill);

// The settings in force, as one value an op (or a recorded autograd node)
// can keep.
struct Policy {
  bool deterministic = false;
  bool warn_only = false;
  bool fill_uninitialized_memory = true;
  bool operator==(const Policy&) const = default;
};
DITTO_API Policy current_policy();

} // namespace determinism
} // namespace ditto
