#pragma once

// Internal: argument checks shared by the NN ops (pooling, interpolation,
// transposed convolution, ctc_loss, the recurrent layers). Not installed.

#include <cstdint>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::detail {

// ValueError for an undefined x, TypeError unless floating.
void check_floating(const Tensor& x, const char* op);

// check_floating, and a non-empty 3-D or 4-D (batch mode) shape.
void check_pool_input(const Tensor& x, const char* op);

// The values of a 1-D int64 or int32 tensor (lengths, indices); ValueError
// naming op and what otherwise.
std::vector<int64_t> int_values(
    const Tensor& t,
    const char* op,
    const char* what);

// The last dims of x are normalized_shape (layer_norm, rms_norm): else
// ValueError with torch's message.
void check_normalized_shape(
    const Tensor& x,
    const IntList& normalized_shape,
    const char* op);

} // namespace ditto::detail
