#include "ditto/trace/trace.h"

#include <atomic>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>

#include "ditto/core/env.h"
#include "ditto/core/error.h"
#include "ditto/core/fingerprint_chunks.h"
#include "ditto/determinism/context.h"

namespace ditto::trace {
namespace {

// What a record shows of each output: this many values at evenly spaced
// logical positions (all of them for smaller tensors), enough for
// `ditto verify` to say how far two runs drifted apart op by op.
constexpr int64_t kSampleValues = 32;

class Writer;

std::atomic<bool> g_enabled{false};
std::mutex g_mu;
std::shared_ptr<const Hook> g_hook;
std::shared_ptr<Writer> g_writer;
std::atomic<int64_t> g_step{0};
// Ops run by the hook itself (fingerprinting, printing) are not reported.
thread_local bool tls_in_hook = false;
thread_local bool tls_suppressed = false;
thread_local int tls_depth = 0;
thread_local Phase tls_phase = Phase::kForward;

const ModuleRef& null_module() {
  static const ModuleRef kNone;
  return kNone;
}
thread_local ModuleRef tls_module;

void update_enabled_locked() {
  g_enabled.store(
      g_hook != nullptr || g_writer != nullptr, std::memory_order_release);
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

// A sampled value as JSON: the shortest decimal that reads back to the same
// double, or a string for the values JSON has no number for.
void append_value(std::string& out, double v, bool single) {
  if (std::isnan(v)) {
    out += "\"nan\"";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "\"inf\"" : "\"-inf\"";
    return;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
  out += buf;
}

// The element at logical (row-major) position pos.
double element_at(const Tensor& t, int64_t pos) {
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  int64_t offset = 0;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    const int64_t s = sizes[size_t(d)];
    offset += (pos % s) * strides[size_t(d)];
    pos /= s;
  }
  const char* base = static_cast<const char*>(t.raw_data());
  return dispatch_dtype(t.dtype(), "trace", [&]<typename T>() {
    return double(
        *reinterpret_cast<const T*>(base + offset * int64_t(sizeof(T))));
  });
}

void append_tensor(std::string& out, const Tensor& t, bool whole) {
  if (!t.defined()) {
    out += "null";
    return;
  }
  out += "{\"shape\":[";
  for (size_t d = 0; d < t.sizes().size(); ++d) {
    out += d ? "," : "";
    out += std::to_string(t.sizes()[d]);
  }
  out += "],\"dtype\":\"";
  out += dtype_name(t.dtype());
  char fp[24];
  std::snprintf(fp, sizeof fp, "%016" PRIx64, detail::chunked_fingerprint(t));
  out += "\",\"fp\":\"";
  out += fp;
  out += "\",\"sample\":[";
  const int64_t n = t.numel();
  const int64_t count = std::min(n, kSampleValues);
  const bool single = t.dtype() == kFloat32;
  for (int64_t j = 0; j < count; ++j) {
    // Evenly spaced, first and last included.
    const int64_t pos = count == 1 ? 0 : j * (n - 1) / (count - 1);
    out += j ? "," : "";
    append_value(out, element_at(t, pos), single);
  }
  out += "]";
  if (whole) {
    out += ",\"values\":[";
    for (int64_t pos = 0; pos < n; ++pos) {
      out += pos ? "," : "";
      append_value(out, element_at(t, pos), single);
    }
    out += "]";
  }
  out += "}";
}

// Writes the trace file: one JSON line per record, into a temporary that
// stop() renames into place.
class Writer {
 public:
  explicit Writer(std::string path) : path_(std::move(path)) {
    // DITTO_TRACE_FULL=N: record N's outputs are written whole (what
    // `ditto verify` asks for to measure the first divergence exactly).
    whole_ = detail::env_int("DITTO_TRACE_FULL", 0, INT64_MAX).value_or(-1);
    tmp_ = path_ + ".tmp." + std::to_string(::getpid());
    file_ = std::fopen(tmp_.c_str(), "wb");
    DITTO_CHECK(
        file_ != nullptr,
        ValueError,
        "trace::start",
        "cannot open '",
        tmp_,
        "' for writing");
    std::string header = "{\"ditto_trace\":1,\"started\":";
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    append_json_string(header, when);
    header += "}\n";
    std::fputs(header.c_str(), file_);
  }
  ~Writer() {
    if (file_ != nullptr) {
      std::fclose(file_);
      std::remove(tmp_.c_str());
    }
  }

  void write(
      std::string_view op,
      Phase phase,
      const std::vector<Tensor>& outputs) {
    std::string line;
    line.reserve(256);
    std::lock_guard<std::mutex> lock(mu_);
    line += "{\"i\":";
    line += std::to_string(count_);
    line += ",\"op\":";
    append_json_string(line, op);
    line += ",\"phase\":\"";
    line += phase_name(phase);
    line += "\",\"step\":";
    line += std::to_string(g_step.load(std::memory_order_relaxed));
    if (const ModuleRef& m = tls_module) {
      line += ",\"module\":";
      append_json_string(line, m->path);
      line += ",\"type\":";
      append_json_string(line, m->type);
    }
    line += ",\"out\":[";
    for (size_t k = 0; k < outputs.size(); ++k) {
      line += k ? "," : "";
      append_tensor(line, outputs[k], count_ == whole_);
    }
    line += "]}\n";
    std::fputs(line.c_str(), file_);
    ++count_;
  }

  // Closes the file and renames it into place.
  void finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr) {
      return;
    }
    // The program's registry of nondeterministic ops (custom ops
    // included), for `ditto verify` to name the entry of a diverging op.
    std::string tail = "{\"end\":true,\"records\":";
    tail += std::to_string(count_);
    tail += ",\"registry\":[";
    bool first = true;
    for (const determinism::OpInfo& op : determinism::registered_ops()) {
      tail += first ? "{\"op\":" : ",{\"op\":";
      first = false;
      append_json_string(tail, op.name);
      tail += ",\"reason\":";
      append_json_string(tail, op.reason);
      tail += op.has_deterministic_alternative ? ",\"alternative\":true"
                                               : ",\"alternative\":false";
      tail += ",\"dtypes\":";
      append_json_string(tail, op.dtypes);
      tail += ",\"cost\":";
      append_json_string(tail, op.cost);
      tail += "}";
    }
    tail += "]}\n";
    std::fputs(tail.c_str(), file_);
    const bool ok = std::fflush(file_) == 0 && ::fsync(fileno(file_)) == 0;
    std::fclose(file_);
    file_ = nullptr;
    std::error_code ec;
    if (ok) {
      std::filesystem::rename(tmp_, path_, ec);
    }
    if (!ok || ec) {
      std::remove(tmp_.c_str());
      std::fprintf(
          stderr, "ditto: could not write the trace '%s'\n", path_.c_str());
    }
  }

