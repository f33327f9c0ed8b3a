#pragma once

// LibTorch's custom autograd functions (torch::autograd::Function<T>) on
// ditto's CustomOp (ditto/ops/custom.h):
//
//   struct MulConstant : autograd::Function<MulConstant> {
//     static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static variable_list backward(AutogradContext* ctx, variable_list g) {
//       return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};
//     }
//   };
//   Tensor y = MulConstant::apply(x, 5.5);
//
// Each Function class is one op with its own record (named after the
// class, family "custom"): traced, listed by `ditto ops`, one autograd node
// recorded with the determinism policy in force. backward returns one
// gradient per argument of forward (an undefined Tensor for the others); a
// gradient that no output received arrives as zeros unless
// ctx->set_materialize_grads(false). See docs/custom_ops.md. (Here in ops/,
// not autograd/: a Function is an op with its record; autograd, below ops,
// is the graph and the engine. Until 2026-12-04 this was
// ditto/autograd/function.h; ditto/ditto.h includes it.)

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/custom.h"

namespace ditto::autograd {

using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

// A value kept in ctx->saved_data (LibTorch's IValue, for the types a
// backward needs): a double, an int, a bool, a string, a tensor or a list
// of ints. to*() throws TypeError naming both types on a mismatch.
class DITTO_API IValue {
 public:
  IValue() = default;
  IValue(double v) : v_(v) {}
  IValue(float v) : v_(double(v)) {}
  IValue(int64_t v) : v_(v) {}
  IValue(int v) : v_(int64_t(v)) {}
  IValue(bool v) : v_(v) {}
  IValue(std::string v) : v_(std::move(v)) {}
  IValue(const char* v) : v_(std::string(v)) {}
  IValue(Tensor v) : v_(std::move(v)) {}
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}

  bool isNone() const {
    return v_.index() == 0;
  }
  bool isDouble() const {
    return std::holds_alternative<double>(v_);
  }
  bool isInt() const {
    return std::holds_alternative<int64_t>(v_);
  }
  bool isBool() const {
    return std::holds_alternative<bool>(v_);
  }
  bool isString() const {
    return std::holds_alternative<std::string>(v_);
  }
  bool isTensor() const {
    return std::holds_alternative<Tensor>(v_);
  }
  bool isIntList() const {
    return std::holds_alternative<std::vector<int64_t>>(v_);
  }
  // An int reads as a double too, as LibTorch's toDouble does not; ditto
  // allows it (a scale given as 2).
  double toDouble() const {
    if (isInt()) {
      return double(std::get<int64_t>(v_));
    }
    return get<double>("double");
  }
  int64_t toInt() const {
    return get<int64_t>("int");
  }
  bool toBool() const {
    return get<bool>("bool");
  }
  const std::string& toStringRef() const {
    return get<std::string>("string");
  }
  Tensor toTensor() const {
    return get<Tensor>("Tensor");
  }
  std::vector<int64_t> toIntVector() const {
    return get<std::vector<int64_t>>("int list");
  }
  // "None", "double", "int", "bool", "string", "Tensor", "int list".
  const char* type_name() const;

 private:
  template <typename T>
  const T& get(const char* want) const {
    if (const T* p = std::get_if<T>(&v_)) {
      return *p;
    }
    detail::throw_error<TypeError>(
        "IValue", "expected ", want, " but the value is ", type_name());
  }
  std::variant<
      std::monostate,
      double,
      int64_t,
      bool,
      std::string,
      Tensor,
      std::vector<int64_t>>
      v_;
};

