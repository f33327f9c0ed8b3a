#pragma once

// nn::utils: gradient clipping and parameter vectors, as torch.nn.utils.

#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::nn::utils {

// Scales every defined gradient by min(1, max_norm / (total + 1e-6)),
// where total is the norm_type-norm of the per-parameter norms (inf: the
// largest absolute value), each norm summed in a fixed order (the same
// bits for any thread count). Multiplies even when the factor is 1, as
// PyTorch 1.13. Returns total (before clipping); 0 without gradients.
// error_if_nonfinite: ValueError instead of scaling by a NaN or inf total
// (nothing changed).
DITTO_API Tensor clip_grad_norm_(
    const std::vector<Tensor>& parameters,
    double max_norm,
    double norm_type = 2.0,
    bool error_if_nonfinite = false);
// Clamps every defined gradient to [-clip_value, clip_value] in place.
DITTO_API void clip_grad_value_(
    const std::vector<Tensor>& parameters,
    double clip_value);
// The parameters flattened and concatenated, in order.
DITTO_API Tensor parameters_to_vector(const std::vector<Tensor>& parameters);
// Copies consecutive slices of vec into the parameters (in place).
DITTO_API void vector_to_parameters(
    const Tensor& vec,
    const std::vector<Tensor>& parameters);

} // namespace ditto::nn::utils