  const std::string& path() const {
    return path_;
  }

 private:
  std::mutex mu_;
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
  int64_t count_ = 0;
  int64_t whole_ = -1;
};

// DITTO_TRACE=FILE starts a trace when the library loads; it is finished
// when the process exits normally (static destruction).
struct EnvTrace {
  EnvTrace() {
    try {
      if (auto path = detail::env_text("DITTO_TRACE")) {
        start(*path);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ditto: DITTO_TRACE: %s\n", e.what());
    }
  }
  ~EnvTrace() {
    stop();
  }
};
const EnvTrace g_env_trace;

} // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kEval:
      return "eval";
    case Phase::kData:
      return "data";
  }
  return "?";
}

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

const ModuleRef& current_module() {
  return tls_module ? tls_module : null_module();
}

ModuleGuard::ModuleGuard(ModuleRef module) : previous_(std::move(tls_module)) {
  tls_module = std::move(module);
}

ModuleGuard::~ModuleGuard() {
  tls_module = std::move(previous_);
}

int64_t current_step() {
  return g_step.load(std::memory_order_relaxed);
}

void set_step(int64_t step) {
  g_step.store(step, std::memory_order_relaxed);
}

void advance_step() {
  g_step.fetch_add(1, std::memory_order_relaxed);
}

Suppress::Suppress() : previous_(tls_suppressed) {
  tls_suppressed = true;
}

Suppress::~Suppress() {
  tls_suppressed = previous_;
}

void set_hook(Hook hook) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_hook = hook ? std::make_shared<const Hook>(std::move(hook)) : nullptr;
  update_enabled_locked();
}

bool enabled() {
  return g_enabled.load(std::memory_order_relaxed);
}

void record(const Event& event) {
  if (tls_in_hook || tls_suppressed) {
    return;
  }
  std::shared_ptr<const Hook> hook;
  std::shared_ptr<Writer> writer;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    hook = g_hook;
    writer = g_writer;
  }
  if (!hook && !writer) {
    return;
  }
  struct InHook {
    InHook() {
      tls_in_hook = true;
    }
    ~InHook() {
      tls_in_hook = false;
    }
  } in_hook;
  if (writer) {
    writer->write(event.op, event.phase, event.outputs);
  }
  if (hook) {
    (*hook)(event);
  }
}

void record_value(
    std::string_view name,
    Phase phase,
    const std::vector<Tensor>& values) {
  if (!enabled()) {
    return;
  }
  static const std::vector<Tensor> kNoInputs;
  record({name, phase, kNoInputs, values});
}

void start(const std::string& path) {
  DITTO_CHECK(!path.empty(), ValueError, "trace::start", "empty path");
  auto writer = std::make_shared<Writer>(path);
  std::shared_ptr<Writer> old;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    old = std::move(g_writer);
    g_writer = std::move(writer);
    update_enabled_locked();
  }
  if (old) {
    old->finish();
  }
}

void stop() {
  std::shared_ptr<Writer> old;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    old = std::move(g_writer);
    g_writer = nullptr;
    update_enabled_locked();
  }
  if (old) {
    old->finish();
  }
}

std::string active_path() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_writer ? g_writer->path() : std::string();
}

} // namespace ditto::trace
