#pragma once

// The geometry of one 2-d convolution, as plain numbers: what the CPU's
// convolution algorithms (ditto/ops/conv/) and the Vulkan device's
// (ditto/device/vulkan/nn_kernels.cpp) both read. Here, below both, so that
// the device needs nothing of ops/; ditto/ops/detail/conv/geometry.h makes
// and checks it. Not installed.

#include <cstdint>

#include "ditto/core/dtype.h"

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

} // namespace ditto::detail::conv
