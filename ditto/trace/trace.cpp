#include "ditto/trace/trace.h"

#include <atomic>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>

#include "ditto/core/env.h"
#include "ditto/core/error.h"
#include "ditto/core/file_io.h"
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

// The ops whose outputs are uninitialized memory (unless the determinism
// policy fills it): their values are whatever the allocator returned, so
// the trace shows only shape and dtype, with fingerprint "uninitialized"
// and no sample. A Python layer starts from them (torch's pattern:
// Parameter(empty(...)) then an init_ function), and two runs would
// otherwise part at the first layer built.
bool uninitialized_output(std::string_view op) {
  return op == "empty" || op == "empty_strided";
}

// The sample (and with whole, every value) of a strided tensor, then the
// record's closing brace.
void append_values(std::string& out, const Tensor& t, bool whole) {
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

void append_tensor(
    std::string& out,
    const Tensor& t,
    bool whole,
    bool uninitialized) {
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
  if (uninitialized) {
    out += "\",\"fp\":\"uninitialized\",\"sample\":[]}";
    return;
  }
  char fp[24];
  std::snprintf(fp, sizeof fp, "%016" PRIx64, detail::chunked_fingerprint(t));
  out += "\",\"fp\":\"";
  out += fp;
  if (t.impl()->is_sparse()) {
    // The samples and values of a sparse tensor are its stored values'.
    out += "\",\"layout\":\"sparse_coo";
    const Tensor v = t.impl()->sparse()->values;
    out += "\",\"sample\":[";
    append_values(out, v, whole);
    return;
  }
  out += "\",\"sample\":[";
  append_values(out, t, whole);
}

// Writes the trace file: one JSON line per record, into a temporary that
// stop() renames into place (a FIFO or a character device is written in
// place: Note [What an atomic write may replace]). The first write that
// fails throws from the op that wrote it and the trace is dead from then
// on: finish() throws again, so a trace that cannot be written never ends
// in a success (Note [A trace that cannot be written]).
class Writer {
 public:
  explicit Writer(std::string path) : path_(std::move(path)) {
    const char* op = "trace::start";
    // DITTO_TRACE_FULL=N: record N's outputs are written whole (what
    // `ditto verify` asks for to measure the first divergence exactly).
    whole_ = detail::env_int("DITTO_TRACE_FULL", 0, INT64_MAX).value_or(-1);
    const detail::WriteTarget target = detail::resolve_write_target(path_, op);
    if (target.in_place) {
      const int fd = detail::open_in_place(target, op);
      file_ = ::fdopen(fd, "wb");
      if (file_ == nullptr) {
        ::close(fd);
      }
    } else {
      target_ = target.path;
      tmp_ = target_ + ".tmp." + std::to_string(::getpid());
      file_ = std::fopen(tmp_.c_str(), "wb");
    }
    DITTO_CHECK(
        file_ != nullptr,
        ValueError,
        op,
        "cannot open '",
        tmp_.empty() ? path_ : tmp_,
        "' for writing: ",
        std::strerror(errno));
    std::string header = "{\"ditto_trace\":1,\"started\":";
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    append_json_string(header, when);
    header += "}\n";
    try {
      put(header);
    } catch (...) {
      discard();
      throw;
    }
  }
  ~Writer() {
    discard();
  }

  void write(
      std::string_view op,
      Phase phase,
      const std::vector<Tensor>& outputs) {
    std::string line;
    line.reserve(256);
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr) {
      return; // failed before: the error was raised then
    }
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
    const bool uninitialized = uninitialized_output(op) &&
        !(determinism::current_policy().deterministic &&
          determinism::fill_uninitialized_memory());
    for (size_t k = 0; k < outputs.size(); ++k) {
      line += k ? "," : "";
      append_tensor(line, outputs[k], count_ == whole_, uninitialized);
    }
    line += "]}\n";
    put(line);
    ++count_;
  }

  // Closes the file and renames it into place; ValueError if any write of
  // the trace failed.
  void finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr) {
      if (!error_.empty()) {
        throw ValueError(error_);
      }
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
    put(tail);
    // A device or FIFO written in place is not synced (fsync has no meaning
    // there); a file is synced before it replaces the old one.
    if (std::fflush(file_) != 0 ||
        (tmp_.empty() ? false : ::fsync(fileno(file_)) != 0)) {
      fail(errno);
    }
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) {
      fail(errno);
    }
    if (!tmp_.empty()) {
      std::error_code ec;
      std::filesystem::rename(tmp_, target_, ec);
      if (ec) {
        fail(ec.value());
      }
      tmp_.clear();
    }
  }

  const std::string& path() const {
    return path_;
  }

 private:
  // Writes text (mu_ held, file_ open); on failure closes everything and
  // throws.
  void put(const std::string& text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
      fail(errno);
    }
  }

  [[noreturn]] void fail(int err) {
    error_ = detail::str_cat(
        "[trace] cannot write the trace '",
        path_,
        "': ",
        err != 0 ? std::strerror(err) : "write error",
        " (the trace is incomplete and was not kept)");
    discard();
    throw ValueError(error_);
  }

  // Closes the file without finishing it; removes the temporary.
  void discard() {
    if (file_ != nullptr) {
      std::fclose(file_);
      file_ = nullptr;
    }
    if (!tmp_.empty()) {
      std::remove(tmp_.c_str());
      tmp_.clear();
    }
  }

  std::mutex mu_;
  std::string path_, target_, tmp_, error_;
  std::FILE* file_ = nullptr;
  int64_t count_ = 0;
  int64_t whole_ = -1;
};

// DITTO_TRACE=FILE starts a trace when the library loads; it is finished
// when the process exits normally (static destruction).
// Note [A trace that cannot be written]
// A trace is evidence: `ditto verify` and users compare two of them. One
// that lost records must not look like a finished run. So the first write
// that fails (a full disk, /dev/full, an I/O error) raises ValueError from
// the op that was being recorded, naming the file, and the trace is dropped
// (its temporary removed, the previous file at the path untouched); stop()
// raises the same error again. For DITTO_TRACE, which no program code
// stops, the error is printed and the process exits with status 1 when the
// library unloads, whatever main returned.
struct EnvTrace {
  EnvTrace() {
    try {
      if (auto path = detail::env_text("DITTO_TRACE")) {
        start(*path);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ditto: DITTO_TRACE: %s\n", e.what());
      failed = true;
    }
  }
  ~EnvTrace() {
    try {
      stop();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ditto: DITTO_TRACE: %s\n", e.what());
      failed = true;
    }
    if (failed) {
      std::fflush(nullptr);
      std::_Exit(EXIT_FAILURE);
    }
  }
  bool failed = false;
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
