#pragma once

#include <optional>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // generated from elementwise.ops.toml

namespace ditto {

// Binary ops broadcast their operands and promote their dtypes as PyTorch
// does (tensor operands decide, a scalar operand only lifts the category:
// int tensor + 2.5 is float32).
// add, sub (with torch's alpha: a + alpha*b, floating types rounding as
// PyTorch's x86-64 kernels, one fused multiply-add), mul, div (true
// division: integer inputs give float32) and pow, each with a Tensor or a
// number on the right, are declared in elementwise/elementwise.ops.toml.
// addcmul, addcdiv and lerp are declared in elementwise/fused.ops.toml
// (generated into declared.h).

// Comparisons (eq, ne, lt, le, gt, ge) are declared in elementwise.ops.toml.

// The unary ops neg, abs, exp, log, log1p, sqrt, tanh, sigmoid, relu,
// erf and square are declared in elementwise.ops.toml (their functions:
// declared.h, generated). Those computing in floating point give float32
// for integer inputs; their accuracy is stated in docs/numerics.md. So is
// erfinv (PyTorch 1.13's algorithm and bits, a body of its own).
// clamp (and clip) is declared in elementwise/elementwise.ops.toml.

// where (cond ? a : b, the three broadcast) is declared in
// elementwise/elementwise.ops.toml.

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
