// The extension module ditto._C: the conversions every unit shares, the
// error mapping, dtypes, grad mode, the determinism switches, the op
// records; the other units bind tensors, ops and random numbers.

#include <Python.h>

#include <cstdlib>
#include <cstring>

#include "python/src/common.h"

namespace pybind11::detail {

bool type_caster<ditto::Scalar>::load(handle src, bool convert) {
  PyObject* o = src.ptr();
  if (PyBool_Check(o)) {
    value = ditto::Scalar(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
      PyErr_Clear();
      return false;
    }
    value = ditto::Scalar(int64_t(v));
    return true;
  }
  if (PyFloat_Check(o)) {
    value = ditto::Scalar(PyFloat_AsDouble(o));
    return true;
  }
  if (!convert) {
    return false;
  }
  // NumPy scalars (np.int64 has __index__, np.float32 __float__) and
  // one-element tensors.
  if (PyIndex_Check(o)) {
    object i = reinterpret_steal<object>(PyNumber_Index(o));
    if (!i) {
      PyErr_Clear();
      return false;
    }
    return load(i, false);
  }
  if (hasattr(src, "__float__")) {
    object f = reinterpret_steal<object>(PyNumber_Float(o));
    if (!f) {
      PyErr_Clear();
      return false;
    }
    return load(f, false);
  }
  return false;
}

handle type_caster<ditto::Scalar>::cast(
    const ditto::Scalar& s,
    return_value_policy,
    handle) {
  if (s.is_bool()) {
    return bool_(s.to<bool>()).release();
  }
  if (s.is_integral()) {
    return int_(s.to<int64_t>()).release();
  }
  return float_(s.to<double>()).release();
}

bool type_caster<std::vector<int64_t>>::load(handle src, bool) {
  PyObject* o = src.ptr();
  auto load_int = [](PyObject* item, int64_t& out) {
    if (PyBool_Check(item) || !PyIndex_Check(item)) {
      return false;
    }
    out = PyLong_AsLongLong(item);
    if (out == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return true;
  };
  value.clear();
  int64_t v = 0;
  if (load_int(o, v)) {
    value.push_back(v);
    return true;
  }
  if (!PyTuple_Check(o) && !PyList_Check(o)) {
    return false;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  value.reserve(size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!load_int(items[i], v)) {
      return false;
    }
    value.push_back(v);
  }
  return true;
}

handle type_caster<std::vector<int64_t>>::cast(
    const std::vector<int64_t>& v,
    return_value_policy,
    handle) {
  tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    t[i] = int_(v[i]);
  }
  return t.release();
}

} // namespace pybind11::detail

namespace ditto::python {

py::object tensor_or_none(const Tensor& t) {
  return t.defined() ? py::cast(t) : py::none();
}

Shape shape_from_args(const py::args& args, const char* op) {
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) {
    try {
      return args[0].cast<Shape>();
    } catch (const py::cast_error&) {
      throw TypeError(detail::str_cat(
          "[",
          op,
          "] expected a sequence of ints for the size, got ",
          std::string(py::str(py::type::of(args[0]).attr("__name__")))));
    }
  }
  Shape s;
  s.reserve(args.size());
  for (py::handle a : args) {
    if (PyBool_Check(a.ptr()) || !PyIndex_Check(a.ptr())) {
      throw TypeError(detail::str_cat(
          "[",
          op,
          "] expected ints for the size, got ",
          std::string(py::str(py::type::of(a).attr("__name__")))));
    }
    s.push_back(a.cast<int64_t>());
  }
  return s;
}

Tensor as_tensor(py::handle obj, std::optional<Dtype> dtype) {
  if (py::isinstance<Tensor>(obj)) {
    Tensor t = obj.cast<Tensor>();
    return dtype ? t.to(*dtype) : t;
  }
  py::object ditto_mod = py::module_::import("ditto");
  py::object d = dtype ? py::cast(*dtype) : py::none();
  return ditto_mod.attr("tensor")(obj, py::arg("dtype") = d).cast<Tensor>();
}

void init_dtype(py::module_& m) {
  py::enum_<Dtype> dtype(m, "dtype");
#define DITTO_PY_DTYPE(type, name, code) \
  dtype.value(std::string(dtype_name(Dtype::name)).c_str(), Dtype::name);
  DITTO_FORALL_ALL_DTYPES(DITTO_PY_DTYPE)
#undef DITTO_PY_DTYPE
  // Replaces enum_'s own repr (a def would only add an overload after it).
  py::cpp_function name(
      [](Dtype d) { return "ditto." + std::string(dtype_name(d)); },
      py::is_method(dtype));
  dtype.attr("__repr__") = name;
  dtype.attr("__str__") = name;
  dtype.def_property_readonly(
      "is_floating_point", [](Dtype d) { return is_floating(d); });
  dtype.def_property_readonly(
      "itemsize", [](Dtype d) { return element_size(d); });
  // Pickled by name, as torch's: the global ditto._C.<name>, the one
  // object of that dtype (common.h's caster).
  dtype.def("__reduce__", [](Dtype d) { return std::string(dtype_name(d)); });
#define DITTO_PY_DTYPE_ATTR(type, name, code) \
  m.attr(std::string(dtype_name(Dtype::name)).c_str()) = Dtype::name;
  DITTO_FORALL_ALL_DTYPES(DITTO_PY_DTYPE_ATTR)
#undef DITTO_PY_DTYPE_ATTR
  // PyTorch's other names for the same dtypes.
  m.attr("float") = kFloat32;
  m.attr("double") = kFloat64;
  m.attr("long") = kInt64;
  m.attr("int") = kInt32;
  m.attr("half") = kFloat16;
  m.attr("short") = kInt16;
  m.def("promote_types", &promote_types, py::arg("type1"), py::arg("type2"));
}

