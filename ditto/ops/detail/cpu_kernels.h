#pragma once

// The CPU's kernel slots (Note [Device kernel slots] in
// ditto/kernels/device_kernels.h): the CPU's loops behind the slots' own
// signatures, so that an op body dispatches to every device one way,
// detail::device_slots(out, name).slot(...), and names none. Internal.

#include <functional>
#include <initializer_list>

#include "ditto/core/api.h"
#include "ditto/kernels/device_kernels.h"

namespace ditto::detail {

// The slots of t's device: the CPU's table below for a CPU tensor, else
// the table its device registered (InternalError naming op where it has
// none).
DITTO_API const kernels::DeviceKernels& device_slots(
    const Tensor& t,
    const char* op);

// The device an op's result goes to: its first operand's not on the CPU,
// else the CPU (Note [Ops on a device] in ditto/ops/detail/op_util.h: a
// 0-dim CPU operand is a scalar on any device; OpScope has checked that
// the others share one device).
inline Device op_device(
    std::initializer_list<std::reference_wrapper<const Tensor>> operands) {
  for (const Tensor& t : operands) {
    if (!t.is_cpu()) {
      return t.device();
    }
  }
  return kCPU;
}

// An operand for a slot: t (in the op's dtype) expanded to shape, or t
// itself where it is a 0-dim CPU tensor (a scalar on every device: Note
// [Ops on a device] in ditto/ops/detail/op_util.h).
inline Tensor slot_operand(const Tensor& t, const Shape& shape) {
  return (t.dim() == 0 && t.is_cpu()) || t.sizes() == shape ? t
                                                            : t.expand(shape);
}

// The CPU's slots, each of its slot's type (DITTO_DEVICE_KERNEL_TYPE): copies
// on one device (ops/detail/op_util.cpp), the elementwise family, clamp and
// nll_loss's (cpu_kernels.cpp), the reductions (ops/reduce/reduce.cpp), the
// index rows (ops/index/index.cpp) and the batched products
// (ops/linalg/linalg.cpp). Between the host and a device a copy takes the
// device's upload_into and to_host, which the CPU has no use for. Three
// slots have no CPU side yet, their ops still testing the device and
// running the CPU's loop in place, because the CPU's side is wider than
// the slot: conv2d (the CPU chooses among its algorithms, times them,
// caches the choice), max_pool2d (the CPU's loops pool 1 to 3 dims, in
// nn/) and philox_bernoulli (the CPU draws from any of its generators; a
// device's fills take the host's draws).
namespace cpu {
#define DITTO_CPU_SLOTS(X) \
  X(copy_into)             \
  X(binary)                \
  X(fused)                 \
  X(unary)                 \
  X(where)                 \
  X(reduce)                \
  X(arg_reduce)            \
  X(select_rows)           \
  X(add_rows)              \
  X(nll_terms)             \
  X(nll_sum)               \
  X(nll_backward)          \
  X(clamp)                 \
  X(gemm_batched)
#define DITTO_CPU_DECLARE_SLOT(name) DITTO_DEVICE_KERNEL_TYPE(name) name;
DITTO_CPU_SLOTS(DITTO_CPU_DECLARE_SLOT)
#undef DITTO_CPU_DECLARE_SLOT
} // namespace cpu

} // namespace ditto::detail
