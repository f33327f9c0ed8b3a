#pragma once

// Internal to the convolutions (ditto/ops/conv/): the geometry of one
// convolution, checked, and the three directions. Not installed.

#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/kernels/conv_geometry.h" // Geom

namespace ditto::detail::conv {

// The arguments of a convolution with N spatial dims, checked once for
// conv2d and conv3d (ValueError naming op for anything inconsistent, every
// size the algorithms compute checked for overflow): the channels and, per
// spatial dim, the input, kernel, stride, padding, dilation, the dilated
// kernel's reach, the padded input and the output.
template <int N>
struct ConvArgs {
  int64_t n, c, o, groups, cg, og;
  int64_t in[N], k[N], s[N], p[N], d[N], reach[N], padded[N], out[N];
};
template <int N>
ConvArgs<N> check_conv_args(
    const Shape& input,
    const Shape& weight,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op);

// The geometry of a convolution of an input of in_sizes with a weight of
// w_sizes; ValueError naming op for anything inconsistent.
Geom make_geom(
    const Shape& input,
    const Shape& weight,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op);

// The two operands of a convolution direction (conv2d's and conv3d's),
// contiguous: ValueError naming op for an undefined one, TypeError for two
// dtypes.
std::pair<Tensor, Tensor> conv_operands(
    const Tensor& a,
    const char* a_name,
    const Tensor& b,
    const char* b_name,
    const char* op);

// The three directions, each with its own algorithms.
enum Dir { kForward, kBackwardInput, kBackwardWeight };
inline constexpr const char* kDirNames[] = {
    "forward",
    "backward_input",
    "backward_weight"};

} // namespace ditto::detail::conv
