#pragma once

// The ops' kernels on a Vulkan device (Note [The Vulkan device] in
// runtime.cpp). Called by the ops after they validated their arguments, with
// every tensor operand on one Vulkan device except where a function says
// otherwise. Internal.

#include <array>
#include <string_view>

#include "ditto/core/tensor.h"
#include "ditto/kernels/conv_geometry.h"

namespace ditto::vulkan {

// Which ops run here is said by each op's declaration or record, not by a
// list of the device's (Note [Device kernels are declared] in
// ditto/ops/record.cpp).

// dst = src on one Vulkan device: broadcast to dst's shape, converted to
// dst's dtype.
void copy_into(const Tensor& dst, const Tensor& src, const char* op);
// Between the host and a device, bytes only (the op layer converts and
// broadcasts on the host: ditto::detail::copy_into): dst (a Vulkan tensor,
// any strides) takes host's values, host a contiguous CPU tensor of dst's
// sizes and dtype; to_host returns src's values as such a CPU tensor.
void upload_into(const Tensor& dst, const Tensor& host, const char* op);
Tensor to_host(const Tensor& src, const char* op);

// out = a op b elementwise, a and b expanded to out's shape; a 0-dim CPU
// tensor stands for a scalar. code: the binary shaders' op code (the
// declaration's vulkan field), -1 where the op has none; compare: a bool
// result; float64: the shader needs float64 (div's exact quotient).
void binary(
    int code,
    bool compare,
    bool float64,
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
// code: the unary_f32 shader's op code (the declaration's vulkan field),
// -1 where the op has none; float64: the shader needs float64.
void unary(
    int code,
    bool float64,
    const Tensor& out,
    const Tensor& x,
    const char* name);
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

// The extremum (max when is_max, else min) of each of the `rows` rows of
// `inner` elements of view (as reduce_sum) and the index of its first
// occurrence (the first NaN wins), float32: values and indices (int64)
// contiguous, rows elements each.
void arg_reduce(
    const Tensor& values,
    const Tensor& indices,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    bool is_max,
    const char* name);

// nll_loss on the device (loss.cpp's loops): x the input as (N, C, S) and
// target as (N, S), contiguous, float32 and int64 on one device; weight
// undefined or C float32 values there. The op has checked every target.
struct Nll {
  const Tensor& x;
  const Tensor& target;
  const Tensor& weight;
  int64_t c, s, ignore_index;
};
// Reduction none: out (N S, contiguous) = -(x[n, t, s] w[t]), 0 where
// ignored.
void nll_terms(const Nll& a, const Tensor& out, const char* name);
// The float64 sum of those terms in order (the CPU's accumulator).
double nll_sum(const Nll& a, const char* name);
// The backward into grad_in (zeros, contiguous like x): -(w[t] g) at each
// kept target, g the element of go (reduction none: go contiguous, N S
// values) or the scalar `scale` (go undefined).
void nll_backward(
    const Nll& a,
    const Tensor& grad_in,
    const Tensor& go,
    float scale,
    const char* name);

// out (contiguous float32) = bernoulli(p) from the Philox stream with this
// key, element i from words first + 2i and + 2i + 1 (ops/random/random.cpp's
// philox_fill): the CPU's bits.
void philox_bernoulli(
    const Tensor& out,
    uint32_t key0,
    uint32_t key1,
    uint64_t first,
    double p,
    const char* name);

// conv2d's directions in float32, each output the CPU's chain for the
// algorithm named (ditto/ops/conv/): forward "direct" (the bits of
// "im2col_gemm" too), input gradient "direct" or "gemm_col2im", weight
// gradient "gemm_chunked" with chunks of per_chunk samples, or "fast":
// the same chunks' partials added into out with atomic additions in
// arrival order (nondeterministic). a, b, out contiguous in the direction's
// layout (algorithms.h).
enum class ConvKernel {
  Forward,
  InputDirect,
  InputCol2im,
  WeightChunked,
  WeightFast
};
void conv2d(
    ConvKernel kernel,
    const detail::conv::Geom& g,
    int64_t per_chunk,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* name);

// max_pool2d on (planes, H, W) contiguous float32: geometry {planes, h, w,
// oh, ow, kh, kw, sh, sw, ph, pw, dh, dw}. Forward: out and indices
// (int64) from x. Backward: grad_in (zeros) from grad_out and indices,
// deterministic: the CPU's serial loop per plane, its bits; else atomic
// additions (which differ only where windows overlap); IndexError naming
// the op, before anything is written, for an index outside a plane.
using PoolGeom = std::array<int64_t, 13>;
void max_pool2d(
    const PoolGeom& g,
    const Tensor& out,
    const Tensor& indices,
    const Tensor& x,
    const char* name);
void max_pool2d_backward(
    const PoolGeom& g,
    const Tensor& grad_in,
    const Tensor& indices,
    const Tensor& grad_out,
    bool deterministic,
    const char* name);

// index_select's rows: out (contiguous, n rows of len elements) = the rows
// of src (contiguous) that the host's checked index names; 4- and 8-byte
// dtypes.
void select_rows(
    const Tensor& out,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t len,
    const char* name);
// index_add_'s rows, float32: row index[i] of w (contiguous, `rows` rows of
// len) += row i of src (contiguous, n rows). Deterministic: each element
// gets its additions in index order, the CPU's bits; else atomic additions
// in arrival order (nondeterministic where rows repeat).
void add_rows(
    const Tensor& w,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t rows,
    int64_t len,
    bool deterministic,
    const char* name);

} // namespace ditto::vulkan
