#pragma once

// Internal: the engine under the elementwise ops (elementwise.cpp):
// PyTorch's type promotion, and the binary, unary, fused and clamp loops
// with their backward formulas. The public ops validate their arguments
// and call these.

#include <optional>

#include "ditto/core/scalar.h"
#include "ditto/core/tensor.h"
#include "ditto/kernels/cpu/kernel_table.h"

namespace ditto::detail {

// c10's combine_categories: a lower-priority operand only changes the
// result when it is of a higher category.
std::optional<Dtype> combine_categories(
    std::optional<Dtype> higher,
    std::optional<Dtype> lower);

// Operands in three priority classes, as torch.result_type: tensors with
// dims, zero-dim tensors, and wrapped scalars (whose float kind means the
// default dtype float32).
struct ResultTypeState {
  std::optional<Dtype> dim, zero, wrapped;
  void add(const Tensor& t) {
    auto& slot = t.dim() > 0 ? dim : zero;
    slot = slot ? promote_types(*slot, t.dtype()) : t.dtype();
  }
  void add(const Scalar& s) {
    Dtype d = s.is_floating() ? kFloat32 : s.dtype();
    wrapped = wrapped ? promote_types(*wrapped, d) : d;
  }
  Dtype result() const {
    auto r = combine_categories(dim, combine_categories(zero, wrapped));
    DITTO_ASSERT(r.has_value());
    return *r;
  }
};

// A scalar operand as a 0-d tensor of the compute dtype. Not an op of its
// own: the trace shows only the op the scalar was given to.
Tensor wrap(const Scalar& s, Dtype d);

// Whether a result of dtype from may be written into a tensor of dtype to.
bool can_cast(Dtype from, Dtype to);

// The core of every binary op: validate, promote, broadcast, run the loop.
// With out given (in-place), the result is written there.
Tensor binary(
    kernels::BinaryOp op,
    const Tensor& a,
    const Tensor& b_in,
    Dtype compute,
    const Tensor* out);
// Tensor-tensor, tensor-scalar and scalar-tensor forms.
Tensor binary_tt(kernels::BinaryOp op, const Tensor& a, const Tensor& b);
Tensor binary_ts(kernels::BinaryOp op, const Tensor& a, const Scalar& b);
Tensor binary_st(kernels::BinaryOp op, const Scalar& a, const Tensor& b);

// add(a, b, alpha), addcmul, addcdiv: one loop with PyTorch's roundings
// (kernel_table.h, FusedOp). Floating types only; c is null for AddScaled.
// With out given (in-place), the result is written there.
Tensor fused(
    kernels::FusedOp op,
    const char* name,
    const Tensor& a,
    const Tensor& b,
    const Tensor* c,
    double s,
    const Tensor* out);

// add/sub with alpha: floating operands take the fused loop; integer ones
// compute a + alpha*b exactly as PyTorch does for them. subtract: a -
// alpha*b, as a + (-alpha)*b with -alpha exact in double for floating
// results and wrapping for integer ones (alpha = -2^63 included).
Tensor add_scaled(
    const char* name,
    const Tensor& a,
    const Tensor& b,
    const Scalar& alpha,
    const Tensor* out,
    bool subtract = false);

Tensor unary(kernels::UnaryOp op, const Tensor& a);

// self = self op other, written by the kernel (a declared binary op's
// in-place form, "fmod_"); returns self.
Tensor& binary_inplace(kernels::BinaryOp op, Tensor& self, const Tensor& other);
Tensor& binary_inplace(kernels::BinaryOp op, Tensor& self, const Scalar& other);

// clamp into dst (a fresh tensor, or a in place).
void clamp_into(
    const char* name,
    const Tensor& dst,
    const Tensor& src,
    const std::optional<Scalar>& lo,
    const std::optional<Scalar>& hi);

} // namespace ditto::detail
