// Tensor's cheapest and most called methods as plain CPython methods and
// getters, installed over the pybind11 bindings of the same names: dim,
// numel, shape, size, item, requires_grad; a (+ - * /) b, add, sub, mul,
// div with a tensor or a number (and ditto.add, sub, mul, div), alpha= for
// add and sub; sum() and mean() of everything or of one dim. A
// pybind11 call spends ~100 ns in its dispatcher (argument casters, the
// overload loop) before work that is a field read or a tiny op, 2-4x what
// torch 1.13 takes (bench/python/bench_overhead.py, docs/benchmarks.md).
// Anything but the common case (another argument type, a keyword, a
// tensor not yet initialized) goes to the pybind11 binding it replaced;
// errors are raised by pybind11's translators; so behaviour, conversions
// and messages stay the bindings'.

#include <Python.h>

#include <deque>
#include <exception>
#include <string>
#include <vector>

#include "python/src/common.h"

namespace ditto::python {
namespace {

// The pybind11 bindings the fast paths fall back to, by name.
py::dict* g_fallback = nullptr;
PyTypeObject* g_tensor_type = nullptr;
PyObject* g_size_cls = nullptr; // ditto.Size

// The Tensor inside a ditto.Tensor (or a subclass: ditto.nn.Parameter);
// null when it has none yet (a subclass before Tensor.__init__).
const Tensor* tensor_of(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (!inst->simple_layout) {
    return nullptr;
  }
  const auto* t = static_cast<const Tensor*>(inst->simple_value_holder[0]);
  return t != nullptr && t->defined() ? t : nullptr;
}

// self.<name>(*args, **kwargs) through the replaced binding (args and
// kwnames as METH_FASTCALL | METH_KEYWORDS passes them); name "ditto.<op>"
// is the module function, called with self first, or as is for a null
// self.
PyObject* fallback(
    const char* name,
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames = nullptr) {
  PyObject* f = PyDict_GetItemString(g_fallback->ptr(), name);
  if (f == nullptr) {
    PyErr_Format(PyExc_AttributeError, "Tensor.%s", name);
    return nullptr;
  }
  if (self == nullptr) { // a module function called as is
    return PyObject_Vectorcall(f, args, size_t(nargs), kwnames);
  }
  const Py_ssize_t total =
      nargs + (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
  std::vector<PyObject*> call(size_t(total) + 1);
  call[0] = self;
  for (Py_ssize_t i = 0; i < total; ++i) {
    call[size_t(i) + 1] = args[i];
  }
  return PyObject_Vectorcall(f, call.data(), size_t(1 + nargs), kwnames);
}

// A Python number as a Scalar as the pybind11 caster reads it, for the
// exact types only (bool, NumPy scalars and big ints take the binding).
bool exact_scalar(PyObject* o, Scalar& out) {
  if (PyFloat_CheckExact(o)) {
    out = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    out = Scalar(int64_t(v));
    return true;
  }
  return false;
}

// Raises the C++ exception being handled as the pybind11 bindings do
// (their translators: ditto's error classes, error_already_set).
PyObject* raise_current() {
  if (py::detail::apply_exception_translators(
          py::detail::get_local_internals().registered_exception_translators) ||
      py::detail::apply_exception_translators(
          py::detail::get_internals().registered_exception_translators)) {
    return nullptr;
  }
  PyErr_SetString(PyExc_SystemError, "an exception no translator took");
  return nullptr;
}

// f() without the GIL, its result wrapped.
template <typename F>
PyObject* run(F f) {
  try {
    Tensor out;
    {
      py::gil_scoped_release gil;
      out = f();
    }
    return py::cast(std::move(out)).release().ptr();
  } catch (...) {
    return raise_current();
  }
}

using BinT = Tensor (*)(const Tensor&, const Tensor&);
using BinS = Tensor (*)(const Tensor&, const Scalar&);

using BinA = Tensor (*)(const Tensor&, const Tensor&, const Scalar&);

// self (op) other for a tensor or an exact int or float: the binding's
// first two overloads; FA, when given, takes alpha= with a tensor other
// (alpha 1 is no alpha, as the binding has it).
template <BinT FT, BinS FS, BinA FA = nullptr>
PyObject* binary(
    const char* name,
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  const Tensor* a = tensor_of(self);
  // alpha=: the only keyword taken here, for a tensor other.
  Scalar alpha;
  bool has_alpha = false;
  bool kw_left = kwnames != nullptr;
  if constexpr (FA != nullptr) {
    if (kw_left && PyTuple_GET_SIZE(kwnames) == 1 &&
        PyUnicode_CompareWithASCIIString(
            PyTuple_GET_ITEM(kwnames, 0), "alpha") == 0 &&
        exact_scalar(args[nargs], alpha)) {
      has_alpha = alpha.is_floating() || alpha.to<int64_t>() != 1;
      kw_left = false;
    }
  }
  if (a != nullptr && nargs == 1 && !kw_left) {
    if (PyObject_TypeCheck(args[0], g_tensor_type)) {
      const Tensor* b = tensor_of(args[0]);
      if (b != nullptr) {
        if constexpr (FA != nullptr) {
          if (has_alpha) {
            return run([&] { return FA(*a, *b, alpha); });
          }
        }
        return run([&] { return FT(*a, *b); });
      }
    }
    Scalar s;
    if (!has_alpha && exact_scalar(args[0], s)) {
      return run([&] { return FS(*a, s); });
    }
  }
  return fallback(name, self, args, nargs, kwnames);
}

// ditto.<op>(input, other, ...): binary() when input is a tensor given by
// position, else the binding.
template <BinT FT, BinS FS, BinA FA = nullptr>
PyObject* binary_function(
    const char* name,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  if (nargs >= 1 && PyObject_TypeCheck(args[0], g_tensor_type)) {
    return binary<FT, FS, FA>(name, args[0], args + 1, nargs - 1, kwnames);
  }
  return fallback(name, nullptr, args, nargs, kwnames);
}

// ditto._C._SizeBase: a tuple whose t[i] runs in C, the base of ditto.Size
// (python/ditto/_size.py), whose Python __getitem__ cost ~150 ns on
// t.shape[0]; a slice gives a Size, as torch.Size's does.
PyObject* size_subscript(PyObject* self, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
  if (r == nullptr || !PySlice_Check(key)) {
    return r;
  }
  PyObject* size =
      PyObject_CallOneArg(reinterpret_cast<PyObject*>(Py_TYPE(self)), r);
  Py_DECREF(r);
  return size;
}

PyType_Slot kSizeSlots[] = {
    {Py_mp_subscript, reinterpret_cast<void*>(size_subscript)},
    {Py_tp_doc, const_cast<char*>("The C base of ditto.Size.")},
    {0, nullptr}};

PyType_Spec kSizeSpec = {
    "ditto._C._SizeBase",
    0,
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    kSizeSlots};

// A ditto.Size of t's sizes, built in place as tuple.__new__ builds a
// tuple subclass's instance.
PyObject* size_object(const Tensor& t) {
  if (g_size_cls == nullptr) {
    g_size_cls = py::object(py::module_::import("ditto._size").attr("Size"))
                     .release()
                     .ptr();
  }
  auto* type = reinterpret_cast<PyTypeObject*>(g_size_cls);
  const Shape& s = t.sizes();
  PyObject* size = type->tp_alloc(type, Py_ssize_t(s.size()));
  if (size == nullptr) {
    return nullptr;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(s[i]);
    if (v == nullptr) {
      Py_DECREF(size);
      return nullptr;
    }
    PyTuple_SET_ITEM(size, Py_ssize_t(i), v);
  }
  return size;
}

PyObject* dim(PyObject* self, PyObject*) {
  const Tensor* t = tensor_of(self);
  return t != nullptr ? PyLong_FromLongLong(t->dim())
                      : fallback("dim", self, nullptr, 0);
}

PyObject* numel(PyObject* self, PyObject*) {
  const Tensor* t = tensor_of(self);
  return t != nullptr ? PyLong_FromLongLong(t->numel())
                      : fallback("numel", self, nullptr, 0);
}

PyObject* size(
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  const Tensor* t = kwnames == nullptr ? tensor_of(self) : nullptr;
  if (t != nullptr && nargs == 0) {
    return size_object(*t);
  }
  if (t != nullptr && nargs == 1 && PyLong_CheckExact(args[0])) {
    const int64_t n = t->dim();
    const long long d = PyLong_AsLongLong(args[0]);
    if (!(d == -1 && PyErr_Occurred()) && d >= -n && d < n) {
      return PyLong_FromLongLong(t->sizes()[size_t(d < 0 ? d + n : d)]);
    }
    PyErr_Clear();
  }
  return fallback("size", self, args, nargs, kwnames);
}

PyObject* fast_item(PyObject* self, PyObject*) {
  const Tensor* t = tensor_of(self);
  if (t == nullptr || t->numel() != 1 || !t->is_cpu()) {
    return fallback("item", self, nullptr, 0); // a device's value: a copy
  }
  // One value read: no reason to give up the GIL.
  const void* p = t->raw_data();
  switch (t->dtype()) {
    case kFloat32:
      return PyFloat_FromDouble(*static_cast<const float*>(p));
    case kFloat64:
      return PyFloat_FromDouble(*static_cast<const double*>(p));
    case kInt64:
      return PyLong_FromLongLong(*static_cast<const int64_t*>(p));
    case kInt32:
      return PyLong_FromLong(*static_cast<const int32_t*>(p));
    case kBool:
      return PyBool_FromLong(*static_cast<const bool*>(p));
    default:
      return fallback("item", self, nullptr, 0);
  }
}

#define DITTO_FAST_BINARY(fn, name, ...)                          \
  PyObject* fn(                                                   \
      PyObject* self,                                             \
      PyObject* const* args,                                      \
      Py_ssize_t nargs,                                           \
      PyObject* kwnames) {                                        \
    return binary<__VA_ARGS__>(name, self, args, nargs, kwnames); \
  }
#define DITTO_FAST_FUNCTION(fn, name, ...)                                \
  PyObject* fn(                                                           \
      PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kw) { \
    return binary_function<__VA_ARGS__>(name, args, nargs, kw);           \
  }
// add and sub take alpha (a default): their two-operand calls here.
Tensor add_tt(const Tensor& a, const Tensor& b) {
  return ditto::add(a, b);
}
Tensor add_ts(const Tensor& a, const Scalar& b) {
  return ditto::add(a, b);
}
Tensor add_alpha(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return ditto::add(a, b, alpha);
}
Tensor sub_tt(const Tensor& a, const Tensor& b) {
  return ditto::sub(a, b);
}
Tensor sub_ts(const Tensor& a, const Scalar& b) {
  return ditto::sub(a, b);
}
Tensor sub_alpha(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return ditto::sub(a, b, alpha);
}
using ditto::mul, ditto::div;
constexpr BinT kAddT = &add_tt, kSubT = &sub_tt, kMulT = &mul, kDivT = &div;
constexpr BinS kAddS = &add_ts, kSubS = &sub_ts, kMulS = &mul, kDivS = &div;
constexpr BinA kAddA = &add_alpha, kSubA = &sub_alpha;
DITTO_FAST_BINARY(op_add, "__add__", kAddT, kAddS)
DITTO_FAST_BINARY(op_sub, "__sub__", kSubT, kSubS)
DITTO_FAST_BINARY(op_mul, "__mul__", kMulT, kMulS)
DITTO_FAST_BINARY(op_div, "__truediv__", kDivT, kDivS)
DITTO_FAST_BINARY(m_add, "add", kAddT, kAddS, kAddA)
DITTO_FAST_BINARY(m_sub, "sub", kSubT, kSubS, kSubA)
DITTO_FAST_BINARY(m_mul, "mul", kMulT, kMulS)
DITTO_FAST_BINARY(m_div, "div", kDivT, kDivS)
DITTO_FAST_FUNCTION(f_add, "ditto.add", kAddT, kAddS, kAddA)
DITTO_FAST_FUNCTION(f_sub, "ditto.sub", kSubT, kSubS, kSubA)
DITTO_FAST_FUNCTION(f_mul, "ditto.mul", kMulT, kMulS)
DITTO_FAST_FUNCTION(f_div, "ditto.div", kDivT, kDivS)
#undef DITTO_FAST_FUNCTION
#undef DITTO_FAST_BINARY

// t.sum() and t.mean() over every element, or over one dim given as an
// int; any other argument takes the binding.
template <
    Tensor (*F)(const Tensor&, std::optional<Dtype>),
    Tensor (
        *FD)(const Tensor&, const OptionalIntArg&, bool, std::optional<Dtype>)>
PyObject* reduce(
    const char* name,
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  const Tensor* t = tensor_of(self);
  if (t != nullptr && nargs == 0 && kwnames == nullptr) {
    return run([&] { return F(*t, std::nullopt); });
  }
  if (t != nullptr && nargs == 1 && kwnames == nullptr &&
      PyLong_CheckExact(args[0])) {
    const long long d = PyLong_AsLongLong(args[0]);
    if (!(d == -1 && PyErr_Occurred())) {
      return run(
          [&] { return FD(*t, IntList{int64_t(d)}, false, std::nullopt); });
    }
    PyErr_Clear();
  }
  return fallback(name, self, args, nargs, kwnames);
}

PyObject* m_sum(
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  return reduce<&ditto::sum, &ditto::sum>("sum", self, args, nargs, kwnames);
}

PyObject* m_mean(
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  return reduce<&ditto::mean, &ditto::mean>("mean", self, args, nargs, kwnames);
}

PyObject* get_shape(PyObject* self, void*) {
  const Tensor* t = tensor_of(self);
  if (t != nullptr) {
    return size_object(*t);
  }
  PyObject* prop = PyDict_GetItemString(g_fallback->ptr(), "shape");
  return prop == nullptr ? nullptr
                         : PyObject_CallMethod(prop, "__get__", "O", self);
}

PyObject* get_ndim(PyObject* self, void*) {
  return dim(self, nullptr);
}

PyObject* get_requires_grad(PyObject* self, void*) {
  const Tensor* t = tensor_of(self);
  if (t != nullptr) {
    return PyBool_FromLong(t->requires_grad());
  }
  PyObject* prop = PyDict_GetItemString(g_fallback->ptr(), "requires_grad");
  return prop == nullptr ? nullptr
                         : PyObject_CallMethod(prop, "__get__", "O", self);
}

int set_requires_grad(PyObject* self, PyObject* value, void*) {
  PyObject* prop = PyDict_GetItemString(g_fallback->ptr(), "requires_grad");
  if (prop == nullptr) {
    return -1;
  }
  PyObject* r = value == nullptr
      ? PyObject_CallMethod(prop, "__delete__", "O", self)
      : PyObject_CallMethod(prop, "__set__", "OO", self, value);
  Py_XDECREF(r);
  return r == nullptr ? -1 : 0;
}

#define DITTO_KW_METHOD(fn, name)                                          \
  {                                                                        \
    name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), \
        METH_FASTCALL | METH_KEYWORDS, nullptr                             \
  }
PyMethodDef kMethods[] = {
    {"dim", dim, METH_NOARGS, "The number of dimensions."},
    {"ndimension", dim, METH_NOARGS, "The number of dimensions."},
    {"numel", numel, METH_NOARGS, "The number of elements."},
    {"nelement", numel, METH_NOARGS, "The number of elements."},
    {"size",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(size)),
     METH_FASTCALL | METH_KEYWORDS,
     "size(dim=None): the sizes (a ditto.Size), or the size of dim."},
    {"item", fast_item, METH_NOARGS, "The one value as a Python number."},
    DITTO_KW_METHOD(op_add, "__add__"),
    DITTO_KW_METHOD(op_sub, "__sub__"),
    DITTO_KW_METHOD(op_mul, "__mul__"),
    DITTO_KW_METHOD(op_div, "__truediv__"),
    DITTO_KW_METHOD(m_add, "add"),
    DITTO_KW_METHOD(m_sub, "sub"),
    DITTO_KW_METHOD(m_mul, "mul"),
    DITTO_KW_METHOD(m_div, "div"),
    DITTO_KW_METHOD(m_sum, "sum"),
    DITTO_KW_METHOD(m_mean, "mean"),
};

PyMethodDef kFunctions[] = {
    DITTO_KW_METHOD(f_add, "add"),
    DITTO_KW_METHOD(f_sub, "sub"),
    DITTO_KW_METHOD(f_mul, "mul"),
    DITTO_KW_METHOD(f_div, "div"),
};

#undef DITTO_KW_METHOD

PyGetSetDef kGetters[] = {
    {"shape", get_shape, nullptr, "The sizes (a ditto.Size).", nullptr},
    {"ndim", get_ndim, nullptr, "The number of dimensions.", nullptr},
    {"requires_grad",
     get_requires_grad,
     set_requires_grad,
     "Whether autograd records ops on this tensor.",
     nullptr},
};

} // namespace