// What forward passes to backward (LibTorch's AutogradContext).
class DITTO_API AutogradContext {
 public:
  // Keeps tensors for backward (checked against later in-place writes).
  void save_for_backward(variable_list to_save);
  // In backward: the saved tensors, in order.
  variable_list get_saved_variables() const;
  // In backward: whether the index-th argument of forward (counting every
  // argument) is a tensor that requires grad.
  bool needs_input_grad(size_t index) const;
  // false: gradients no output received arrive undefined, not as zeros.
  void set_materialize_grads(bool value) {
    materialize_grads_ = value;
  }
  // In forward: these outputs (tensors forward returns) get no gradient:
  // apply returns them not requiring grad, and backward receives zeros (or
  // undefined, without materialized grads) in their places.
  void mark_non_differentiable(const variable_list& outputs);
  // In forward: these inputs were changed in place, and forward returns
  // them (LibTorch's mark_dirty). apply returns the input itself, its
  // history now this function's node (the input's gradient still flows to
  // its old history through backward). ValueError for a marked tensor
  // forward did not take or did not return, and for a leaf that requires
  // grad (as any in-place op on one; forward has run by then).
  void mark_dirty(const variable_list& inputs);

  // Anything else backward needs: ctx->saved_data["scale"] = 2.5.
  std::unordered_map<std::string, IValue> saved_data;

  // ---- used by Function<T>::apply
  CustomOpContext* op_context = nullptr;
  std::vector<bool> input_requires_grad;
  bool materialize_grads_ = true;
  // mark_non_differentiable's tensors, then their places among the outputs.
  variable_list non_differentiable;
  std::vector<bool> output_non_differentiable;
  // mark_dirty's tensors, and whether grad mode was on at apply.
  variable_list dirty;
  bool grad_enabled = false;
  // Each output's sizes and dtype (for zeros in place of a missing
  // gradient); nullopt for an undefined output.
  std::vector<std::optional<std::pair<Shape, Dtype>>> outputs;
};

namespace function_detail {

DITTO_API std::string function_op_name(const char* mangled);
DITTO_API const CustomOp& function_op(
    const std::string& name,
    CustomOp::Forward forward,
    CustomOp::Backward backward);
// The outputs of a forward: an input returned as is, or a tensor with a
// history of its own, becomes a new tensor on the same storage (so its
// own grad_fn and leafness stay), as in ditto.autograd.Function.
// Outputs that are dirty inputs (mark_dirty) stay the inputs themselves.
DITTO_API std::vector<Tensor> fresh_outputs(
    std::vector<Tensor> outs,
    const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& dirty);
// ValueError unless every dirty tensor is an input forward returned, and
// (with grad on) not a leaf that requires grad.
DITTO_API void check_dirty(
    const AutogradContext& ctx,
    const variable_list& inputs,
    const variable_list& outputs);
// The gradients backward receives: zeros where none arrived (unless the
// context asked not to materialize them).
DITTO_API variable_list
materialized(const AutogradContext& ctx, const variable_list& grads);
// For each output, whether it is one of the marked tensors (the same
// tensor: the same impl); ValueError naming a marked tensor that forward
// did not return.
DITTO_API std::vector<bool> marked(
    const variable_list& marks,
    const variable_list& outputs);

template <typename A>
inline constexpr bool is_tensor_arg_v = std::is_same_v<std::decay_t<A>, Tensor>;

// One call of Function<T>::apply: the arguments, the context and how to
// run T's forward with the op's tensors in the tensor arguments' places.
struct FunctionCall {
  AutogradContext ctx;
  std::function<variable_list(AutogradContext&, const variable_list&)> forward;
  // For each argument of forward: its index among the op's tensor
  // inputs, or -1.
  std::vector<int> tensor_slot;
};

template <typename R>
variable_list as_list(R&& r) {
  if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) {
    return {std::forward<R>(r)};
  } else {
    return variable_list(r.begin(), r.end());
  }
}

} // namespace function_detail

