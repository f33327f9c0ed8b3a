#pragma once

// Internal: the bodies of the composite ops declared in
// ditto/ops/composite/composite.ops.toml that are more than one expression.
// Each is made of public ops, which give its gradient, its trace and its device
// support (Note [One declaration per op]).

#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::detail {

// ---- shapes
Tensor tri(const Tensor& self, int64_t diagonal, bool lower, const char* op);
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);
Tensor diag(const Tensor& self, int64_t diagonal);
Tensor trace(const Tensor& self);
Tensor roll(const Tensor& self, const IntArg& shifts, const IntArg& dims);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim);
std::vector<Tensor> split_with_sizes(
    const Tensor& self,
    const IntArg& sizes,
    int64_t dim);
std::vector<Tensor> split(const Tensor& self, int64_t size, int64_t dim);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim);
Tensor unflatten(const Tensor& self, int64_t dim, const IntArg& sizes);
Tensor movedim(const Tensor& self, const IntArg& source, const IntArg& dest);
Tensor repeat(const Tensor& self, const IntArg& repeats);
Tensor tile(const Tensor& self, const IntArg& dims);
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);

// ---- products
Tensor outer(const Tensor& self, const Tensor& vec2);
Tensor dot(const Tensor& self, const Tensor& other);
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor kron(const Tensor& self, const Tensor& other);
Tensor tensordot(
    const Tensor& self,
    const Tensor& other,
    const IntArg& dims_self,
    const IntArg& dims_other);

// ---- reductions
Tensor var(
    const Tensor& self,
    const OptionalIntArg& dim,
    std::optional<double> correction,
    bool keepdim,
    bool take_sqrt);
std::tuple<Tensor, Tensor> var_mean(
    const Tensor& self,
    const OptionalIntArg& dim,
    std::optional<double> correction,
    bool keepdim,
    bool take_sqrt);
Tensor logsumexp(const Tensor& self, const IntArg& dim, bool keepdim);
Tensor amax(const Tensor& self, const IntArg& dim, bool keepdim, bool max);
Tensor nansum(const Tensor& self, const OptionalIntArg& dim, bool keepdim);
Tensor count_nonzero(const Tensor& self, const OptionalIntArg& dim);
Tensor nan_to_num(
    const Tensor& self,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf);

// ---- activations
Tensor softplus(
    const Tensor& self,
    const Scalar& beta,
    const Scalar& threshold);
Tensor elu(
    const Tensor& self,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale);
Tensor glu(const Tensor& self, int64_t dim);

// ---- Core ATen operators (ditto/ops/composite/aten.ops.toml;
// aten_composite.cpp)
Tensor alias(const Tensor& self);
Tensor select_scatter(
    const Tensor& self,
    const Tensor& src,
    int64_t dim,
    int64_t index);
Tensor slice_scatter(
    const Tensor& self,
    const Tensor& src,
    int64_t dim,
    std::optional<int64_t> start,
    std::optional<int64_t> end,
    int64_t step);
Tensor masked_scatter(
    const Tensor& self,
    const Tensor& mask,
    const Tensor& source);
Tensor nonzero(const Tensor& self);
// Defined in ditto/nn/functional/aten_composite.cpp (its parts are nn's).
Tensor convolution(
    const Tensor& self,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    bool transposed,
    const IntArg& output_padding,
    int64_t groups);
Tensor col2im(
    const Tensor& self,
    const IntArg& output_size,
    const IntArg& kernel_size,
    const IntArg& dilation,
    const IntArg& padding,
    const IntArg& stride);
Tensor im2col(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& dilation,
    const IntArg& padding,
    const IntArg& stride);
Tensor cdist(
    const Tensor& self,
    const Tensor& x2,
    double p,
    std::optional<int64_t> compute_mode);
Tensor pdist(const Tensor& self, double p);

// ---- attention (issue 60)
// scaled_dot_product_attention and rms_norm: defined in
// ditto/nn/functional/aten_composite.cpp.
Tensor scaled_dot_product_attention(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const std::optional<Tensor>& attn_mask,
    double dropout_p,
    bool is_causal,
    std::optional<double> scale);
Tensor rms_norm(
    const Tensor& self,
    const IntArg& normalized_shape,
    const std::optional<Tensor>& weight,
    std::optional<double> eps);

} // namespace ditto::detail
