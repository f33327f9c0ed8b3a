#pragma once

// Internal helpers shared by the ops: the op scope (the one dispatch point),
// output allocation and the strided loop driver. Not installed.

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <span>
#include <vector>

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/parallel.h"
#include "ditto/core/tensor.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/record.h"
#include "ditto/trace/trace.h"

namespace ditto::detail {

// Chunk size for an elementwise loop over n elements: about two chunks per
// thread, at least kernels::kElementwiseGrain. Long chunks keep each thread
// streaming through long stretches of memory: float add of 1M elements on 2
// threads (AVX2, Zen 4) took 104 us in 32K-element chunks taken in turn,
// 73 us in four 256K ones; short ones still split small tensors. Chunking
// changes no value.
inline int64_t elementwise_grain(int64_t n) {
  const int64_t per = 2 * int64_t(get_num_threads());
  return std::max(kernels::kElementwiseGrain, (n + per - 1) / per);
}

// Note [Ops on a device]: an op given a tensor on a device raises unless it
// has a kernel there, as its record says (Note [Device kernels are
// declared] in ditto/ops/record.cpp; NotImplementedError naming the op and
// the device: never a silent round trip through the CPU), and unless every
// tensor is on
// that device, a 0-dim CPU tensor (a scalar) excepted, as in PyTorch. The
// copies between devices (to, copy_) take any mix; composite ops (linear,
// the losses built from other ops) are checked through their parts.
DITTO_API void check_devices(
    const char* op,
    const std::vector<const Tensor*>& inputs);

// Note [Sparse inputs]: a sparse COO tensor has no storage and no strides,
// so an op whose kernels read strided memory must never see one. OpScope
// refuses a sparse input with a TypeError naming the op unless the op's
// record says it takes sparse tensors (OpRecord::sparse): one check at the
// one dispatch point, instead of one per kernel.
DITTO_API void require_sparse_support(const char* op);

// Every public op runs inside one OpScope, the one dispatch point: it is
// told the op's inputs, fixes the floating-point environment for the
// kernels, records the op's backward on the autograd graph when an input
// requires grad, bumps the version of a tensor written in place, and reports
// inputs and outputs to the trace hook.
//
// Ops called by another op (a conversion inside add, say) are neither
// traced nor recorded: the trace shows what the user called and the graph
// holds the outer op's backward. A composite op (kComposite) records nothing
// itself and lets the ops it calls record, so its gradient comes from its
// parts. An op that returns a floating result from inputs that require grad
// without giving a backward records a node that raises "not implemented" if
// a backward reaches it: a gradient is never lost silently.
class OpScope {
 public:
  enum Kind { kPlain, kInplace, kComposite };
  using Inputs = std::initializer_list<std::reference_wrapper<const Tensor>>;