namespace {

// Each ditto error as the Python class a PyTorch user catches: torch raises
// ValueError, TypeError, IndexError and KeyError where ditto does, and
// RuntimeError for the determinism alert and the rest.
void translate_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const data::Interrupted& e) {
      // Ctrl-C, or a KeyboardInterrupt in a dataset: the loader passed it.
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const KeyError& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const NotImplementedError& e) {
      // An op without a kernel on a device: torch's NotImplementedError.
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

// warn_only alerts become Python UserWarnings (as torch's do), so that
// warnings.catch_warnings and -W error see them.
void route_warnings() {
  determinism::set_warning_handler(
      [](std::string_view op, std::string_view message) {
        if (!Py_IsInitialized()) {
          return;
        }
        py::gil_scoped_acquire gil;
        std::string text = "[";
        text.append(op).append("] ").append(message);
        if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) {
          PyErr_Clear(); // a warnings filter of "error" cannot stop the op
        }
      });
}

void init_determinism(py::module_& m) {
  m.def(
      "use_deterministic_algorithms",
      &use_deterministic_algorithms,
      py::arg("mode"),
      py::kw_only(),
      py::arg("warn_only") = false);
  m.def(
      "are_deterministic_algorithms_enabled",
      &are_deterministic_algorithms_enabled);
  m.def(
      "is_deterministic_algorithms_warn_only_enabled",
      &is_deterministic_algorithms_warn_only_enabled);
  m.def(
      "set_deterministic_debug_mode",
      py::overload_cast<int>(&set_deterministic_debug_mode),
      py::arg("debug_mode"));
  m.def(
      "set_deterministic_debug_mode",
      py::overload_cast<std::string_view>(&set_deterministic_debug_mode),
      py::arg("debug_mode"));
  m.def("get_deterministic_debug_mode", &get_deterministic_debug_mode);
  m.def(
      "_alert_not_deterministic",
      [](const std::string& op) { alert_not_deterministic(op); },
      py::arg("op"));
  m.def("_fill_uninitialized_memory", &determinism::fill_uninitialized_memory);
  m.def(
      "_set_fill_uninitialized_memory",
      &determinism::set_fill_uninitialized_memory);
  m.def("_conv_benchmark", py::overload_cast<>(&backends::conv::benchmark));
  m.def(
      "_set_conv_benchmark",
      py::overload_cast<bool>(&backends::conv::benchmark));
  m.def(
      "_conv_deterministic",
      py::overload_cast<>(&backends::conv::deterministic));
  m.def(
      "_set_conv_deterministic",
      py::overload_cast<bool>(&backends::conv::deterministic));
  m.def(
      "_conv_benchmark_limit",
      py::overload_cast<>(&backends::conv::benchmark_limit));
  m.def(
      "_set_conv_benchmark_limit",
      py::overload_cast<int>(&backends::conv::benchmark_limit));
}

void init_records(py::module_& m) {
  m.def("op_records", [] {
    py::list out;
    for (const OpRecord* r : op_records()) {
      py::dict d;
      d["name"] = r->name;
      d["family"] = r->family;
      d["callables"] = r->callables;
      d["determinism"] = std::string(determinism_name(r->determinism()));
      d["inplace"] = r->inplace;
      d["random"] = r->random;
      d["differentiable"] = r->not_differentiable.empty();
      out.append(d);
    }
    return out;
  });
}

} // namespace

} // namespace ditto::python

PYBIND11_MODULE(_C, m) {
  using namespace ditto::python;
  m.doc() = "ditto's C++ library (the Python package wraps it: docs/python.md)";
  translate_errors();
  route_warnings();
  init_dtype(m);
  py::class_<ditto::Tensor> tensor(m, "Tensor");
  init_tensor(m, tensor);
  init_tensor_index(tensor);
  // before the ops: their signatures name ditto.Generator
  init_generator(m);
  init_ops(m, tensor);
  init_ops_index(m, tensor);
  init_nn_functional(m, tensor);
  init_random(m);
  init_nn(m, tensor);
  init_optim(m);
  init_io(m);
  init_dlpack(m, tensor);
  init_sparse(m, tensor);
  init_data(m);
  init_trace(m);
  init_function(m);
  init_determinism(m);
  init_records(m);
  init_size_base(m);
  // DITTO_PYTHON_FAST_PATHS=0 keeps the pybind11 bindings alone (to rule
  // the fast paths out, or to measure what they save).
  const char* fast = std::getenv("DITTO_PYTHON_FAST_PATHS");
  if (fast == nullptr || std::strcmp(fast, "0") != 0) {
    init_fast_paths(m, tensor);
  }
  m.def("is_grad_enabled", &ditto::autograd::GradMode::is_enabled);
  m.def(
      "_set_grad_enabled",
      &ditto::autograd::GradMode::set_enabled,
      py::arg("mode"));
  m.def("set_num_threads", &ditto::set_num_threads, py::arg("num"));
  m.def("get_num_threads", &ditto::get_num_threads);
  m.attr("__version__") = ditto::version();
}
