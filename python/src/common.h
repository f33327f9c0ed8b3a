#pragma once

// What every translation unit of the extension module ditto._C shares: the
// pybind11 headers, the conversions between Python values and ditto's
// argument types (Scalar, Shape/IntList, optional tensors), and the
// functions each unit registers with the module (module.cpp calls them).
// See docs/python.md.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ditto/ditto.h"

namespace py = pybind11;

// Every op binding releases the GIL while ditto computes (issue 33): a
// Python thread running a ditto op does not block the others.
using ReleaseGil = py::call_guard<py::gil_scoped_release>;

namespace ditto::python {
// A factory's layout= (torch.layout): ditto.strided or ditto.sparse_coo,
// by name (Note [Factory options] in tools/opgen.py).
struct LayoutArg {
  std::string name;
};
} // namespace ditto::python

namespace pybind11::detail {

// A dtype is one Python object, as torch's: `x.dtype is ditto.float32`,
// `ditto.long is ditto.int64`. pybind11's enum caster makes a new instance
// per conversion; this one keeps the first it makes for each dtype (the
// enum's own values, made while the module loads) and hands that out.
template <>
struct type_caster<ditto::Dtype> : type_caster_base<ditto::Dtype> {
  static handle cast(
      const ditto::Dtype& d,
      return_value_policy policy,
      handle parent) {
    static std::array<PyObject*, 256> cache{};
    PyObject*& slot = cache[size_t(d)];
    if (slot == nullptr) {
      slot = type_caster_base<ditto::Dtype>::cast(d, policy, parent).ptr();
      if (slot == nullptr) {
        return handle();
      }
      // Kept for the life of the process.
    }
    return handle(slot).inc_ref();
  }
  static handle cast(
      ditto::Dtype&& d,
      return_value_policy policy,
      handle parent) {
    return cast(static_cast<const ditto::Dtype&>(d), policy, parent);
  }
  static handle cast(
      const ditto::Dtype* d,
      return_value_policy policy,
      handle parent) {
    return d == nullptr ? none().release() : cast(*d, policy, parent);
  }
};

// ditto::OrderedDict (named_parameters, state_dict items) as a list of
// (key, value) tuples, both ways; a repeated key keeps its last value.
template <typename K, typename V>
struct type_caster<ditto::OrderedDict<K, V>> {
  using Dict = ditto::OrderedDict<K, V>;
  using List = std::vector<std::pair<K, V>>;
  PYBIND11_TYPE_CASTER(Dict, make_caster<List>::name);
  bool load(handle src, bool convert) {
    make_caster<List> items;
    if (!items.load(src, convert)) {
      return false;
    }
    Dict d;
    for (auto& [k, v] : cast_op<List&>(items)) {
      if (V* old = d.find(k)) {
        *old = v;
      } else {
        d.insert(k, v);
      }
    }
    value = std::move(d);
    return true;
  }
  static handle cast(
      const Dict& src,
      return_value_policy policy,
      handle parent) {
    return make_caster<List>::cast(src.pairs(), policy, parent);
  }
};

// A Python bool, int or float (or anything with __index__ or __float__,
// NumPy scalars among them, in the converting pass) as ditto::Scalar.
template <>
struct type_caster<ditto::Scalar> {
  PYBIND11_TYPE_CASTER(ditto::Scalar, const_name("Number"));
  bool load(handle src, bool convert);
  static handle cast(const ditto::Scalar& s, return_value_policy, handle);
};

// Sizes, strides and dims: an int or a sequence of ints (a tuple, a list,
// a ditto.Size), as PyTorch's IntArrayRef arguments take them; returned as
// a tuple.
template <>
struct type_caster<std::vector<int64_t>> {
  PYBIND11_TYPE_CASTER(std::vector<int64_t>, const_name("Sequence[int]"));
  bool load(handle src, bool convert);
  static handle cast(
      const std::vector<int64_t>& v,
      return_value_policy,
      handle);
};

// An IntArg (kernel sizes, strides, paddings) as the lists above.
template <>
struct type_caster<ditto::IntArg> {
  PYBIND11_TYPE_CASTER(ditto::IntArg, const_name("Sequence[int]"));
  bool load(handle src, bool convert) {
    make_caster<std::vector<int64_t>> list;
    if (!list.load(src, convert)) {
      return false;
    }
    value = ditto::IntArg(cast_op<std::vector<int64_t>&&>(std::move(list)));
    return true;
  }
  static handle cast(
      const ditto::IntArg& v,
      return_value_policy policy,
      handle parent) {
    return make_caster<std::vector<int64_t>>::cast(v, policy, parent);
  }
};

// An OptionalIntArg (torch's int[1]? dim): None, or the lists above.
template <>
struct type_caster<ditto::OptionalIntArg> {
  PYBIND11_TYPE_CASTER(
      ditto::OptionalIntArg,
      const_name("Optional[Sequence[int]]"));
  bool load(handle src, bool convert) {
    if (src.is_none()) {
      value = std::nullopt;
      return true;
    }
    make_caster<std::vector<int64_t>> list;
    if (!list.load(src, convert)) {
      return false;
    }
    value = cast_op<std::vector<int64_t>&&>(std::move(list));
    return true;
  }
  static handle cast(
      const ditto::OptionalIntArg& v,
      return_value_policy policy,
      handle parent) {
    if (!v) {
      return none().release();
    }
    return make_caster<std::vector<int64_t>>::cast(*v, policy, parent);
  }
};

// ditto.layout objects (python/ditto/__init__.py); anything else is no
// layout (pybind11's TypeError names the expected arguments).
template <>
struct type_caster<ditto::python::LayoutArg> {
  PYBIND11_TYPE_CASTER(ditto::python::LayoutArg, const_name("layout"));
  bool load(handle src, bool) {
    if (src.is_none() || std::string(Py_TYPE(src.ptr())->tp_name) != "layout" ||
        !hasattr(src, "_name")) {
      return false;
    }
    object name = src.attr("_name");
    if (!isinstance<str>(name)) {
      return false;
    }
    value.name = name.cast<std::string>();
    return true;
  }
  static handle cast(
      const ditto::python::LayoutArg&,
      return_value_policy,
      handle) {
    return none().release();
  }
};

} // namespace pybind11::detail

