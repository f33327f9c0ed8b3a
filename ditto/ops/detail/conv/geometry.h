#pragma once

// Internal to the convolutions (ditto/ops/conv/): the geometry of one
// convolution, checked, and the three directions. Not installed.

#include <utility>

#include "ditto/core/tensor.h"

namespace ditto::detail::conv {

struct Geom {
  int64_t n, c, h, w; // input
  int64_t o, kh, kw; // weight [o, c / groups, kh, kw]
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t oh, ow; // output
  int64_t cg, og; // channels per group
  Dtype dtype;
  int64_t kk() const {
    return cg * kh * kw;
  }
  int64_t ohw() const {
    return oh * ow;
  }
};

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
