#include "ditto/ops/custom_function.h"

#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "ditto/ops/factories.h"

namespace ditto::autograd {

const char* IValue::type_name() const {
  static const char* const kNames[] = {
      "None", "double", "int", "bool", "string", "Tensor", "int list"};
  return kNames[v_.index()];
}

void AutogradContext::save_for_backward(variable_list to_save) {
  DITTO_CHECK(
      op_context != nullptr,
      ValueError,
      "Function.save_for_backward",
      "call it from a Function's forward");
  op_context->save_for_backward(to_save);
}

variable_list AutogradContext::get_saved_variables() const {
  DITTO_CHECK(
      op_context != nullptr,
      ValueError,
      "Function.get_saved_variables",
      "call it from a Function's backward");
  return op_context->saved_tensors();
}

bool AutogradContext::needs_input_grad(size_t index) const {
  DITTO_CHECK(
      index < input_requires_grad.size(),
      IndexError,
      "Function.needs_input_grad",
      "index ",
      index,
      " is out of range for ",
      input_requires_grad.size(),
      " arguments");
  return input_requires_grad[index];
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  DITTO_CHECK(
      op_context != nullptr,
      ValueError,
      "Function.mark_dirty",
      "call it from a Function's forward");
  dirty.insert(dirty.end(), inputs.begin(), inputs.end());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  DITTO_CHECK(
      op_context != nullptr,
      ValueError,
      "Function.mark_non_differentiable",
      "call it from a Function's forward");
  non_differentiable.insert(
      non_differentiable.end(), outputs.begin(), outputs.end());
}

namespace function_detail {

std::string function_op_name(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

const CustomOp& function_op(
    const std::string& name,
    CustomOp::Forward forward,
    CustomOp::Backward backward) {
  // One op per Function class, registered on its first apply (kept for
  // the process, as every record is).
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<CustomOp>> ops;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = ops.find(name);
  if (it != ops.end()) {
    return *it->second;
  }
  OpRecord r{
      .name = name,
      .family = "custom",
      .callables = {name + "::apply(...)"},
      .deterministic_because =
          "a user's torch::autograd::Function: as deterministic as its "
          "forward and backward",
      // A Function brings no samples for the op suite.
      .samples = [](const SampleSpec&) { return std::vector<Sample>{}; },
      // LibTorch's node for a Function<T> is CppNode<T>.
      .grad_fn = "torch::autograd::CppNode<" + name + ">"};
  auto op = std::make_unique<CustomOp>(
      std::move(r), std::move(forward), std::move(backward));
  return *ops.emplace(name, std::move(op)).first->second;
}

namespace {
bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.impl() == b.impl();
}
bool among(const Tensor& t, const variable_list& list) {
  for (const Tensor& x : list) {
    if (same_tensor(t, x)) {
      return true;
    }
  }
  return false;
}
} // namespace

void check_dirty(
    const AutogradContext& ctx,
    const variable_list& inputs,
    const variable_list& outputs) {
  for (const Tensor& d : ctx.dirty) {
    DITTO_CHECK(
        among(d, inputs),
        ValueError,
        "Function.mark_dirty",
        "a tensor marked dirty is not one of forward's tensor arguments");
    DITTO_CHECK(
        among(d, outputs),
        ValueError,
        "Function.mark_dirty",
        "Some elements marked as dirty during the forward method were not "
        "returned as output. The inputs that are modified inplace must all "
        "be outputs of the Function.");
    DITTO_CHECK(
        !(ctx.grad_enabled && d.requires_grad() && d.grad_fn() == nullptr),
        ValueError,
        "Function.mark_dirty",
        "a leaf Variable that requires grad is being used in an in-place "
        "operation.");
  }
}

std::vector<Tensor> fresh_outputs(
    std::vector<Tensor> outs,
    const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& dirty) {
  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor& o = outs[k];
    if (!o.defined()) {
      continue;
    }
    // A dirty input returned (the first time) keeps its identity: the op's
    // node becomes its history.
    if (among(o, dirty)) {
      bool first = true;
      for (size_t j = 0; j < k; ++j) {
        first = first && !same_tensor(outs[j], o);
      }
      if (first) {
        continue;
      }
    }
    bool taken = o.requires_grad() || o.grad_fn() != nullptr;
    for (const Tensor& in : inputs) {
      taken = taken || in.impl() == o.impl();
    }
    for (size_t j = 0; j < k; ++j) {
      taken = taken || outs[j].impl() == o.impl();
    }
    if (taken) {
      o = o.detach();
    }
  }
  return outs;
}

std::vector<bool> marked(
    const variable_list& marks,
    const variable_list& outputs) {
  std::vector<bool> out(outputs.size(), false);
  for (const Tensor& m : marks) {
    bool found = false;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (m.defined() && outputs[i].defined() &&
          m.impl() == outputs[i].impl()) {
        out[i] = true;
        found = true;
      }
    }
    DITTO_CHECK(
        found,
        ValueError,
        "Function.mark_non_differentiable",
        "a marked tensor is not one of the outputs forward returned");
  }
  return out;
}

variable_list materialized(
    const AutogradContext& ctx,
    const variable_list& grads) {
  variable_list out = grads;
  if (!ctx.materialize_grads_) {
    return out;
  }
  for (size_t i = 0; i < out.size() && i < ctx.outputs.size(); ++i) {
    if (!out[i].defined() && ctx.outputs[i]) {
      out[i] = zeros(ctx.outputs[i]->first, ctx.outputs[i]->second);
    }
  }
  return out;
}

} // namespace function_detail
} // namespace ditto::autograd
