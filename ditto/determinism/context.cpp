#include "ditto/determinism/context.h"

#include <atomic>
#include <string>

#include "ditto/core/error.h"

namespace ditto {
namespace {
std::atomic<bool> g_mode{false};
std::atomic<bool> g_warn_only{false};
std::atomic<bool> g_fill{true};
} // namespace

void use_deterministic_algorithms(bool mode, bool warn_only) {
  g_mode.store(mode);
  g_warn_only.store(warn_only);
}

bool are_deterministic_algorithms_enabled() {
  return g_mode.load();
}

bool is_deterministic_algorithms_warn_only_enabled() {
  return g_warn_only.load();
}

void set_deterministic_debug_mode(int mode) {
  DITTO_CHECK(
      mode >= 0 && mode <= 2,
      ValueError,
      "set_deterministic_debug_mode",
      "invalid value of debug_mode, expected 0, 1, or 2, but got ",
      mode);
  use_deterministic_algorithms(mode != 0, mode == 1);
}

void set_deterministic_debug_mode(std::string_view mode) {
  if (mode == "default") {
    set_deterministic_debug_mode(0);
  } else if (mode == "warn") {
    set_deterministic_debug_mode(1);
  } else if (mode == "error") {
    set_deterministic_debug_mode(2);
  } else {
    detail::throw_error<ValueError>(
        "set_deterministic_debug_mode",
        "invalid value of debug_mode, expected one of `default`, `warn`, "
        "`error`, but got ",
        mode);
  }
}

int get_deterministic_debug_mode() {
  if (!g_mode.load()) {
    return 0;
  }
  return g_warn_only.load() ? 1 : 2;
}

namespace determinism {

bool fill_uninitialized_memory() {
  return g_fill.load();
}

void set_fill_uninitialized_memory(bool fill) {
  g_fill.store(fill);
}

Policy current_policy() {
  return Policy{g_mode.load(), g_warn_only.load(), g_fill.load()};
}

} // namespace determinism
} // namespace ditto
