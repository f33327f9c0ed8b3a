#pragma once

// The autograd graph: what a tensor carries (AutogradMeta), the nodes ops
// record (Node), the tensors nodes keep (SavedTensor) and the grad mode.
// Below the ops: it depends on core and the determinism policy only. The
// engine that runs the graph is in engine.h, above the ops.
// See docs/autograd.md.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/tensor.h"
#include "ditto/determinism/context.h"
#include "ditto/trace/trace.h"

namespace ditto::autograd {

class Node;

// Where a gradient goes: output `input_nr` of `node`'s forward (the slot of
// node's gradient buffer). An edge without a node carries nothing.
struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
  bool valid() const {
    return node != nullptr;
  }
};

using GradList = std::vector<Tensor>;
// One gradient per forward input from one per forward output; an undefined
// tensor means zero (or "not differentiable").
using BackwardFn = std::function<GradList(const GradList& grad_outputs)>;

// The shape, dtype and device a gradient must have.
struct TensorMeta {
  Shape sizes;
  Dtype dtype = kFloat32;
  Device device = kCPU;
};

// One recorded op (or a leaf's gradient accumulator). Nodes are created in
// increasing sequence number; a node's consumers always come later, so the
// engine runs them in decreasing sequence number, whatever the thread count.
class DITTO_API Node {
 public:
  // Frees the nodes only this one kept alive without recursing (Note
  // [Freeing deep graphs]): a chain of a million ops is freed in constant
  // stack.
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch's name for this node ("MulBackward0", "MulBackward1" for a
  // tensor times a number, "torch::autograd::AccumulateGrad"), as
  // grad_fn()->name() gives it in LibTorch and Python (docs/autograd.md,
  // "Node names"): the op record's grad_fn, else derived from the op.
  // Worked out on the first call.
  const std::string& name() const;
  // ditto's name for the backward op in traces ("mul_backward",
  // "AccumulateGrad").
  const std::string& op_name() const {
    return op_name_;
  }
  uint64_t sequence_nr() const {
    return sequence_nr_;
  }
  // One edge per forward input, in the forward's argument order.
  const std::vector<Edge>& next_functions() const {
    return next_;
  }
  // The determinism settings in force when the forward ran; the backward's
  // kernels run under them.
  const determinism::Policy& policy() const {
    return policy_;
  }
  // Shape and dtype of each forward input (what its gradient must be).
  const std::vector<TensorMeta>& input_metas() const {
    return input_metas_;
  }
  // Shape and dtype of each forward output (zeros stand for a missing one).
  const std::vector<TensorMeta>& output_metas() const {
    return output_metas_;
  }
  // The name of the forward op that recorded this node ("mul").
  const std::string& forward_name() const {
    return forward_name_;
  }
  // The module the forward op ran in, kept while tracing (null otherwise):
  // the trace shows the backward node in the same module.
  const trace::ModuleRef& trace_module() const {
    return module_;
  }

 protected:
  Node(std::string op_name, std::string forward_name);

 private:
  friend class NodeBuilder;
  std::string op_name_;
  std::string forward_name_;
  mutable std::once_flag name_once_;
  mutable std::string name_;
  uint64_t sequence_nr_;
  determinism::Policy policy_;
  trace::ModuleRef module_;
  std::vector<Edge> next_;
  std::vector<TensorMeta> input_metas_;
  std::vector<TensorMeta> output_metas_;
};

// A node recorded by an op: runs its backward closure.
class DITTO_API FunctionNode final : public Node {
 public:
  FunctionNode(std::string name, std::string forward_name, BackwardFn fn);
  ~FunctionNode() override;
  // Runs the closure; raises if its saved tensors were freed.
  GradList apply(const GradList& grad_outputs);
  // Frees the closure and what it saved (after a backward without
  // retain_graph). Nodes that saved nothing keep running.
  void release();
  bool has_saved() const {
    return has_saved_;
  }
  void set_has_saved(bool v) {
    has_saved_ = v;
  }
  // Tensors that asked to keep their gradient (retain_grad), by output slot.
  std::vector<std::weak_ptr<TensorImpl>>& retained() {
    return retained_;
  }

 private:
  std::shared_ptr<const BackwardFn> fn_; // Note [Backward on one graph ...]
  bool has_saved_ = false;
  bool released_ = false;
  std::vector<std::weak_ptr<TensorImpl>> retained_;
};

// Sums incoming gradients into a leaf's .grad.
class DITTO_API AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  const std::shared_ptr<TensorImpl>& leaf() const {
    return leaf_;
  }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