template <class T>
struct Function {
  // Runs T::forward(ctx, args...) as one op whose backward is
  // T::backward(ctx, grads). Returns what forward returns (a Tensor or a
  // variable_list).
  template <typename... Args>
  static auto apply(Args&&... args) {
    using Result = decltype(T::forward(
        static_cast<AutogradContext*>(nullptr), std::forward<Args>(args)...));
    static const CustomOp& op = function_detail::function_op(
        function_detail::function_op_name(typeid(T).name()),
        run_forward,
        run_backward);

    auto call = std::make_shared<function_detail::FunctionCall>();
    call->ctx.grad_enabled = GradMode::is_enabled();
    variable_list inputs;
    (
        [&](auto& a) {
          if constexpr (function_detail::is_tensor_arg_v<decltype(a)>) {
            call->tensor_slot.push_back(int(inputs.size()));
            inputs.push_back(a);
            call->ctx.input_requires_grad.push_back(
                a.defined() && a.requires_grad());
          } else {
            call->tensor_slot.push_back(-1);
            call->ctx.input_requires_grad.push_back(false);
          }
        }(args),
        ...);
    // The op hands its tensor inputs back in order; the other arguments
    // are taken from here (the call outlives the forward).
    auto tuple = std::forward_as_tuple(std::forward<Args>(args)...);
    call->forward = [&tuple](AutogradContext& ctx, const variable_list& in) {
      size_t next = 0;
      auto pick = [&](auto&& a) -> decltype(auto) {
        if constexpr (function_detail::is_tensor_arg_v<decltype(a)>) {
          return Tensor(in[next++]);
        } else {
          return std::forward<decltype(a)>(a);
        }
      };
      return std::apply(
          [&](auto&&... a) {
            // Left to right (a braced list), as the op ordered the inputs.
            auto picked = std::tuple<decltype(pick(a))...>{pick(a)...};
            return std::apply(
                [&](auto&&... p) {
                  return function_detail::as_list(
                      T::forward(&ctx, std::forward<decltype(p)>(p)...));
                },
                std::move(picked));
          },
          tuple);
    };
    variable_list outs = op(inputs, call);
    call->forward = nullptr;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (i < call->ctx.output_non_differentiable.size() &&
          call->ctx.output_non_differentiable[i] && outs[i].defined()) {
        outs[i] = outs[i].detach();
      }
    }
    if constexpr (std::is_same_v<std::decay_t<Result>, Tensor>) {
      return outs.at(0);
    } else {
      return Result(outs.begin(), outs.end());
    }
  }

 private:
  static variable_list run_forward(
      CustomOpContext& octx,
      const variable_list& inputs) {
    auto* call = static_cast<function_detail::FunctionCall*>(octx.data().get());
    call->ctx.op_context = &octx;
    variable_list outs = call->forward(call->ctx, inputs);
    function_detail::check_dirty(call->ctx, inputs, outs);
    call->ctx.output_non_differentiable =
        function_detail::marked(call->ctx.non_differentiable, outs);
    call->ctx.non_differentiable.clear();
    call->ctx.outputs.clear();
    for (const Tensor& o : outs) {
      call->ctx.outputs.push_back(
          o.defined() ? std::optional(std::pair(o.sizes(), o.dtype()))
                      : std::nullopt);
    }
    variable_list dirty = std::move(call->ctx.dirty);
    call->ctx.dirty.clear();
    return function_detail::fresh_outputs(std::move(outs), inputs, dirty);
  }

  static variable_list run_backward(
      CustomOpContext& octx,
      const variable_list& grads) {
    auto* call = static_cast<function_detail::FunctionCall*>(octx.data().get());
    call->ctx.op_context = &octx;
    variable_list g = T::backward(
        &call->ctx, function_detail::materialized(call->ctx, grads));
    // Undefined gradients past the arguments given (a defaulted argument's)
    // are dropped, as LibTorch drops them.
    while (g.size() > call->tensor_slot.size() && !g.back().defined()) {
      g.pop_back();
    }
    DITTO_CHECK(
        g.size() == call->tensor_slot.size(),
        ValueError,
        "Function.backward",
        "function backward returned an incorrect number of gradients "
        "(expected ",
        call->tensor_slot.size(),
        ", got ",
        g.size(),
        ")");
    variable_list per_input;
    for (size_t i = 0; i < g.size(); ++i) {
      if (call->tensor_slot[i] >= 0) {
        per_input.push_back(g[i]);
      }
    }
    return per_input;
  }
};

} // namespace ditto::autograd
