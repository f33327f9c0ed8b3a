#include "ditto/determinism/context.h"

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "ditto/core/error.h"

namespace ditto {
namespace {
std::atomic<bool> g_mode{false};
std::atomic<bool> g_warn_only{false};
std::atomic<bool> g_fill{true};
// Set by a PolicyGuard (the autograd engine running a node): the settings
// this thread's ops see instead of the process-wide ones.
thread_local const determinism::Policy* tls_policy = nullptr;

bool mode_now() {
  return tls_policy ? tls_policy->deterministic : g_mode.load();
}
bool warn_only_now() {
  return tls_policy ? tls_policy->warn_only : g_warn_only.load();
}
bool fill_now() {
  return tls_policy ? tls_policy->fill_uninitialized_memory : g_fill.load();
}
} // namespace

void use_deterministic_algorithms(bool mode, bool warn_only) {
  g_mode.store(mode);
  g_warn_only.store(warn_only);
}

bool are_deterministic_algorithms_enabled() {
  return mode_now();
}

bool is_deterministic_algorithms_warn_only_enabled() {
  return warn_only_now();
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
  if (!mode_now()) {
    return 0;
  }
  return warn_only_now() ? 1 : 2;
}

DeterministicGuard::DeterministicGuard(bool mode, bool warn_only)
    : mode_(g_mode.load()), warn_only_(g_warn_only.load()) {
  use_deterministic_algorithms(mode, warn_only);
}

DeterministicGuard::~DeterministicGuard() {
  use_deterministic_algorithms(mode_, warn_only_);
}

namespace determinism {
namespace {
std::mutex g_warn_mu;
WarningHandler g_handler;
std::set<std::string, std::less<>> g_warned;

void default_warning(std::string_view op, std::string_view message) {
  std::lock_guard<std::mutex> lock(g_warn_mu);
  if (g_warned.find(op) != g_warned.end()) {
    return;
  }
  g_warned.emplace(op);
  std::fprintf(
      stderr, "ditto warning: %.*s\n", int(message.size()), message.data());
}

std::mutex g_registry_mu;
// Never destroyed: the trace that DITTO_TRACE started is finished during
// static destruction and writes the registry into its last line, whatever
// the order in which the two were constructed (in a unity build the
// registry came second, so was destroyed first).
std::map<std::string, OpInfo>& registry() {
  static auto* r = new std::map<std::string, OpInfo>();
  return *r;
}
} // namespace

void set_warning_handler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(g_warn_mu);
  g_handler = std::move(handler);
}

void declare_nondeterministic(
    const std::string& name,
    const std::string& reason,
    bool has_deterministic_alternative,
    const std::string& dtypes) {
  DITTO_CHECK(
      !name.empty(), ValueError, "declare_nondeterministic", "empty op name");
  DITTO_CHECK(
      !reason.empty(),
      ValueError,
      "declare_nondeterministic",
      "op '",
      name,
      "' needs a reason");
  std::lock_guard<std::mutex> lock(g_registry_mu);
  registry()[name] =
      OpInfo{name, reason, has_deterministic_alternative, dtypes, {}};
}

void declare_cost(const std::string& name, const std::string& cost) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  auto it = registry().find(name);
  DITTO_CHECK(
      it != registry().end(),
      ValueError,
      "declare_cost",
      "op '",
      name,
      "' is not registered");
  it->second.cost = cost;
}

std::optional<OpInfo> match_registered(
    std::string_view op,
    const std::vector<OpInfo>& entries) {
  auto exact = [&](std::string_view name) -> const OpInfo* {
    for (const OpInfo& e : entries) {
      if (e.name == name) {
        return &e;
      }
    }
    return nullptr;
  };
  if (const OpInfo* e = exact(op)) {
    return *e;
  }
  constexpr std::string_view kBackward = "_backward";
  if (op.size() > kBackward.size() && op.ends_with(kBackward)) {
    if (const OpInfo* e = exact(op.substr(0, op.size() - kBackward.size()))) {
      return *e;
    }
  }
  for (const OpInfo& e : entries) {
    const std::string_view n = e.name;
    if (n.size() > op.size() && n.starts_with(op) &&
        (n[op.size()] == ' ' || n[op.size()] == '_')) {
      return e;
    }
  }
  return std::nullopt;
}

std::optional<OpInfo> find_registered(std::string_view op) {
  return match_registered(op, registered_ops());
}

std::vector<OpInfo> registered_ops() {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  std::vector<OpInfo> out;
  for (auto& [name, info] : registry()) {
    out.push_back(info);
  }
  return out;
}

std::string registry_markdown() {
  std::string s =
      "| op | deterministic alternative | dtypes | why the fast variant is "
      "nondeterministic | cost of the deterministic variant |\n"
      "|---|---|---|---|---|\n";
  for (const OpInfo& op : registered_ops()) {
    s += "| `" + op.name + "` | " +
        (op.has_deterministic_alternative ? "yes" : "no (alerts)") + " | " +
        op.dtypes + " | " + op.reason + " | " +
        (op.cost.empty() ? "not measured" : op.cost) + " |\n";
  }
  return s;
}

} // namespace determinism

void alert_not_deterministic(std::string_view op) {
  if (!mode_now()) {
    return;
  }
  determinism::alert(
      op,
      detail::str_cat(
          op,
          " does not have a deterministic implementation, but you set "
          "'ditto::use_deterministic_algorithms(true)'. You can turn off "
          "determinism just for this operation (ditto::DeterministicGuard), "
          "or you can use the 'warn_only=true' option, if that's acceptable "
          "for your application."),
      detail::str_cat(
          op,
          " does not have a deterministic implementation, but you set "
          "'ditto::use_deterministic_algorithms(true, /*warn_only=*/true)'."));
}

namespace determinism {

void warn(std::string_view op, const std::string& message) {
  WarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(g_warn_mu);
    handler = g_handler;
  }
  if (handler) {
    handler(op, message);
  } else {
    default_warning(op, message);
  }
}

void alert(
    std::string_view op,
    const std::string& error_text,
    const std::string& warning_text) {
  if (!mode_now()) {
    return;
  }
  if (!warn_only_now()) {
    throw NondeterministicError(error_text);
  }
  warn(op, warning_text);
}

} // namespace determinism

namespace determinism {

bool fill_uninitialized_memory() {
  return fill_now();
}

void set_fill_uninitialized_memory(bool fill) {
  g_fill.store(fill);
}

Policy current_policy() {
  return Policy{mode_now(), warn_only_now(), fill_now()};
}

PolicyGuard::PolicyGuard(const Policy& policy)
    : policy_(policy), previous_(tls_policy) {
  tls_policy = &policy_;
}

PolicyGuard::~PolicyGuard() {
  tls_policy = previous_;
}

} // namespace determinism
} // namespace ditto
