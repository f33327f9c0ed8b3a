#pragma once

// Resampling and padding of images (PyTorch's "vision functions"):
// interpolate and its upsampling op, grid_sample and affine_grid, pad
// (ditto/ops/shape_ops.h's, named here too).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ditto/core/options.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn::functional {

using ::ditto::pad;

// F.interpolate's modes: nearest, nearest-exact, linear (3-D input),
// bilinear (4-D), bicubic (4-D), trilinear (5-D) and area (adaptive average
// pooling).
enum class InterpolateMode {
  Nearest,
  NearestExact,
  Bilinear,
  Linear,
  Bicubic,
  Trilinear,
  Area,
};
// PyTorch's spelling ("nearest-exact", ...) and back (ValueError naming
// op for another name).
DITTO_API const char* interpolate_mode_name(InterpolateMode mode);
DITTO_API InterpolateMode
interpolate_mode_from_name(const std::string& name, const char* op);

// Resizes the last n dims of (N, C, ...) (n = output_size's length, 1 to
// 3) to output_size with PyTorch 1.13's index mapping and arithmetic
// (docs/nn.md): nearest and nearest-exact copy, the linear modes (Linear,
// Bilinear, Trilinear: any n) weigh 2 cells per dim, Bicubic (n = 2) 4
// cells; antialias (Bilinear and Bicubic) widens the filter by the scale
// when downsampling. scales, when given (one per dim), are the scale
// factors the user passed (indices then map with 1 / scale);
// align_corners for the linear and cubic modes. The outputs and gradients
// have the float32 bits of PyTorch's AVX2 kernels on every CPU. The
// backward adds each output gradient into its source cells, plane by plane
// in PyTorch's order: the same bits for any thread count.
DITTO_API Tensor upsample(
    const Tensor& x,
    const IntList& output_size,
    InterpolateMode mode,
    bool align_corners = false,
    const std::vector<std::optional<double>>& scales = {},
    bool antialias = false);

// upsample over the last two dims of (N, C, H, W) (scale_h/scale_w as
// upsample's scales): ditto's older spelling of LibTorch's
// upsample_nearest2d and upsample_bilinear2d (declared:
// composite/interpolation.ops.toml), kept for C++ callers.
DITTO_API Tensor upsample2d(
    const Tensor& x,
    int64_t out_h,
    int64_t out_w,
    InterpolateMode mode,
    bool align_corners = false,
    std::optional<double> scale_h = std::nullopt,
    std::optional<double> scale_w = std::nullopt);

struct DITTO_API InterpolateOptions {
  // Exactly one of size (one value, or one per resized dim) and
  // scale_factor (likewise).
  DITTO_NN_ARG(IntList, size);
  DITTO_NN_ARG(std::vector<double>, scale_factor);
  DITTO_NN_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  // The linear and cubic modes only; false when unset.
  DITTO_NN_ARG(std::optional<bool>, align_corners);
  // Map indices with in / out instead of 1 / scale_factor.
  DITTO_NN_ARG(bool, recompute_scale_factor) = false;
  // Bilinear and Bicubic only.
  DITTO_NN_ARG(bool, antialias) = false;
};
// F.interpolate: resizes the dims after (N, C) of a 3-D, 4-D or 5-D input
// with upsample (area: adaptive_avg_pool1d/2d/3d), the output size from
// size or floor(in * scale_factor). The mode must suit the input's rank
// (linear 3-D, bilinear and bicubic 4-D, trilinear 5-D), as in PyTorch.
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
// [-1, 1], or input (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) points
// (x, y, z) ("bilinear" is then trilinear, as PyTorch's): PyTorch's
// unnormalization, padding and weights (the 3-d ones in the order of
// PyTorch's CPU kernel, Note [grid_sample in 3-d]). Gradients for input and
// grid (bilinear); the input gradient is summed per plane in output order,
// the grid gradient per point over channels in order: the same bits for
// any thread count.
DITTO_API Tensor grid_sample(
    const Tensor& input,
    const Tensor& grid,
    const GridSampleOptions& options = {});

// The sampling grid (N, H, W, 2) of the affine maps theta (N, 2, 3) for an
// output of size (N, C, H, W).
DITTO_API Tensor
affine_grid(const Tensor& theta, const Shape& size, bool align_corners = false);

} // namespace ditto::nn::functional
