#pragma once

// Op-level tracing: every top-level op (what the user called, and every
// backward node the autograd engine runs) reported with its place in the
// run (the enclosing module, the phase, the training step) and its
// outputs. Two consumers: a hook (a function of the user's), and the trace
// file that `ditto verify` compares (DITTO_TRACE=FILE, or start/stop). See
// docs/verify.md for the file format.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::trace {

// Where an op runs: data loading (a batch entering a training step, see
// record_value), a forward pass, a backward pass, an optimizer's update, or
// an evaluation pass (ditto::train).
enum class Phase { kForward, kBackward, kOptimizer, kEval, kData };
DITTO_API const char* phase_name(Phase phase);

// The module an op runs in: its dotted path from the root module
// ("features.3"; empty for the root itself) and its type ("Conv2d").
struct ModuleInfo {
  std::string path;
  std::string type;
};
using ModuleRef = std::shared_ptr<const ModuleInfo>;

// One op as the hook sees it: the op the user called (or the backward op
// the autograd engine ran, "mul_backward"), its inputs and its outputs.
// The vectors live only during the call.
struct Event {
  std::string_view op;
  Phase phase = Phase::kForward;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
};

// Called after every top-level op. Off by default; when off (no hook and
// no trace file) an op pays one relaxed atomic load.
using Hook = std::function<void(const Event& event)>;

// Installs hook (an empty function removes it).
DITTO_API void set_hook(Hook hook);
// A hook is installed or a trace file is being written.
DITTO_API bool enabled();

// Reports an op to the hook and the trace file; used by ditto's op frame,
// by the autograd engine and by custom ops.
DITTO_API void record(const Event& event);

// Reports named values that are not an op's outputs (the batch a training
// step starts from), as a record of op `name` in `phase`.
DITTO_API void record_value(
    std::string_view name,
    Phase phase,
    const std::vector<Tensor>& values);

// ---- the trace file

// Starts writing the trace of this process to path (JSON lines, written to
// a temporary beside it and renamed into place by stop(), so a trace file
// is always whole; a symlink is followed, a FIFO or character device is
// written in place). A trace already being written is stopped first.
// DITTO_TRACE=path in the environment starts one when the library loads;
// it stops when the process exits normally. A write that fails raises
// ValueError from the op being recorded and drops the trace; with
// DITTO_TRACE the process then exits with status 1 (Note [A trace that
// cannot be written]).
DITTO_API void start(const std::string& path);
// Finishes the file: its last line counts the records. A no-op when no
// trace is being written; ValueError naming the file when a write of the
// trace failed.
DITTO_API void stop();
// The path being written to, or empty.
DITTO_API std::string active_path();

// ---- context: module, step, phase

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
// while the autograd engine runs (it holds a PhaseGuard), optimizer while
// an optimizer's step runs, eval while ditto::train evaluates.
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

// The module this thread's ops run in (null outside every module). nn
// modules set it around forward; backward nodes keep the module their
// forward op ran in, and the engine sets it while they run.
DITTO_API const ModuleRef& current_module();
class DITTO_API ModuleGuard {
 public:
  explicit ModuleGuard(ModuleRef module);
  ~ModuleGuard();
  ModuleGuard(const ModuleGuard&) = delete;
  ModuleGuard& operator=(const ModuleGuard&) = delete;

 private:
  ModuleRef previous_;
};

// The training step ops are tagged with: the optimizer steps taken so far
// (every optimizer step advances it by one), unless the program sets it
// (ditto::train sets it to the step's index at each step).
DITTO_API int64_t current_step();
DITTO_API void set_step(int64_t step);
DITTO_API void advance_step();

// Ops this thread runs while a Suppress lives are not reported (data
// loading: per-sample transforms run on worker threads in any order).
class DITTO_API Suppress {
 public:
  Suppress();
  ~Suppress();
  Suppress(const Suppress&) = delete;
  Suppress& operator=(const Suppress&) = delete;

 private:
  bool previous_;
};

} // namespace ditto::trace
