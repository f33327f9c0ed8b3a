#include "ditto/ops/record.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/determinism/context.h"
#include "ditto/device/device.h"
#include "ditto/ops/detail/declaration.h"

namespace ditto {

// Note [Op records]
// ~~~~~~~~~~~~~~~~~
// Every op a user can call has one OpRecord, registered beside its forward
// (ops/<file>_records.cpp) while the library loads. The record is the one
// list of ops: the op suite runs every record's samples through thread
// counts, CPU capabilities, gradcheck, the trace, the graph and bad
// inputs; the fingerprint sweep and its committed golden run every record;
// `ditto ops` and docs/determinism.md print the records; the determinism
// registry holds their nondeterministic paths. OpScope checks, for every op
// called from outside an op, that its name has a record (a hash lookup
// under a shared lock: 22 ns, against 1.1 us for an add of 4 elements, on
// 2 vCPUs of an AMD EPYC), so an op cannot be added without one: its first
// call raises, and the whole test suite runs with the check on.

// Note [One declaration per op]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An op declared in ditto/ops/*.ops.toml (docs/ops.md) is written once: its
// schema in torch's syntax, its forms (function, method, in place), its
// kernel or its decomposition, its derivative, and its record's fields
// (dtypes, the samples' domain). tools/opgen.py, run by CMake while it
// configures, writes from them the C++ functions and Tensor methods, the
// Python bindings, the records, the CPU table's unary kernel list and the
// derivatives (<build>/generated). Ops not yet declared keep their
// hand-written surfaces until their family moves.

namespace {

struct Registry {
  std::shared_mutex mu;
  std::map<std::string, std::unique_ptr<const OpRecord>, std::less<>> records;
  std::unordered_map<std::string_view, const OpRecord*> by_name;
};

Registry& registry() {
  static Registry* r = new Registry(); // outlives every static destructor
  return *r;
}

void check_record(const OpRecord& r) {
  const char* op = "register_op";
  DITTO_CHECK(!r.name.empty(), ValueError, op, "a record needs a name");
  DITTO_CHECK(
      !r.family.empty(), ValueError, op, "op '", r.name, "' needs a family");
  DITTO_CHECK(
      !r.callables.empty(),
      ValueError,
      op,
      "op '",
      r.name,
      "' needs its public callables");
  DITTO_CHECK(
      static_cast<bool>(r.samples),
      ValueError,
      op,
      "op '",
      r.name,
      "' needs a sample generator");
  DITTO_CHECK(
      !r.dtypes.empty(), ValueError, op, "op '", r.name, "' needs dtypes");
  if (r.nondeterministic.empty()) {
    DITTO_CHECK(
        !r.deterministic_because.empty(),
        ValueError,
        op,
        "op '",
        r.name,
        "' is deterministic on every path: say why (deterministic_because)");
  }
  for (const NondeterministicPath& p : r.nondeterministic) {
    DITTO_CHECK(
        !p.entry.empty() && !p.reason.empty(),
        ValueError,
        op,
        "op '",
        r.name,
        "': a nondeterministic path needs an entry name and a reason");
  }
}

} // namespace

const char* determinism_name(Determinism d) {
  switch (d) {
    case Determinism::kAlways:
      return "always";
    case Determinism::kVariants:
      return "variants";
    case Determinism::kAlert:
      return "alert";
  }
  return "?";
}

Determinism OpRecord::determinism() const {
  if (nondeterministic.empty()) {
    return Determinism::kAlways;
  }
  for (const NondeterministicPath& p : nondeterministic) {
    if (!p.has_deterministic_variant) {
      return Determinism::kAlert;
    }
  }
  return Determinism::kVariants;
}

namespace {

thread_local std::vector<DeviceType> tls_scope_devices;

} // namespace

namespace detail {

DevicesScope::DevicesScope(std::vector<DeviceType> devices)
    : previous_(std::move(tls_scope_devices)) {
  tls_scope_devices = std::move(devices);
}

DevicesScope::~DevicesScope() {
  tls_scope_devices = std::move(previous_);
}

} // namespace detail

// Note [Device kernels are declared]
// Which ops run on a device beside the CPU is said where each op is
// declared, never in a list of the device's: a declared op's devices come
// from its declaration (ditto/ops/**/*.ops.toml: a shader code, or
// `devices` for a body or a decomposition; generated into
// detail::declared_devices()), an op not declared yet says them in its
// record (OpRecord::devices, or a DevicesScope around its registration).
// OpScope admits a device tensor only into an op whose record names the
// device (check_devices), and device_ops() is read from the records.
void register_op(OpRecord record) {
  if (record.devices.empty()) {
    record.devices = tls_scope_devices;
  }
  for (const auto& [name, device] : detail::declared_devices()) {
    if (name == record.name &&
        std::find(record.devices.begin(), record.devices.end(), device) ==
            record.devices.end()) {
      record.devices.push_back(device);
    }
  }
  check_record(record);
  Registry& reg = registry();
  const OpRecord* r = nullptr;
  {
    std::unique_lock lock(reg.mu);
    DITTO_CHECK(
        reg.records.find(record.name) == reg.records.end(),
        ValueError,
        "register_op",
        "op '",
        record.name,
        "' already has a record");
    auto owned = std::make_unique<const OpRecord>(std::move(record));
    r = owned.get();
    reg.records.emplace(r->name, std::move(owned));
    reg.by_name.emplace(r->name, r);
  }
  if (!r->grad_fn.empty()) {
    detail::declare_grad_fn_name(r->name, r->grad_fn);
  }
  // The determinism registry (alerts, traces, `ditto verify`) holds the
  // nondeterministic paths.
  for (const NondeterministicPath& p : r->nondeterministic) {
    determinism::declare_nondeterministic(
        p.entry, p.reason, p.has_deterministic_variant, p.dtypes);
    if (!p.cost.empty()) {
      determinism::declare_cost(p.entry, p.cost);
    }
  }
}

std::vector<const OpRecord*> op_records() {
  Registry& reg = registry();
  std::shared_lock lock(reg.mu);
  std::vector<const OpRecord*> out;
  out.reserve(reg.records.size());
  for (const auto& [name, r] : reg.records) {
    out.push_back(r.get());
  }
  return out;
}

const OpRecord* find_op_record(std::string_view name) {
  Registry& reg = registry();
  std::shared_lock lock(reg.mu);
  auto it = reg.by_name.find(name);
  return it == reg.by_name.end() ? nullptr : it->second;
}

std::string op_records_markdown() {
  std::string md =
      "| op | family | determinism | dtypes | why |\n"
      "|---|---|---|---|---|\n";
  for (const OpRecord* r : op_records()) {
    std::string dtypes;
    for (Dtype dt : r->dtypes) {
      dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype_name(dt));
    }
    std::string why = r->deterministic_because;
    for (const NondeterministicPath& p : r->nondeterministic) {
      why += (why.empty() ? "" : "; ") + std::string("`") + p.entry +
          "`: see the registry above";
    }
    md += "| `" + r->name + "` | " + r->family + " | " +
        determinism_name(r->determinism()) + " | " + dtypes + " | " + why +
        " |\n";
  }
  return md;
}

namespace detail {

RecordsRegistrar::RecordsRegistrar(void (*fn)()) {
  fn();
}

void require_op_record(const char* op) {
  if (find_op_record(op) == nullptr) {
    throw InternalError(str_cat(
        "[",
        op,
        "] this op has no record: every public op registers one beside "
        "its forward (Note [Op records] in ditto/ops/record.cpp)"));
  }
}

} // namespace detail

// Here, not in device/: the lists are the op registry's (device/ sits
// below ops/ and includes none of it; Note [Device kernels are declared]).
bool has_device_kernel(std::string_view op, DeviceType type) {
  if (type == DeviceType::CPU) {
    return true;
  }
  const OpRecord* r = find_op_record(op);
  return r != nullptr &&
      std::find(r->devices.begin(), r->devices.end(), type) != r->devices.end();
}

std::vector<std::string> device_ops(DeviceType type) {
  std::vector<std::string> out;
  for (const OpRecord* r : op_records()) {
    if (type == DeviceType::CPU ||
        std::find(r->devices.begin(), r->devices.end(), type) !=
            r->devices.end()) {
      out.push_back(r->name);
    }
  }
  return out;
}

} // namespace ditto