// What autograd keeps for one tensor.
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;
  // Set for a tensor an op produced while recording; empty for a leaf.
  std::shared_ptr<FunctionNode> grad_fn;
  uint32_t output_nr = 0;
  // A leaf's accumulator, made at its first use in a recorded op.
  std::weak_ptr<AccumulateGrad> grad_accumulator;
  // A differentiable view: the storage version when it was taken (an
  // in-place change of its base after that makes its graph stale).
  bool is_view = false;
  uint64_t view_version = 0;
};

// The lock for one leaf's .grad and accumulator: one of a fixed set of
// mutexes, chosen by the leaf's address. Backward passes on several threads
// that reach one leaf add into its .grad one at a time (as PyTorch's
// AccumulateGrad locks), so no contribution is lost (docs/autograd.md,
// "Threads").
DITTO_API std::mutex& leaf_mutex(const TensorImpl* leaf);

DITTO_API AutogradMeta* meta(const Tensor& t);
DITTO_API AutogradMeta& ensure_meta(const Tensor& t);

// True when t takes part in autograd: a leaf that requires grad or a tensor
// an op produced from one.
inline bool requires_grad(const Tensor& t) {
  auto* m = t.defined() ? t.impl()->autograd_meta() : nullptr;
  return m != nullptr && (m->requires_grad || m->grad_fn != nullptr);
}

// Where t's gradient goes: its grad_fn's slot, or its leaf accumulator.
DITTO_API Edge gradient_edge(const Tensor& t);

// PyTorch's name for a tensor in messages: "[torch.FloatTensor [3, 4]]".
DITTO_API std::string describe(const Tensor& t);

// ---- grad mode
class DITTO_API GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Within its scope ops record nothing (torch.no_grad).
class DITTO_API NoGradGuard {
 public:
  NoGradGuard() : previous_(GradMode::is_enabled()) {
    GradMode::set_enabled(false);
  }
  ~NoGradGuard() {
    GradMode::set_enabled(previous_);
  }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Within its scope ops record again (torch.enable_grad).
class DITTO_API EnableGradGuard {
 public:
  EnableGradGuard() : previous_(GradMode::is_enabled()) {
    GradMode::set_enabled(true);
  }
  ~EnableGradGuard() {
    GradMode::set_enabled(previous_);
  }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool previous_;
};

// A tensor a node keeps for its backward: the data (never its graph, so no
// cycle through an op's own output) and the version it had. unpack() raises
// PyTorch's error if an in-place op changed it since.
class DITTO_API SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);
  Tensor unpack() const;
  bool defined() const {
    return data_.defined();
  }

  // An in-place op that saves the tensor it writes takes the version after
  // its own bump (the op frame calls this).
  void restamp() const;
  bool is_of(const Tensor& t) const;

 private:
  friend class NodeBuilder;
  struct Info {
    uint64_t version = 0;
    // For the error message only: the tensor saved, and for an op's own
    // output the node that produced it and which output it is ("output 0
    // of ExpBackward0"), set when the node is recorded (the node's name is
    // worked out only if the message is written).
    std::weak_ptr<TensorImpl> original;
    std::weak_ptr<Node> output_of;
    uint32_t output_nr = 0;
  };
  Tensor data_;
  std::shared_ptr<Info> info_; // shared by the copies a closure holds
};

// Builds the node of one recorded op; used by the op frame.
class DITTO_API NodeBuilder {
 public:
  // Records a node named name + "_backward" whose edges lead to inputs and
  // makes it the grad_fn of outputs (slot k for outputs[k]). With
  // inplace_self, outputs[0] is inputs[0] modified in place: its history is
  // rebased onto the new node.
  static void record(
      const char* forward_name,
      const std::vector<const Tensor*>& inputs,
      std::span<const Tensor> outputs,
      BackwardFn fn,
      const std::vector<SavedTensor>& saved,
      bool inplace_self);
};

// Raises PyTorch's errors for an in-place op on t that autograd cannot
// take: a leaf that requires grad (with grad mode on), or a view of a
// tensor that requires grad.
DITTO_API void check_inplace(const Tensor& t, const char* op);
// Raises if t is a differentiable view whose base changed in place after
// the view was taken (its graph would be stale).
DITTO_API void check_view_fresh(const Tensor& t, const char* op);

} // namespace ditto::autograd

namespace ditto::detail {
// PyTorch's class name for the backward node of the op named forward, where
// it is not derived from the op's name (conv2d's is ConvolutionBackward0).
// The op registry declares it with the op's record (ditto/ops/record.cpp,
// the record's grad_fn field), so that autograd, below ops, reads no record.
void declare_grad_fn_name(std::string forward, std::string grad_fn);
} // namespace ditto::detail

namespace ditto {
// LibTorch's spellings: torch::NoGradGuard, torch::GradMode.
using autograd::EnableGradGuard;
using autograd::GradMode;
using autograd::NoGradGuard;
} // namespace ditto
