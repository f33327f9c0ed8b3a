#pragma once

// User-defined ops (as torch.autograd.Function, or MLX's custom_vjp): a
// forward, a backward and a record (ditto/ops/record.h). A CustomOp is
// framed as ditto's own ops are: traced under its name with its inputs and
// outputs (the ops it calls are nested and neither traced nor recorded), one
// autograd node recorded with the policy in force, listed by `ditto ops`
// with its determinism class, named by `ditto verify`, and, for a
// nondeterministic path without a deterministic variant, alerting under
// use_deterministic_algorithms(true). See docs/custom_ops.md and
// examples/custom_op.cpp.

#include <functional>
#include <memory>
#include <vector>

#include "ditto/ops/record.h"

namespace ditto {

// What a custom op's forward passes to its backward, and the variant to run.
class DITTO_API CustomOpContext {
 public:
  // Keeps tensors for the backward (checked against in-place writes, as
  // every saved tensor is). Call from the forward.
  void save_for_backward(const std::vector<Tensor>& tensors);
  // In the backward: the saved tensors.
  std::vector<Tensor> saved_tensors() const;
  // True when the deterministic variant must run: the deterministic mode
  // of the policy in force (for the backward, the one recorded with its
  // node).
  bool deterministic() const;
  // What the call passed besides its tensors (CustomOp::operator()'s data:
  // a scale, a binding's callbacks), kept with the node for the backward.
  const std::shared_ptr<void>& data() const;

 private:
  friend class CustomOp;
  struct State;
  std::shared_ptr<State> state_;
};

class DITTO_API CustomOp {
 public:
  using Forward = std::function<std::vector<Tensor>(
      CustomOpContext& ctx,
      const std::vector<Tensor>& inputs)>;
  // One gradient per input from one per output (an undefined tensor means
  // zero, or no gradient).
  using Backward = std::function<std::vector<Tensor>(
      CustomOpContext& ctx,
      const std::vector<Tensor>& grad_outputs)>;

  // Registers record (register_op: ValueError if incomplete or the name is
  // taken). Without a backward the op is not differentiable: a backward
  // that reaches it raises, naming it. A nondeterministic path whose entry
  // ends in "_backward" alerts when the backward runs, any other when the
  // forward does.
  CustomOp(OpRecord record, Forward forward, Backward backward = {});

  // data reaches the forward and the backward as ctx.data() (per call;
  // the node keeps it alive as long as the graph holds the backward).
  std::vector<Tensor> operator()(
      const std::vector<Tensor>& inputs,
      std::shared_ptr<void> data = {}) const;
  const OpRecord& record() const {
    return *record_;
  }

 private:
  const OpRecord* record_;
  Forward forward_;
  Backward backward_;
};

} // namespace ditto
