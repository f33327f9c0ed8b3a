// The declared ops' bindings (python/declared_bindings.inc, generated from
// ditto/ops/*/*.ops.toml: ditto.<op> functions, Tensor.<op> methods and
// in-place Tensor.<op>_ forms with torch's argument names, and the
// submodules' functions), result_type, and Python's operators.

#include "python/src/common.h"

namespace ditto::python {
namespace {

// A (values, indices) pair as torch's named tuple (torch.return_types).
py::object values_indices(const char* name, std::pair<Tensor, Tensor> r) {
  py::object types = py::module_::import("ditto.return_types");
  return types.attr(name)(std::move(r.first), std::move(r.second));
}

// The declared ops (ditto/ops/*.ops.toml): init_declared, generated.
#include "python/declared_bindings.inc"

void init_elementwise(py::module_& m, py::class_<Tensor>& cls) {
  init_declared(m, cls);

  m.def(
      "result_type",
      py::overload_cast<const Tensor&, const Tensor&>(&result_type),
      py::arg("tensor1"),
      py::arg("tensor2"));
}

void init_operators(py::class_<Tensor>& cls) {
  using BinT = Tensor (*)(const Tensor&, const Tensor&);
  using BinS = Tensor (*)(const Tensor&, const Scalar&);
  auto op = [&](const char* name, BinT ft, BinS fs) {
    cls.def(name, ft, py::is_operator(), ReleaseGil());
    cls.def(name, fs, py::is_operator(), ReleaseGil());
  };
  op(
      "__add__",
      [](const Tensor& a, const Tensor& b) { return a + b; },
      [](const Tensor& a, const Scalar& b) { return a + b; });
  op(
      "__sub__",
      [](const Tensor& a, const Tensor& b) { return a - b; },
      [](const Tensor& a, const Scalar& b) { return a - b; });
  op("__mul__", &mul, &mul);
  op("__truediv__", &div, &div);
  op("__pow__", &pow, &pow);
  op("__eq__", &eq, &eq);
  op("__ne__", &ne, &ne);
  op("__lt__", &lt, &lt);
  op("__le__", &le, &le);
  op("__gt__", &gt, &gt);
  op("__ge__", &ge, &ge);
  cls.def("__matmul__", &matmul, py::is_operator(), ReleaseGil());
  // Reflected: number (op) tensor.
  cls.def(
      "__radd__",
      [](const Tensor& t, const Scalar& s) { return s + t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rsub__",
      [](const Tensor& t, const Scalar& s) { return s - t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rmul__",
      [](const Tensor& t, const Scalar& s) { return s * t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rtruediv__",
      [](const Tensor& t, const Scalar& s) { return s / t; },
      py::is_operator(),
      ReleaseGil());
  cls.def(
      "__rpow__",
      [](const Tensor& t, const Scalar& s) {
        return pow(scalar_tensor(s, result_type(t, s)), t);
      },
      py::is_operator(),
      ReleaseGil());
  cls.def("__neg__", py::overload_cast<const Tensor&>(&neg), ReleaseGil());
  cls.def("__pos__", [](const Tensor& t) { return t; });
  cls.def("__abs__", py::overload_cast<const Tensor&>(&abs), ReleaseGil());
  // In place: a += b writes a (and returns the same object).
  auto inplace = [&](const char* name, auto ft, auto fs) {
    using T = Tensor& (*)(Tensor&, const Tensor&);
    using S = Tensor& (*)(Tensor&, const Scalar&);
    cls.def(name, T(ft), py::is_operator(), kSelf, ReleaseGil());
    cls.def(name, S(fs), py::is_operator(), kSelf, ReleaseGil());
  };
  inplace(
      "__iadd__",
      [](Tensor& a, const Tensor& b) -> Tensor& { return a.add_(b); },
      [](Tensor& a, const Scalar& b) -> Tensor& { return a.add_(b); });
  inplace(
      "__isub__",
      [](Tensor& a, const Tensor& b) -> Tensor& { return a.sub_(b); },
      [](Tensor& a, const Scalar& b) -> Tensor& { return a.sub_(b); });
  inplace(
      "__imul__",
      [](Tensor& a, const Tensor& b) -> Tensor& { return a.mul_(b); },
      [](Tensor& a, const Scalar& b) -> Tensor& { return a.mul_(b); });
  inplace(
      "__itruediv__",
      [](Tensor& a, const Tensor& b) -> Tensor& { return a.div_(b); },
      [](Tensor& a, const Scalar& b) -> Tensor& { return a.div_(b); });
  inplace(
      "__ipow__",
      [](Tensor& a, const Tensor& b) -> Tensor& { return a.pow_(b); },
      [](Tensor& a, const Scalar& b) -> Tensor& { return a.pow_(b); });
  // __eq__ is elementwise, so tensors hash by identity (as torch's).
  cls.attr("__hash__") =
      py::module_::import("builtins").attr("object").attr("__hash__");
}

// pad and linear are declared (shape/shape.ops.toml,
// linalg/linalg.ops.toml), and so are ditto._C._linalg's qr, svd and
// svd_lowrank (composite/decomp.ops.toml).

} // namespace

void init_ops(py::module_& m, py::class_<Tensor>& cls) {
  init_elementwise(m, cls);
  init_operators(cls);
}

} // namespace ditto::python
