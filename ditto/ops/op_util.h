#pragma once

// Internal helpers shared by the ops: the op scope (the one dispatch point),
// output allocation and the strided loop driver. Not installed.

#include <functional>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/core/tensor.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/trace/trace.h"

namespace ditto::detail {

// Every public op runs inside one OpScope: it fixes the floating-point
// environment for the kernels and reports the outputs to the trace hook.
// Later the determinism context is consulted here to pick kernel variants.
// Ops called by another op (a conversion inside add, say) are not reported:
// the trace shows what the user called.
class OpScope {
 public:
  explicit OpScope(const char* name) : name_(name) {
    ++depth();
  }
  ~OpScope() {
    --depth();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;
  const char* name() const {
    return name_;
  }
  // Reports t and returns it.
  const Tensor& done(const Tensor& t) const {
    if (trace::enabled() && depth() == 1) {
      trace::record(name_, {t});
    }
    return t;
  }
  void done(const std::vector<Tensor>& outs) const {
    if (trace::enabled() && depth() == 1) {
      trace::record(name_, outs);
    }
  }
  const kernels::KernelTable& kernels() const {
    return kernels::kernel_table();
  }

 private:
  static int& depth() {
    static thread_local int d = 0;
    return d;
  }
  const char* name_;
  FpEnvGuard fp_;
};

// A contiguous tensor whose contents are unspecified. Ops that write every
// element use it; it is never filled (unlike the public empty()).
Tensor new_tensor(const Shape& sizes, Dtype dtype);

// True when a and b read the same elements in the same layout.
bool same_view(const Tensor& a, const Tensor& b);
bool shares_storage(const Tensor& a, const Tensor& b);

// Raises ValueError if writing to t would write some element twice
// (a broadcast, expanded output).
void check_no_internal_overlap(const Tensor& t, const char* op);

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

} // namespace ditto::detail
