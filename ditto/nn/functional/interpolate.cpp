// interpolate: PyTorch's front end to upsample (upsample.cpp): sizes or
// scale factors, recompute_scale_factor, the modes' names and checks; and
// upsample's ATen forms (composite/interpolation.ops.toml), which
// torch.nn.functional.interpolate's Python calls.

#include <cmath>
#include <optional>

#include "ditto/core/error.h"
#include "ditto/nn/functional/pooling.h"
#include "ditto/nn/functional/vision.h"
#include "ditto/ops/declared.h"

namespace ditto::nn::functional {
namespace {

// The resized dims' sizes floor(in * scale) (torch's), one scale per dim
// after (N, C): each positive and finite, each size within int64.
IntList sizes_of_scales(
    const Tensor& x,
    const std::vector<double>& scales,
    const char* op) {
  IntList size;
  for (size_t i = 0; i < scales.size(); ++i) {
    const double f = scales[i];
    DITTO_CHECK(
        f > 0 && std::isfinite(f),
        ValueError,
        op,
        "scale_factor must be positive and finite, got ",
        f);
    const double e = std::floor(double(x.size(2 + int64_t(i))) * f);
    DITTO_CHECK(
        e < 9.2e18,
        ValueError,
        op,
        "scale_factor gives an output size beyond int64");
    size.push_back(int64_t(e));
  }
  return size;
}

} // namespace

const char* interpolate_mode_name(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Nearest:
      return "nearest";
    case InterpolateMode::NearestExact:
      return "nearest-exact";
    case InterpolateMode::Bilinear:
      return "bilinear";
    case InterpolateMode::Linear:
      return "linear";
    case InterpolateMode::Bicubic:
      return "bicubic";
    case InterpolateMode::Trilinear:
      return "trilinear";
    case InterpolateMode::Area:
      return "area";
  }
  return "?";
}

InterpolateMode interpolate_mode_from_name(
    const std::string& name,
    const char* op) {
  for (InterpolateMode m :
       {InterpolateMode::Nearest,
        InterpolateMode::NearestExact,
        InterpolateMode::Bilinear,
        InterpolateMode::Linear,
        InterpolateMode::Bicubic,
        InterpolateMode::Trilinear,
        InterpolateMode::Area}) {
    if (name == interpolate_mode_name(m)) {
      return m;
    }
  }
  ::ditto::detail::throw_error<ValueError>(
      op,
      "unsupported mode '",
      name,
      "'; expected nearest, nearest-exact, linear, bilinear, bicubic, "
      "trilinear or area");
}

Tensor interpolate(const Tensor& x, const InterpolateOptions& o) {
  const char* op = "interpolate";
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  const int64_t n = x.dim() - 2;
  DITTO_CHECK(
      n >= 1 && n <= 3,
      ValueError,
      op,
      "expected a 3-D, 4-D or 5-D input (N, C and 1 to 3 dims to resize), "
      "got sizes ",
      shape_str(x.sizes()));
  const InterpolateMode mode = o.mode();
  const int64_t want = mode == InterpolateMode::Linear ? 1
      : mode == InterpolateMode::Bilinear || mode == InterpolateMode::Bicubic
      ? 2
      : mode == InterpolateMode::Trilinear ? 3
                                           : n;
  DITTO_CHECK(
      want == n,
      ValueError,
      op,
      "Got ",
      x.dim(),
      "D input, but ",
      interpolate_mode_name(mode),
      " mode needs ",
      want + 2,
      "D input");
  DITTO_CHECK(
      o.size().empty() != o.scale_factor().empty(),
      ValueError,
      op,
      "only one of size or scale_factor should be defined");
  const bool interpolating = mode == InterpolateMode::Linear ||
      mode == InterpolateMode::Bilinear || mode == InterpolateMode::Bicubic ||
      mode == InterpolateMode::Trilinear;
  DITTO_CHECK(
      !(o.align_corners() && !interpolating),
      ValueError,
      op,
      "align_corners option can only be set with the interpolating modes: "
      "linear | bilinear | bicubic | trilinear");
  DITTO_CHECK(
      !o.antialias() || mode == InterpolateMode::Bilinear ||
          mode == InterpolateMode::Bicubic,
      ValueError,
      op,
      "Anti-alias option is only supported for bilinear and bicubic modes");
  IntList size(size_t(n), 0);
  std::vector<std::optional<double>> scales;
  if (!o.size().empty()) {
    DITTO_CHECK(
        o.size().size() == 1 || int64_t(o.size().size()) == n,
        ValueError,
        op,
        "size must be one value or ",
        n,
        " values, got ",
        shape_str(o.size()));
    for (int64_t i = 0; i < n; ++i) {
      size[size_t(i)] = o.size()[o.size().size() == 1 ? 0 : size_t(i)];
    }
  } else {
    const auto& f = o.scale_factor();
    DITTO_CHECK(
        f.size() == 1 || int64_t(f.size()) == n,
        ValueError,
        op,
        "scale_factor must be one value or ",
        n,
        " values, got ",
        f.size());
    std::vector<double> each(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      each[size_t(i)] = f[f.size() == 1 ? 0 : size_t(i)];
    }
    size = sizes_of_scales(x, each, op);
    if (!o.recompute_scale_factor()) {
      scales.assign(each.begin(), each.end());
    }
  }
  if (mode == InterpolateMode::Area) {
    static constexpr Tensor (*kPools[])(const Tensor&, const IntArg&) = {
        nullptr,
        &adaptive_avg_pool1d,
        &adaptive_avg_pool2d,
        &adaptive_avg_pool3d};
    return kPools[n](x, size);
  }
  return upsample(
      x, size, mode, o.align_corners().value_or(false), scales, o.antialias());
}

} // namespace ditto::nn::functional

