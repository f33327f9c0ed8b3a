// ditto._C._trace: the op trace (ditto/trace/trace.h) for ditto.trace. The
// Python module wraps it: ditto.nn.Module.__call__ enters a ModuleGuard
// with the module's path, the same path and type the C++ nn::ForwardScope
// reports, so a Python program's trace reads like a C++ one's.

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "python/src/common.h"

namespace ditto::python {
namespace {

trace::Phase phase_from_name(std::string_view name) {
  for (trace::Phase p :
       {trace::Phase::kForward,
        trace::Phase::kBackward,
        trace::Phase::kOptimizer,
        trace::Phase::kEval,
        trace::Phase::kData}) {
    if (name == trace::phase_name(p)) {
      return p;
    }
  }
  throw ValueError(detail::str_cat(
      "[trace] unknown phase '",
      name,
      "' (forward, backward, optimizer, eval or data)"));
}

py::list tensor_list(const std::vector<Tensor>& ts) {
  py::list out;
  for (const Tensor& t : ts) {
    out.append(tensor_or_none(t));
  }
  return out;
}

// A Python hook held by the C++ trace (a process-wide static): it takes the
// GIL to run and to be dropped, and leaks its function when the interpreter
// is already gone (static destruction after Py_Finalize).
class PyHook {
 public:
  explicit PyHook(py::function fn) : fn_(new py::function(std::move(fn))) {}
  PyHook(const PyHook& other) {
    py::gil_scoped_acquire gil;
    fn_ = new py::function(*other.fn_);
  }
  PyHook& operator=(const PyHook&) = delete;
  ~PyHook() {
    if (Py_IsInitialized() != 0) {
      py::gil_scoped_acquire gil;
      delete fn_;
    }
  }

  void operator()(const trace::Event& e) const {
    if (Py_IsInitialized() == 0) {
      return;
    }
    py::gil_scoped_acquire gil;
    py::dict event;
    event["op"] = py::str(e.op.data(), e.op.size());
    event["phase"] = trace::phase_name(e.phase);
    event["inputs"] = tensor_list(e.inputs);
    event["outputs"] = tensor_list(e.outputs);
    (*fn_)(event);
  }

 private:
  py::function* fn_;
};

// `with` blocks over the C++ RAII guards: entered once, exited once, on
// the same thread (Module.__call__, ditto.trace).
struct ModuleScope {
  ModuleScope(std::string path, std::string type)
      : module(std::make_shared<const trace::ModuleInfo>(
            trace::ModuleInfo{std::move(path), std::move(type)})) {}
  trace::ModuleRef module;
  std::optional<trace::ModuleGuard> guard;
};

struct PhaseScope {
  explicit PhaseScope(std::string_view name) : phase(phase_from_name(name)) {}
  trace::Phase phase;
  std::optional<trace::PhaseGuard> guard;
};

struct SuppressScope {
  std::optional<trace::Suppress> guard;
};

} // namespace

void init_trace(py::module_& m) {
  py::module_ t = m.def_submodule("_trace", "ditto/trace/trace.h");
  t.def("start", &trace::start, py::arg("path"));
  t.def("stop", &trace::stop);
  t.def("active_path", &trace::active_path);
  t.def("enabled", &trace::enabled);
  t.def("set_hook", [](std::optional<py::function> fn) {
    if (fn) {
      trace::set_hook(PyHook(std::move(*fn)));
    } else {
      trace::set_hook(nullptr);
    }
  });
  t.def(
      "record_value",
      [](std::string_view name,
         std::string_view phase,
         const std::vector<Tensor>& values) {
        trace::record_value(name, phase_from_name(phase), values);
      },
      py::arg("name"),
      py::arg("phase"),
      py::arg("values"),
      ReleaseGil());
  t.def("current_phase", [] {
    return trace::phase_name(trace::current_phase());
  });
  t.def("current_step", &trace::current_step);
  t.def("set_step", &trace::set_step, py::arg("step"));
  t.def("advance_step", &trace::advance_step);
  t.def("current_module", []() -> py::object {
    const trace::ModuleRef& mod = trace::current_module();
    if (!mod) {
      return py::none();
    }
    return py::make_tuple(mod->path, mod->type);
  });

  py::class_<ModuleScope>(t, "ModuleGuard")
      .def(
          py::init<std::string, std::string>(),
          py::arg("path"),
          py::arg("type"))
      .def("__enter__", [](ModuleScope& s) { s.guard.emplace(s.module); })
      .def("__exit__", [](ModuleScope& s, py::args) { s.guard.reset(); });
  py::class_<PhaseScope>(t, "PhaseGuard")
      .def(py::init<std::string_view>(), py::arg("phase"))
      .def("__enter__", [](PhaseScope& s) { s.guard.emplace(s.phase); })
      .def("__exit__", [](PhaseScope& s, py::args) { s.guard.reset(); });
  py::class_<SuppressScope>(t, "Suppress")
      .def(py::init<>())
      .def("__enter__", [](SuppressScope& s) { s.guard.emplace(); })
      .def("__exit__", [](SuppressScope& s, py::args) { s.guard.reset(); });
}

} // namespace ditto::python
