#pragma once

// The fused steps of the recurrent layers (ditto/nn/rnn.h), each with its
// backward.

#include <cstdint>
#include <utility>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::nn::functional {

// The LSTM cell's gates, fused: gates (B, 4H) pre-activation in PyTorch's
// order i, f, g, o and c (B, H) give (h', c') with c' = s(f) c + s(i)
// tanh(g), h' = s(o) tanh(c') (s: sigmoid; ditto's own sigmoid and tanh).
DITTO_API std::pair<Tensor, Tensor> lstm_cell_gates(
    const Tensor& gates,
    const Tensor& c);
// The GRU cell's gates, fused: gi = W_ih x + b_ih and gh = W_hh h + b_hh
// (B, 3H) in PyTorch's order r, z, n, and h (B, H) give
// h' = (1 - z) n + z h with r = s(gi_r + gh_r), z = s(gi_z + gh_z),
// n = tanh(gi_n + r gh_n).
DITTO_API Tensor
gru_cell_gates(const Tensor& gi, const Tensor& gh, const Tensor& h);
// x cut along dim 0 into consecutive blocks of rows[i] rows (copies). The
// backward concatenates the blocks' gradients: one op for what per-block
// narrows would do with one full-size gradient each (the recurrent layers'
// steps).
DITTO_API std::vector<Tensor> split_rows(
    const Tensor& x,
    const std::vector<int64_t>& rows);

} // namespace ditto::nn::functional
