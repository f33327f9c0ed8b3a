#pragma once

#include <optional>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // generated from elementwise.ops.toml

namespace ditto {

// Binary ops broadcast their operands and promote their dtypes as PyTorch
// does (tensor operands decide, a scalar operand only lifts the category:
// int tensor + 2.5 is float32).
DITTO_API Tensor add(const Tensor& a, const Tensor& b);
DITTO_API Tensor add(const Tensor& a, const Scalar& b);
DITTO_API Tensor sub(const Tensor& a, const Tensor& b);
DITTO_API Tensor sub(const Tensor& a, const Scalar& b);
DITTO_API Tensor mul(const Tensor& a, const Tensor& b);
DITTO_API Tensor mul(const Tensor& a, const Scalar& b);
// True division: integer inputs give float32.
DITTO_API Tensor div(const Tensor& a, const Tensor& b);
DITTO_API Tensor div(const Tensor& a, const Scalar& b);
DITTO_API Tensor pow(const Tensor& a, const Tensor& b);
DITTO_API Tensor pow(const Tensor& a, const Scalar& b);

// a + alpha*b and a - alpha*b. Floating types round as PyTorch's x86-64
// kernels: one fused multiply-add (docs/numerics.md).
DITTO_API Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha);
DITTO_API Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha);
// addcmul, addcdiv and lerp are declared in elementwise/fused.ops.toml
// (generated into declared.h).

// Comparisons (eq, ne, lt, le, gt, ge) are declared in elementwise.ops.toml.

// The unary ops neg, abs, exp, log, log1p, sqrt, tanh, sigmoid, relu,
// erf and square are declared in elementwise.ops.toml (their functions:
// declared.h, generated). Those computing in floating point give float32
// for integer inputs; their accuracy is stated in docs/numerics.md.
//
// The inverse error function with PyTorch 1.13's algorithm (a rational
// first guess, two Newton steps), PyTorch's bits: it calls glibc's erf, exp,
// log and sqrt as ATen does (docs/numerics.md, "The libm calls left").
DITTO_API Tensor erfinv(const Tensor& x);
DITTO_API Tensor clamp(
    const Tensor& a,
    const std::optional<Scalar>& min,
    const std::optional<Scalar>& max);

// Elementwise choice: cond ? a : b, with broadcasting of all three.
DITTO_API Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
DITTO_API Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
DITTO_API Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);

DITTO_API Tensor operator+(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator+(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator+(const Scalar& a, const Tensor& b);
DITTO_API Tensor operator-(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator-(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator-(const Scalar& a, const Tensor& b);
DITTO_API Tensor operator*(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator*(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator*(const Scalar& a, const Tensor& b);
DITTO_API Tensor operator/(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator/(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator/(const Scalar& a, const Tensor& b);
DITTO_API Tensor operator-(const Tensor& a);
DITTO_API Tensor operator==(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator!=(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator<(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator<=(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator>(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator>=(const Tensor& a, const Tensor& b);
DITTO_API Tensor operator==(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator!=(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator<(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator<=(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator>(const Tensor& a, const Scalar& b);
DITTO_API Tensor operator>=(const Tensor& a, const Scalar& b);

// The dtype of an op between two tensors, as torch.result_type.
DITTO_API Dtype result_type(const Tensor& a, const Tensor& b);
DITTO_API Dtype result_type(const Tensor& a, const Scalar& b);

} // namespace ditto