namespace ditto {
namespace {

using nn::functional::InterpolateMode;

// An ATen form's input: defined, with N, C and the n resized dims.
void check_input(const Tensor& input, int n, const char* op) {
  DITTO_CHECK(input.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      input.dim() == n + 2,
      ValueError,
      op,
      "expected a ",
      n + 2,
      "-D input (N, C and ",
      n,
      " resized dims), got sizes ",
      shape_str(input.sizes()));
}

// The .vec forms: exactly one of output_size and scale_factors, n values.
Tensor upsample_vec(
    const char* op,
    int n,
    InterpolateMode mode,
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors,
    bool antialias = false) {
  check_input(input, n, op);
  DITTO_CHECK(
      output_size.has_value() != scale_factors.has_value(),
      ValueError,
      op,
      "Must specify exactly one of output_size and scale_factors");
  const size_t count =
      output_size ? output_size->size() : scale_factors->size();
  DITTO_CHECK(
      count == size_t(n),
      ValueError,
      op,
      "expected ",
      n,
      output_size ? " output sizes" : " scale factors",
      " (one per resized dim), got ",
      count);
  if (output_size) {
    return nn::functional::upsample(
        input, *output_size, mode, align_corners, {}, antialias);
  }
  const IntList size =
      nn::functional::sizes_of_scales(input, *scale_factors, op);
  return nn::functional::upsample(
      input,
      size,
      mode,
      align_corners,
      {scale_factors->begin(), scale_factors->end()},
      antialias);
}

// The fixed-rank forms: n output sizes and a scale or none per dim.
Tensor upsample_sized(
    const char* op,
    int n,
    InterpolateMode mode,
    const Tensor& input,
    const IntArg& output_size,
    bool align_corners,
    const std::vector<std::optional<double>>& scales,
    bool antialias = false) {
  check_input(input, n, op);
  DITTO_CHECK(
      output_size.size() == size_t(n),
      ValueError,
      op,
      "It is expected output_size equals to ",
      n,
      ", but got size ",
      output_size.size());
  return nn::functional::upsample(
      input, output_size, mode, align_corners, scales, antialias);
}

} // namespace

Tensor upsample_nearest1d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_nearest1d",
      1,
      InterpolateMode::Nearest,
      input,
      output_size,
      false,
      scale_factors);
}

Tensor upsample_nearest1d(
    const Tensor& self,
    const IntArg& output_size,
    std::optional<double> scales) {
  return upsample_sized(
      "upsample_nearest1d",
      1,
      InterpolateMode::Nearest,
      self,
      output_size,
      false,
      {scales});
}

Tensor _upsample_nearest_exact1d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "_upsample_nearest_exact1d",
      1,
      InterpolateMode::NearestExact,
      input,
      output_size,
      false,
      scale_factors);
}

Tensor _upsample_nearest_exact1d(
    const Tensor& self,
    const IntArg& output_size,
    std::optional<double> scales) {
  return upsample_sized(
      "_upsample_nearest_exact1d",
      1,
      InterpolateMode::NearestExact,
      self,
      output_size,
      false,
      {scales});
}

Tensor upsample_nearest2d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_nearest2d",
      2,
      InterpolateMode::Nearest,
      input,
      output_size,
      false,
      scale_factors);
}

Tensor upsample_nearest2d(
    const Tensor& self,
    const IntArg& output_size,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "upsample_nearest2d",
      2,
      InterpolateMode::Nearest,
      self,
      output_size,
      false,
      {scales_h, scales_w});
}