  // kInplace: inputs[0] is the tensor the op writes.
  OpScope(const char* name, Inputs inputs = {}, Kind kind = kPlain)
      : name_(name), kind_(kind), error_name_(name) {
    enter(inputs.begin(), inputs.end(), [](auto it) { return &it->get(); });
  }
  OpScope(
      const char* name,
      const std::vector<Tensor>& inputs,
      Kind kind = kPlain)
      : name_(name), kind_(kind), error_name_(name) {
    enter(inputs.begin(), inputs.end(), [](auto it) { return &*it; });
  }
  // The scope keeps pointers to its inputs until done(): a temporary list
  // would dangle, so only a list that outlives the scope is taken.
  OpScope(const char* name, std::vector<Tensor>&& inputs, Kind kind = kPlain) =
      delete;
  ~OpScope() {
    if (kind_ != kComposite) {
      --opaque_depth();
    }
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  const char* name() const {
    return name_;
  }
  const kernels::KernelTable& kernels() const {
    return kernels::kernel_table();
  }
  // True when this op will record a node (grad mode on, an input requires
  // grad, not called from inside another op).
  bool needs_grad() const {
    return needs_grad_;
  }
  // What a backward closure keeps of t: empty unless the op records.
  autograd::SavedTensor save(const Tensor& t) {
    if (!needs_grad_) {
      return {};
    }
    saved_.emplace_back(t);
    return saved_.back();
  }

  // The op's result(s), with the backward that maps the outputs' gradients
  // to one gradient per input (undefined: none). Returns the output.
  const Tensor& done(const Tensor& out) {
    finish({&out, 1}, nullptr, false);
    return out;
  }
  template <typename F>
  const Tensor& done(const Tensor& out, F&& backward) {
    finish(
        {&out, 1},
        needs_grad_ ? autograd::BackwardFn(backward) : nullptr,
        false);
    return out;
  }
  void done(const std::vector<Tensor>& outs) {
    finish(outs, nullptr, false);
  }
  template <typename F>
  void done(const std::vector<Tensor>& outs, F&& backward) {
    finish(outs, needs_grad_ ? autograd::BackwardFn(backward) : nullptr, false);
  }
  // A view of inputs[0]: as done, and marks out as a differentiable view.
  template <typename F>
  Tensor done_view(const Tensor& out, F&& backward) {
    finish(
        {&out, 1},
        needs_grad_ ? autograd::BackwardFn(backward) : nullptr,
        true);
    return out;
  }
  // inputs[0] (self) was written: bumps its version and, when recording,
  // rebases its history onto this op's node.
  Tensor& done_inplace(Tensor& self) {
    finish({&self, 1}, nullptr, false);
    return self;
  }
  template <typename F>
  Tensor& done_inplace(Tensor& self, F&& backward) {
    finish(
        {&self, 1},
        needs_grad_ ? autograd::BackwardFn(backward) : nullptr,
        false);
    return self;
  }

 private:
  // Raises (before counting this frame as opaque, so an error leaves the
  // thread's state as it was) if autograd cannot take an in-place op.
  template <typename It, typename Get>
  void enter(It first, It last, Get get) {
    if (frame_.outermost()) {
      require_op_record(name_); // Note [Op records]
    }
    run_deferred(); // layers' pending initial draws come first
    // One pass over the inputs: sparse ones need an op that takes them
    // (Note [Sparse inputs]); a composite op runs on a device when its
    // parts do (they check).
    for (It it = first; it != last; ++it) {
      const Tensor* t = get(it);
      if (!t->defined()) {
        continue;
      }
      if (t->impl()->is_sparse()) {
        require_sparse_support(name_);
      }
      if (kind_ != kComposite && !t->device().is_cpu()) {
        std::vector<const Tensor*> all;
        for (It jt = first; jt != last; ++jt) {
          all.push_back(get(jt));
        }
        check_devices(name_, all);
        break;
      }
    }
    const bool outermost = opaque_depth() == 0;
    const bool tracing = frame_.outermost() && trace::enabled();
    if (outermost && kind_ != kComposite && autograd::GradMode::is_enabled()) {
      for (It it = first; it != last && !needs_grad_; ++it) {
        needs_grad_ = autograd::requires_grad(*get(it));
      }
    }
    if (needs_grad_ || tracing) {
      for (It it = first; it != last; ++it) {
        inputs_.push_back(get(it));
      }
    }
    if (needs_grad_) {
      for (size_t k = 0; k < inputs_.size(); ++k) {
        if (kind_ == kInplace && k == 0) {
          autograd::check_inplace(*inputs_[0], name_);
        } else {
          autograd::check_view_fresh(*inputs_[k], name_);
        }
      }
    }
    if (kind_ != kComposite) {
      ++opaque_depth();
    }
  }
  void finish(
      std::span<const Tensor> outs,
      autograd::BackwardFn backward,
      bool view);

  static int& opaque_depth() {
    static thread_local int d = 0;
    return d;
  }
  const char* name_;
  Kind kind_;
  bool needs_grad_ = false;
  std::vector<autograd::SavedTensor> saved_;
  std::vector<const Tensor*> inputs_;
  trace::Frame frame_; // before anything that can raise in the constructor
  detail::OpNameFrame error_name_;
  FpEnvGuard fp_;
};

// True when a and b read the same elements in the same layout.
bool same_view(const Tensor& a, const Tensor& b);
bool shares_storage(const Tensor& a, const Tensor& b);

// Raises ValueError if writing to t would write some element twice
// (a broadcast, expanded output).
void check_no_internal_overlap(const Tensor& t, const char* op);

// Note [Storage dtypes]: t is float16, bfloat16, int8 or int16, which ops
// compute in compute_dtype; an op that is not elementwise runs whole on
// upcast(t) and rounds its result once (PyTorch's CPU computes float16 and
// bfloat16 in float32 inside such kernels).
inline bool is_storage(const Tensor& t) {
  return t.defined() && !has_kernels(t.dtype());
}
inline Tensor upcast(const Tensor& t) {
  return is_storage(t) ? t.to(compute_dtype(t.dtype())) : t;
}

struct LoopOperand {
  char* data;
  Shape strides; // in elements, one per dim of the loop's sizes
};

// fn(ptrs, strides, n): process n elements starting at ptrs[k], operand k
// advancing by strides[k] elements. Called over runs of the innermost dim
// after dims are coalesced; the flat range is cut into fixed chunks run on
// the thread pool (results do not depend on it: each output element is
// computed by exactly one call).
using InnerLoop =
    std::function<void(char* const* ptrs, const int64_t* strides, int64_t n)>;
void run_loop(
    const Shape& sizes,
    const std::vector<LoopOperand>& operands,
    const std::vector<size_t>& element_sizes,
    const InnerLoop& fn);

// Writes src (broadcast to dst's shape) into dst with dtype conversion.
void copy_into(const Tensor& dst, const Tensor& src, const char* op);

// ValueError naming op when t is undefined: the check at the top of an op
// body (core's Tensor::check_defined is Tensor's own).
inline void check_defined(const Tensor& t, const char* op) {
  DITTO_CHECK(t.defined(), ValueError, op, "undefined tensor");
}

// The out-of-place form of an in-place op: a copy of self, changed. A
// composite frame: the clone and the in-place op record the gradient.
template <typename F>
Tensor on_copy(const Tensor& self, const char* name, F change) {
  OpScope op(name, {self}, OpScope::kComposite);
  DITTO_CHECK(self.defined(), ValueError, name, "undefined tensor");
  Tensor t = self.clone();
  change(t);
  return op.done(t);
}

// self = fn(self) in place. Under autograd fn reads a copy of self, so what
// fn saves for its backward is not the tensor being overwritten.
template <typename F>
Tensor& inplace_from(Tensor& self, const char* name, F fn) {
  OpScope op(name, {self}, OpScope::kComposite);
  DITTO_CHECK(self.defined(), ValueError, name, "undefined tensor");
  const bool recording =
      autograd::GradMode::is_enabled() && autograd::requires_grad(self);
  Tensor result = fn(recording ? self.clone() : self);
  DITTO_CHECK(
      result.dtype() == self.dtype(),
      TypeError,
      name,
      "result type ",
      result.dtype(),
      " can't be cast to the desired output type ",
      self.dtype());
  self.copy_(result);
  return op.done_inplace(self);
}

} // namespace ditto::detail
