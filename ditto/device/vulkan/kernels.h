#pragma once

// The ops' kernels on a Vulkan device (Note [The Vulkan device] in
// runtime.cpp). Called by the ops after they validated their arguments, with
// every tensor operand on one Vulkan device except where a function says
// otherwise. Internal.

#include <string_view>

#include "ditto/core/tensor.h"

namespace ditto::vulkan {

// Whether the op named `op` (its record's name) runs on a Vulkan device,
// and whether it may mix a device tensor with CPU tensors of any shape (the
// copies between devices). OpScope asks both for every op that is given a
// device tensor (Note [Ops on a device] in ditto/ops/detail/op_util.cpp).
bool has_kernel(std::string_view op);
bool mixes_devices(std::string_view op);
// The names of the ops with a Vulkan kernel, sorted.
std::vector<std::string_view> ops_with_kernels();

// dst = src (broadcast to dst's shape, converted to dst's dtype where the
// dtypes differ and one side is the CPU), for any pair of devices of which
// at least one is a Vulkan device.
void copy_into(const Tensor& dst, const Tensor& src, const char* op);

// out = a op b elementwise (kernels::BinaryOp numbering), a and b expanded
// to out's shape; a 0-dim CPU tensor stands for a scalar.
void binary(
    int op,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* name);
// out = the fused op (kernels::FusedOp numbering: AddScaled, Addcmul) of
// x, y, z (z null for AddScaled) with the scalar s, operands expanded to
// out's shape; a 0-dim CPU tensor stands for a scalar.
void fused(
    int op,
    double s,
    const Tensor& out,
    const Tensor& x,
    const Tensor& y,
    const Tensor* z,
    const char* name);
// out = op(x) (kernels::UnaryOp numbering), same shape.
void unary(int op, const Tensor& out, const Tensor& x, const char* name);
// out = cond ? a : b (4-byte elements) with cond, a, b expanded to out's
// shape; a or b may be a 0-dim CPU tensor (a scalar).
void where(
    const Tensor& out,
    const Tensor& cond,
    const Tensor& a,
    const Tensor& b,
    const char* name);

// sum (mean: divided by inner) of each of the `rows` rows of `inner`
// elements of view (row-major over view's shape) into out (rows elements,
// contiguous), with the CPU's chunks, lanes and trees (reduce.cpp).
void reduce_sum(
    const Tensor& out,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    bool mean,
    const char* name);

// One matrix of a product: elements at offset + i * rs + j * cs of t's
// storage (the offset counts from the storage's start).
struct Matrix {
  const Tensor* t;
  int64_t offset, rs, cs;
};
// c (m x n) = a (m x k) b (k x n), float32, each output the CPU's chain
// (Note [GEMM accumulation order]).
void gemm(
    Matrix c,
    Matrix a,
    Matrix b,
    int64_t m,
    int64_t k,
    int64_t n,
    const char* name);

} // namespace ditto::vulkan
