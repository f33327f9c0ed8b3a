// interpolate: PyTorch's front end to upsample (upsample.cpp): sizes or
// scale factors, recompute_scale_factor, the modes' names and checks.

#include <cmath>
#include <optional>

#include "ditto/core/error.h"
#include "ditto/nn/functional/pooling.h"
#include "ditto/nn/functional/vision.h"

namespace ditto::nn::functional {

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
    for (int64_t i = 0; i < n; ++i) {
      const double fi = f[f.size() == 1 ? 0 : size_t(i)];
      DITTO_CHECK(
          fi > 0 && std::isfinite(fi),
          ValueError,
          op,
          "scale_factor must be positive and finite, got ",
          fi);
      const double e = std::floor(double(x.size(2 + i)) * fi);
      DITTO_CHECK(
          e < 9.2e18,
          ValueError,
          op,
          "scale_factor gives an output size beyond int64");
      size[size_t(i)] = int64_t(e);
      if (!o.recompute_scale_factor()) {
        scales.push_back(fi);
      }
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
