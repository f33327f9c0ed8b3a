#pragma once

// What linalg.cpp (the batched GEMM, mm, bmm) and matmul.cpp (matmul,
// addmm, linear) share. Internal.

#include <cstdint>
#include <vector>

#include "ditto/autograd/graph.h"
#include "ditto/core/tensor.h"

namespace ditto::gemm_impl {

// One matrix of a batch: element offsets of its first element from a's and
// b's data pointers.
struct BatchOffsets {
  std::vector<int64_t> a, b;
};

// out[bi] = A[bi] @ B[bi] for every batch bi: A's matrices are [m, k] with
// strides (a_rs, a_cs) from a.data + offsets.a[bi], likewise B; out is a
// contiguous [batches, m, n] tensor (Note [Split-K on a device]).
void gemm_batched(
    const Tensor& a,
    int64_t a_rs,
    int64_t a_cs,
    const Tensor& b,
    int64_t b_rs,
    int64_t b_cs,
    const BatchOffsets& off,
    int64_t m,
    int64_t k,
    int64_t n,
    Tensor& out,
    const char* op);
// a and b hold their elements in storage (neither is sparse).
bool storage_pair(const Tensor& a, const Tensor& b);
// TypeError naming op unless a and b are floating tensors of one dtype.
void check_float_pair(const Tensor& a, const Tensor& b, const char* op);
// a @ b for 2-d a and b, under op's name.
Tensor mm_impl(const Tensor& a, const Tensor& b, const char* op);

// Note [Gradients in their operand's layout]
// The gradient of a column-major operand (a transposed view, as linear's
// weight.t()) is computed as the transposed product, so that it has the
// operand's strides: t()'s backward then hands the weight a contiguous
// gradient, which the accumulation into weight.grad reads in order. A
// transposed 9216x4096 gradient added into a contiguous .grad took 400 ms
// of an AlexNet-sized training step at batch 8 (half the step). Each
// element is the same chain over k with the factors of each product
// swapped, so no bit changes (PyTorch's mm backward does the same).
inline bool column_major(const Tensor& t) {
  return t.dim() == 2 && t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 &&
      t.stride(1) == t.size(0);
}

// The gradients of a @ b (2-d) for the output gradient g, each in its
// operand's layout; mul is mm or matmul.
template <typename Mul>
autograd::GradList product_grads(
    const Tensor& a,
    const Tensor& b,
    const Tensor& g,
    Mul mul) {
  Tensor ga = column_major(a) ? mul(b, g.t()).t() : mul(g, b.t());
  Tensor gb = column_major(b) ? mul(g.t(), a).t() : mul(a.t(), g);
  return autograd::GradList{ga, gb};
}

} // namespace ditto::gemm_impl
