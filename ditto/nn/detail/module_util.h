#pragma once

// Internal: what the layers (ditto/nn/modules/) and the recurrent layers
// (rnn.cpp) share: their printed forms, argument checks and initial values.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::nn {

// Python's repr of a float (the shortest digits that read back, ".0" on
// integral values), of a bool, of a tuple of n dims from one or n values,
// and of a pooling argument (the int as given, or the tuple).
std::string py_float(double v);
std::string py_bool(bool b);
std::string py_tuple(const IntList& v, size_t n);
std::string py_int_or_tuple(const IntList& v);

// v as two values (one given for both), ValueError naming layer and what
// otherwise.
IntList two(const IntList& v, const char* layer, const char* what);
// The same for n (2 or 3) dims.
IntList per_dim(
    const IntList& v,
    size_t n,
    const char* layer,
    const char* what);

// PyTorch's Linear and Conv reset_parameters.
void reset_weight_and_bias(const Tensor& weight, const Tensor& bias);
// PyTorch's reset_parameters of the recurrent layers and cells.
void reset_uniform(const std::vector<Tensor>& params, int64_t hidden);

// A parameter's storage before its initial draws (deferred.h).
Tensor uninitialized(const Shape& sizes);

// The normalization layers' initial values: one and one2 1, the rest 0.
void fill_ones_zeros(
    const Tensor& one,
    const Tensor& zero,
    const Tensor& zero2 = {},
    const Tensor& one2 = {},
    const Tensor& count = {});

void check_positive(int64_t v, const char* layer, const char* what);
void check_groups(int64_t in, int64_t out, int64_t groups, const char* layer);
// The rank and channel count a conv layer takes.
void check_conv_input(
    const Tensor& x,
    int64_t spatial,
    int64_t in_channels,
    const char* layer);

} // namespace ditto::nn
