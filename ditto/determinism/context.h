#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Sets the mode for its scope and restores the previous mode and
// warn_only on exit, also when an exception leaves the scope.
class DITTO_API DeterministicGuard {
 public:
  DeterministicGuard(bool mode, bool warn_only = false);
  ~DeterministicGuard();
  DeterministicGuard(const DeterministicGuard&) = delete;
  DeterministicGuard& operator=(const DeterministicGuard&) = delete;

 private:
  bool mode_;
  bool warn_only_;
};

// Called by an op that is about to run a nondeterministic implementation,
// before it writes anything. With the mode on it throws
// NondeterministicError, or with warn_only reports a warning through the
// warning handler and returns; with the mode off it does nothing. See Note
// [Writing Nondeterministic Operations] in docs/determinism.md.
DITTO_API void alert_not_deterministic(std::string_view op);

namespace determinism {

// The alert with an op's own texts (alert_not_deterministic uses the
// standard ones): with the mode on, throws NondeterministicError(error_text),
// or with warn_only passes warning_text to the warning handler; with the
// mode off does nothing.
DITTO_API void alert(
    std::string_view op,
    const std::string& error_text,
    const std::string& warning_text);

// Passes message to the warning handler, whatever the mode (advice such as
// conv benchmarking under deterministic mode, or a rejected tuning cache).
DITTO_API void warn(std::string_view op, const std::string& message);

// Receives warn-only alerts. The default writes each op's warning to stderr
// once per process.
using WarningHandler =
    std::function<void(std::string_view op, std::string_view message)>;
// Installs handler; an empty function restores the default.
DITTO_API void set_warning_handler(WarningHandler handler);

// What the registry knows about an op with a nondeterministic
// implementation: why, whether a deterministic one exists (used when the
// mode is on), and which dtypes are affected.
struct OpInfo {
  std::string name;
  std::string reason;
  bool has_deterministic_alternative = false;
  std::string dtypes = "floating";
  // The deterministic variant's time against the fast one's, where it was
  // measured (docs/benchmarks.md); empty if not.
  std::string cost;
};

// Registers an op (ditto's own at start-up, custom ops from user code).
// Declaring a name again replaces its entry.
DITTO_API void declare_nondeterministic(
    const std::string& name,
    const std::string& reason,
    bool has_deterministic_alternative = false,
    const std::string& dtypes = "floating");
// Records the measured cost of a registered op's deterministic variant
// (shown by `ditto ops`); ValueError if name is not registered.
DITTO_API void declare_cost(const std::string& name, const std::string& cost);
// The entry a traced op name belongs to: the entry of that name, else of
// the op whose backward it is ("embedding_backward" -> "embedding"), else
// the first entry named op + " (...)" or op + "_..." (the registry splits
// some ops by path: "matmul (split-K)", "conv2d_backward_weight").
DITTO_API std::optional<OpInfo> find_registered(std::string_view op);
// The same rules over a given list of entries (a traced program's registry).
DITTO_API std::optional<OpInfo> match_registered(
    std::string_view op,
    const std::vector<OpInfo>& entries);
// Every registered op, sorted by name.
DITTO_API std::vector<OpInfo> registered_ops();
// The registry as the markdown table of docs/determinism.md.
DITTO_API std::string registry_markdown();

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
// The settings this thread's ops see: the process-wide switches, or a
// PolicyGuard's.
DITTO_API Policy current_policy();

// Within its scope, this thread's ops see policy instead of the
// process-wide switches (the autograd engine runs each node's backward
// under the policy recorded with it). The switches themselves are
// unchanged, and other threads are unaffected.
class DITTO_API PolicyGuard {
 public:
  explicit PolicyGuard(const Policy& policy);
  ~PolicyGuard();
  PolicyGuard(const PolicyGuard&) = delete;
  PolicyGuard& operator=(const PolicyGuard&) = delete;

 private:
  Policy policy_;
  const Policy* previous_;
};

} // namespace determinism
} // namespace ditto