void init_size_base(py::module_& m) {
  PyObject* base = PyType_FromSpecWithBases(
      &kSizeSpec,
      py::make_tuple(py::reinterpret_borrow<py::object>(
                         reinterpret_cast<PyObject*>(&PyTuple_Type)))
          .ptr());
  if (base == nullptr) {
    throw py::error_already_set();
  }
  m.attr("_SizeBase") = py::reinterpret_steal<py::object>(base);
}

void init_fast_paths(py::module_& m, py::class_<Tensor>& cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  g_tensor_type = type;
  // Held for the life of the process, as the type itself.
  g_fallback = new py::dict();
  static std::deque<std::string> docs;
  auto keep_doc = [](PyMethodDef& def, const py::object& old) {
    if (def.ml_doc == nullptr) { // the binding's signature and doc
      def.ml_doc = docs.emplace_back(py::str(old.attr("__doc__"))).c_str();
    }
  };
  for (PyMethodDef& def : kMethods) {
    py::object old = cls.attr(def.ml_name);
    keep_doc(def, old);
    (*g_fallback)[def.ml_name] = old;
    cls.attr(def.ml_name) =
        py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &def));
  }
  for (PyMethodDef& def : kFunctions) {
    py::object old = m.attr(def.ml_name);
    keep_doc(def, old);
    (*g_fallback)[py::str("ditto.") + py::str(def.ml_name)] = old;
    py::object f = py::reinterpret_steal<py::object>(
        PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr()));
    if (!f) {
      throw py::error_already_set();
    }
    m.attr(def.ml_name) = f;
  }
  for (PyGetSetDef& def : kGetters) {
    // The property object itself (its __get__/__set__), not its value.
    (*g_fallback)[def.name] = py::reinterpret_borrow<py::object>(
        PyDict_GetItemString(type->tp_dict, def.name));
    cls.attr(def.name) =
        py::reinterpret_steal<py::object>(PyDescr_NewGetSet(type, &def));
  }
}

} // namespace ditto::python