namespace ditto::python {

// None for an undefined tensor (a missing grad, an absent bias), else the
// tensor.
py::object tensor_or_none(const Tensor& t);
// An undefined tensor for None.
// What a method that returns self (x.copy_(y), x.uniform_()) gives Python:
// the same Tensor object, not a copy.
constexpr auto kSelf = py::return_value_policy::reference;

inline Tensor value_or_undefined(const std::optional<Tensor>& t) {
  return t ? *t : Tensor();
}

// torch's Tensor?[] (index's indices) as ditto's C++ takes them: each None
// an undefined tensor (a whole dim).
inline std::vector<Tensor> index_list(
    const std::vector<std::optional<Tensor>>& in) {
  std::vector<Tensor> out;
  out.reserve(in.size());
  for (const auto& t : in) {
    out.push_back(value_or_undefined(t));
  }
  return out;
}

// Sizes given as PyTorch's factories and views take them: zeros(2, 3),
// zeros((2, 3)), zeros([2, 3]), x.view(ditto.Size([6])).
Shape shape_from_args(const py::args& args, const char* op);

// The submodule name of m (ditto._C._sparse): the one a binding made
// already, or a new one. The declared ops' bindings and the hand-written ones
// both add to it, in either order.
inline py::module_ submodule(py::module_& m, const char* name) {
  if (py::hasattr(m, name)) {
    return m.attr(name).cast<py::module_>();
  }
  return m.def_submodule(name);
}

// Note [Factory options] (tools/opgen.py): a declared factory's torch
// keywords as its TensorOptions. Layouts other than ditto.strided and
// pin_memory=True are refused naming the op; a device is a device string
// (or a ditto.device, a str).
inline TensorOptions factory_options(
    const char* op,
    std::optional<Dtype> dtype,
    const std::optional<LayoutArg>& layout,
    const std::optional<std::string>& device,
    std::optional<bool> pin_memory,
    bool requires_grad) {
  DITTO_CHECK(
      !layout || layout->name == "strided",
      NotImplementedError,
      op,
      "layout=ditto.",
      layout ? layout->name : std::string(),
      " is not supported: the factories make strided tensors");
  DITTO_CHECK(
      !pin_memory.value_or(false),
      ValueError,
      op,
      "pin_memory=True: no accelerator here pins host memory");
  TensorOptions o = TensorOptions().dtype(dtype).requires_grad(requires_grad);
  return device ? o.device(Device(*device)) : o;
}

// A Python object as a tensor: a Tensor as is, anything else through
// ditto.tensor (copies, as torch.as_tensor does for lists).
Tensor as_tensor(py::handle obj, std::optional<Dtype> dtype = std::nullopt);

// The registrations of each unit, in the order module.cpp calls them.
void init_dtype(py::module_& m);
void init_tensor(py::module_& m, py::class_<Tensor>& cls);
void init_tensor_index(py::class_<Tensor>& cls);
void init_generator(py::module_& m);
void init_ops(py::module_& m, py::class_<Tensor>& cls);
void init_ops_index(py::module_& m, py::class_<Tensor>& cls);
void init_nn_functional(py::module_& m, py::class_<Tensor>& cls);
void init_random(py::module_& m);
void init_nn(py::module_& m, py::class_<Tensor>& cls);
void init_optim(py::module_& m);
void init_io(py::module_& m);
void init_dlpack(py::module_& m, py::class_<Tensor>& cls);
void init_sparse(py::module_& m, py::class_<Tensor>& cls);
void init_data(py::module_& m);
void init_function(py::module_& m);
void init_trace(py::module_& m);
// Last: replaces some bindings of Tensor by plain CPython ones.
void init_fast_paths(py::module_& m, py::class_<Tensor>& cls);
// ditto._C._SizeBase, the base of ditto.Size (fast_paths.cpp).
void init_size_base(py::module_& m);

} // namespace ditto::python