Tensor _upsample_nearest_exact2d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "_upsample_nearest_exact2d",
      2,
      InterpolateMode::NearestExact,
      input,
      output_size,
      false,
      scale_factors);
}

Tensor _upsample_nearest_exact2d(
    const Tensor& self,
    const IntArg& output_size,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "_upsample_nearest_exact2d",
      2,
      InterpolateMode::NearestExact,
      self,
      output_size,
      false,
      {scales_h, scales_w});
}

Tensor upsample_nearest3d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_nearest3d",
      3,
      InterpolateMode::Nearest,
      input,
      output_size,
      false,
      scale_factors);
}

Tensor upsample_nearest3d(
    const Tensor& self,
    const IntArg& output_size,
    std::optional<double> scales_d,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "upsample_nearest3d",
      3,
      InterpolateMode::Nearest,
      self,
      output_size,
      false,
      {scales_d, scales_h, scales_w});
}

Tensor _upsample_nearest_exact3d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "_upsample_nearest_exact3d",
      3,
      InterpolateMode::NearestExact,
      input,
      output_size,
      false,
      scale_factors);
}

Tensor _upsample_nearest_exact3d(
    const Tensor& self,
    const IntArg& output_size,
    std::optional<double> scales_d,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "_upsample_nearest_exact3d",
      3,
      InterpolateMode::NearestExact,
      self,
      output_size,
      false,
      {scales_d, scales_h, scales_w});
}

Tensor upsample_linear1d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_linear1d",
      1,
      InterpolateMode::Linear,
      input,
      output_size,
      align_corners,
      scale_factors);
}

Tensor upsample_linear1d(
    const Tensor& self,
    const IntArg& output_size,
    bool align_corners,
    std::optional<double> scales) {
  return upsample_sized(
      "upsample_linear1d",
      1,
      InterpolateMode::Linear,
      self,
      output_size,
      align_corners,
      {scales});
}

Tensor upsample_bilinear2d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_bilinear2d",
      2,
      InterpolateMode::Bilinear,
      input,
      output_size,
      align_corners,
      scale_factors);
}

Tensor upsample_bilinear2d(
    const Tensor& self,
    const IntArg& output_size,
    bool align_corners,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "upsample_bilinear2d",
      2,
      InterpolateMode::Bilinear,
      self,
      output_size,
      align_corners,
      {scales_h, scales_w});
}

Tensor _upsample_bilinear2d_aa(
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "_upsample_bilinear2d_aa",
      2,
      InterpolateMode::Bilinear,
      input,
      output_size,
      align_corners,
      scale_factors,
      true);
}

Tensor _upsample_bilinear2d_aa(
    const Tensor& self,
    const IntArg& output_size,
    bool align_corners,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "_upsample_bilinear2d_aa",
      2,
      InterpolateMode::Bilinear,
      self,
      output_size,
      align_corners,
      {scales_h, scales_w},
      true);
}

Tensor upsample_trilinear3d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_trilinear3d",
      3,
      InterpolateMode::Trilinear,
      input,
      output_size,
      align_corners,
      scale_factors);
}

Tensor upsample_trilinear3d(
    const Tensor& self,
    const IntArg& output_size,
    bool align_corners,
    std::optional<double> scales_d,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "upsample_trilinear3d",
      3,
      InterpolateMode::Trilinear,
      self,
      output_size,
      align_corners,
      {scales_d, scales_h, scales_w});
}

Tensor upsample_bicubic2d(
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "upsample_bicubic2d",
      2,
      InterpolateMode::Bicubic,
      input,
      output_size,
      align_corners,
      scale_factors);
}

Tensor upsample_bicubic2d(
    const Tensor& self,
    const IntArg& output_size,
    bool align_corners,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "upsample_bicubic2d",
      2,
      InterpolateMode::Bicubic,
      self,
      output_size,
      align_corners,
      {scales_h, scales_w});
}

Tensor _upsample_bicubic2d_aa(
    const Tensor& input,
    const OptionalIntArg& output_size,
    bool align_corners,
    const std::optional<std::vector<double>>& scale_factors) {
  return upsample_vec(
      "_upsample_bicubic2d_aa",
      2,
      InterpolateMode::Bicubic,
      input,
      output_size,
      align_corners,
      scale_factors,
      true);
}

Tensor _upsample_bicubic2d_aa(
    const Tensor& self,
    const IntArg& output_size,
    bool align_corners,
    std::optional<double> scales_h,
    std::optional<double> scales_w) {
  return upsample_sized(
      "_upsample_bicubic2d_aa",
      2,
      InterpolateMode::Bicubic,
      self,
      output_size,
      align_corners,
      {scales_h, scales_w},
      true);
}

} // namespace ditto
