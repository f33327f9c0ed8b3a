#pragma once

// Internal: the recurrent layers' one-GEMM weight gradient. Not installed.

#include <memory>

#include "ditto/core/tensor.h"

namespace ditto::detail {

// A copy of base, recorded with weight: the backward passes the gradient g
// (rows x G) on to base and gives weight (G x R) the gradient g^T *rows.
// *rows (rows x R) is filled after this op runs, before any backward: the
// recurrent layers use it for the states every step multiplied by weight
// (known only after the loop), so W_hh's gradient is one GEMM over all
// steps instead of one small GEMM per step summed by the engine.
Tensor recurrent_weight_carrier(
    const Tensor& base,
    const Tensor& weight,
    std::shared_ptr<Tensor> rows);

// input + h w_t, differentiable in input and h only: the recurrent step's
// product, whose weight gradient the carrier gives (addmm's backward would
// also form the per-step weight gradient, to be thrown away).
Tensor recurrent_step(const Tensor& input, const Tensor& h, const Tensor& w_t);

} // namespace ditto::detail
