#pragma once

// Resampling and padding of images (PyTorch's "vision functions"):
// interpolate and its upsampling op, grid_sample and affine_grid, pad
// (ditto/ops/shape_ops.h's, named here too).

#include <cstdint>
#include <optional>
#include <vector>

#include "ditto/core/options.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn::functional {

using ::ditto::pad;

enum class InterpolateMode { Nearest, NearestExact, Bilinear };

// Resizes the last two dims of (N, C, H, W) to (out_h, out_w): PyTorch's
// index mapping (docs/nn.md). scale_h/scale_w, when given, are the scale
// factors the user passed (PyTorch maps indices with 1/scale then);
// align_corners only for Bilinear. The backward adds each output gradient
// into its source cells, plane by plane in output order: the same bits
// for any thread count.
DITTO_API Tensor upsample2d(
    const Tensor& x,
    int64_t out_h,
    int64_t out_w,
    InterpolateMode mode,
    bool align_corners = false,
    std::optional<double> scale_h = std::nullopt,
    std::optional<double> scale_w = std::nullopt);

struct DITTO_API InterpolateOptions {
  // Exactly one of size (one or two values) and scale_factor.
  DITTO_NN_ARG(IntList, size);
  DITTO_NN_ARG(std::vector<double>, scale_factor);
  DITTO_NN_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  // Bilinear only; false when unset.
  DITTO_NN_ARG(std::optional<bool>, align_corners);
  // Map indices with in / out instead of 1 / scale_factor.
  DITTO_NN_ARG(bool, recompute_scale_factor) = false;
};
// Resizes the last two dims of (N, C, H, W) with upsample2d: output size
// from size, or floor(in * scale_factor).
DITTO_API Tensor
interpolate(const Tensor& x, const InterpolateOptions& options);

enum class GridSampleMode { Bilinear, Nearest };
enum class GridSamplePadding { Zeros, Border, Reflection };

struct DITTO_API GridSampleOptions {
  DITTO_NN_ARG(GridSampleMode, mode) = GridSampleMode::Bilinear;
  DITTO_NN_ARG(GridSamplePadding, padding_mode) = GridSamplePadding::Zeros;
  DITTO_NN_ARG(bool, align_corners) = false;
};
// Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) points (x, y) in
// [-1, 1]: PyTorch's unnormalization, padding and weights. Gradients for
// input and grid (bilinear); the input gradient is summed per plane in
// output order, the grid gradient per point over channels in order: the
// same bits for any thread count.
DITTO_API Tensor grid_sample(
    const Tensor& input,
    const Tensor& grid,
    const GridSampleOptions& options = {});

// The sampling grid (N, H, W, 2) of the affine maps theta (N, 2, 3) for an
// output of size (N, C, H, W).
DITTO_API Tensor
affine_grid(const Tensor& theta, const Shape& size, bool align_corners = false);

} // namespace ditto::nn::functional
