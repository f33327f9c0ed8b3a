// ditto.autograd.Function on the C++ CustomOp (ditto/ops/custom.h): one op
// and record per Function subclass, whose forward and backward call back
// into Python, and ditto.autograd.gradcheck on the C++ one. The Python side
// is python/ditto/autograd/function.py; see docs/python.md.
//
// Ops run with the GIL released: the callbacks take it around the Python
// calls they make, and a Python exception they raise leaves the op (and the
// autograd engine) as py::error_already_set, which pybind11 restores as the
// same Python exception where the outermost binding returns.

#include <Python.h>

#include <memory>

#include "python/src/common.h"

namespace ditto::python {

namespace {

// What one Function.apply gives the op: forward(ctx) runs the class's
// forward and returns its tensors; backward(ctx, grads) returns one gradient
// (or None) per tensor input. The op's node keeps them for the backward.
struct Call {
  py::object forward;
  py::object backward;
};

// The node that holds a Call may drop it on a thread without the GIL, or
// while the interpreter shuts down (then it is leaked: no Python object may
// be touched any more).
std::shared_ptr<Call> make_call(py::object forward, py::object backward) {
  return std::shared_ptr<Call>(
      new Call{std::move(forward), std::move(backward)}, [](Call* c) {
        if (!Py_IsInitialized() || _Py_IsFinalizing()) {
          return;
        }
        py::gil_scoped_acquire gil;
        delete c;
      });
}

std::vector<Tensor> run_forward(
    CustomOpContext& ctx,
    const std::vector<Tensor>& inputs) {
  auto* call = static_cast<Call*>(ctx.data().get());
  std::vector<Tensor> outs;
  {
    py::gil_scoped_acquire gil;
    py::object forward = std::move(call->forward);
    call->forward = py::none(); // the node keeps the backward only
    outs = forward(ctx).cast<std::vector<Tensor>>();
  }
  // An input, or a tensor with a history of its own, returned as is would
  // have its grad_fn replaced by the op's node: the library's rule for
  // torch::autograd::Function makes it a new tensor on the same storage.
  return autograd::function_detail::fresh_outputs(std::move(outs), inputs, {});
}

std::vector<Tensor> run_backward(
    CustomOpContext& ctx,
    const std::vector<Tensor>& grads) {
  auto* call = static_cast<Call*>(ctx.data().get());
  py::gil_scoped_acquire gil;
  py::list g;
  for (const Tensor& t : grads) {
    g.append(tensor_or_none(t));
  }
  py::object r = call->backward(ctx, g);
  std::vector<Tensor> out;
  for (py::handle item : r) {
    out.push_back(item.is_none() ? Tensor() : item.cast<Tensor>());
  }
  return out;
}

// A Function subclass's op: its record (registered for the process, as
// every record is) and the callbacks above. Never freed.
CustomOp* make_function_op(
    const std::string& name,
    const std::vector<std::string>& callables,
    const std::string& deterministic_because,
    const std::vector<py::dict>& nondeterministic,
    bool differentiable,
    const std::string& grad_fn) {
  OpRecord r{
      .name = name,
      .family = "custom",
      .callables = callables,
      .deterministic_because = deterministic_because,
      // A Python Function brings no samples for the C++ op suite.
      .samples = [](const SampleSpec&) { return std::vector<Sample>{}; },
      .grad_fn = grad_fn};
  for (const py::dict& d : nondeterministic) {
    NondeterministicPath p;
    p.entry = d["entry"].cast<std::string>();
    p.reason = d["reason"].cast<std::string>();
    p.has_deterministic_variant = d["has_deterministic_variant"].cast<bool>();
    p.dtypes = d["dtypes"].cast<std::string>();
    p.cost = d["cost"].cast<std::string>();
    r.nondeterministic.push_back(std::move(p));
  }
  if (!differentiable) {
    return new CustomOp(std::move(r), run_forward);
  }
  return new CustomOp(std::move(r), run_forward, run_backward);
}

// ditto::autograd::gradcheck for a Python function of tensors returning
// one tensor: (ok, report, max_abs_error).
py::tuple gradcheck(
    py::object fn,
    const std::vector<Tensor>& inputs,
    double eps,
    double atol,
    double rtol) {
  auto call = [&fn](const std::vector<Tensor>& in) {
    py::gil_scoped_acquire gil;
    return fn(in).cast<Tensor>();
  };
  autograd::GradcheckResult r;
  {
    py::gil_scoped_release release;
    r = autograd::gradcheck(call, inputs, eps, atol, rtol);
  }
  return py::make_tuple(r.ok, r.report, r.max_abs_error);
}

} // namespace

void init_function(py::module_& m) {
  py::class_<CustomOpContext>(m, "_CustomOpContext")
      .def(
          "save_for_backward",
          [](CustomOpContext& ctx,
             const std::vector<std::optional<Tensor>>& tensors) {
            std::vector<Tensor> ts;
            for (const std::optional<Tensor>& t : tensors) {
              ts.push_back(value_or_undefined(t));
            }
            ctx.save_for_backward(ts);
          })
      .def(
          "saved_tensors",
          [](const CustomOpContext& ctx) {
            py::list out;
            for (const Tensor& t : ctx.saved_tensors()) {
              out.append(tensor_or_none(t));
            }
            return py::tuple(out);
          })
      .def("deterministic", &CustomOpContext::deterministic);
  py::class_<CustomOp, std::unique_ptr<CustomOp, py::nodelete>>(m, "_CustomOp")
      .def(
          py::init(&make_function_op),
          py::arg("name"),
          py::arg("callables"),
          py::arg("deterministic_because"),
          py::arg("nondeterministic"),
          py::arg("differentiable"),
          py::arg("grad_fn"))
      .def_property_readonly(
          "name", [](const CustomOp& op) { return op.record().name; })
      .def(
          "apply",
          [](const CustomOp& op,
             const std::vector<Tensor>& inputs,
             py::object forward,
             py::object backward) {
            std::shared_ptr<Call> call =
                make_call(std::move(forward), std::move(backward));
            py::gil_scoped_release release;
            return op(inputs, std::move(call));
          },
          py::arg("inputs"),
          py::arg("forward"),
          py::arg("backward"));
  m.def(
      "_gradcheck",
      &gradcheck,
      py::arg("fn"),
      py::arg("inputs"),
      py::arg("eps"),
      py::arg("atol"),
      py::arg("rtol"));
}

} // namespace ditto::python
