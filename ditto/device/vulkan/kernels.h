#pragma once

// The ops' kernels on a Vulkan device (Note [The Vulkan device] in
// runtime.cpp): the device's kernel slots. The ops reach them through
// kernels::device_kernels, after they validated their arguments, with every
// tensor operand on one Vulkan device except where a slot says otherwise.
// Internal.

#include "ditto/core/tensor.h"
#include "ditto/kernels/device_kernels.h"

namespace ditto::vulkan {

// Each function fills the slot of its name (their contracts: Note [Device
// kernel slots] in ditto/kernels/device_kernels.h); kernels.cpp registers
// them while the library loads. Which ops reach them is said by each op's
// declaration or record (Note [Device kernels are declared] in
// ditto/ops/record.cpp), never by a list of the device's.

void copy_into(const Tensor& dst, const Tensor& src, const char* op);
void upload_into(const Tensor& dst, const Tensor& host, const char* op);
Tensor to_host(const Tensor& src, const char* op);

void binary(
    int code,
    bool compare,
    bool float64,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* name);
void fused(
    int op,
    double s,
    const Tensor& out,
    const Tensor& x,
    const Tensor& y,
    const Tensor* z,
    const char* name);
void unary(
    int code,
    bool float64,
    const Tensor& out,
    const Tensor& x,
    const char* name);
void where(
    const Tensor& out,
    const Tensor& cond,
    const Tensor& a,
    const Tensor& b,
    const char* name);

void reduce_sum(
    const Tensor& out,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    bool mean,
    const char* name);

using Matrix = kernels::DeviceMatrix;
void gemm(
    Matrix c,
    Matrix a,
    Matrix b,
    int64_t m,
    int64_t k,
    int64_t n,
    const char* name);

void arg_reduce(
    const Tensor& values,
    const Tensor& indices,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    bool is_max,
    const char* name);

using Nll = kernels::NllArgs;
void nll_terms(const Nll& a, const Tensor& out, const char* name);
double nll_sum(const Nll& a, const char* name);
void nll_backward(
    const Nll& a,
    const Tensor& grad_in,
    const Tensor& go,
    float scale,
    const char* name);

void philox_bernoulli(
    const Tensor& out,
    uint32_t key0,
    uint32_t key1,
    uint64_t first,
    double p,
    const char* name);

using kernels::ConvKernel;
void conv2d(
    ConvKernel kernel,
    const detail::conv::Geom& g,
    int64_t per_chunk,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* name);

using kernels::PoolGeom;
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

void select_rows(
    const Tensor& out,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t len,
    const char* name);
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
