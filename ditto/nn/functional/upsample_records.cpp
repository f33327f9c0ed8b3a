// The records of the interpolations upsample_nearest2d and
// upsample_bilinear2d (upsample.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/functional/vision.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::plane_path;

using ::ditto::detail::samples::kFloating;

// ---- interpolation

std::vector<Sample> upsample_samples(const SampleSpec& spec, bool bilinear) {
  const Dtype dt = spec.dtype;
  Tensor x = s::varied(
      {s::size(spec, 4, 1),
       s::size(spec, 8, 2),
       s::size(spec, 37, 3),
       s::size(spec, 29, 4)},
      dt,
      8.0,
      1);
  Tensor plane =
      s::varied({1, 1, s::size(spec, 97, 4), s::size(spec, 89, 5)}, dt, 8.0, 2);
  const InterpolateMode mode =
      bilinear ? InterpolateMode::Bilinear : InterpolateMode::Nearest;
  auto to = [](int64_t oh, int64_t ow, InterpolateMode m, bool align) {
    return s::call1(
        [=](const Tensor& t) { return upsample2d(t, oh, ow, m, align); });
  };
  auto scaled = [mode](std::vector<double> f, bool align) {
    return s::call1([=](const Tensor& t) {
      nn::functional::InterpolateOptions o;
      o.scale_factor(f).mode(mode);
      if (align) {
        o.align_corners(true);
      }
      return nn::functional::interpolate(t, o);
    });
  };
  const int64_t uh = s::size(spec, 75, 5), uw = s::size(spec, 61, 7);
  std::vector<Sample> out = {
      {"up", {x}, to(uh, uw, mode, false)},
      {"down",
       {x},
       to(s::size(spec, 17, 2), s::size(spec, 13, 3), mode, false)},
      {"scale_factor", {x}, scaled({2.5, 1.5}, false)},
      {"strided", {s::strided(x)}, to(uh, uw, mode, false)},
      {"one_plane",
       {plane},
       to(s::size(spec, 150, 7), s::size(spec, 130, 9), mode, false)},
  };
  if (bilinear) {
    out.push_back({"align_corners", {x}, to(uh, uw, mode, true)});
    out.push_back(
        {"align_corners_down",
         {x},
         to(s::size(spec, 17, 2), s::size(spec, 13, 1), mode, true)});
  } else {
    out.push_back(
        {"nearest_exact",
         {x},
         to(uh, uw, InterpolateMode::NearestExact, false)});
  }
  return out;
}

std::vector<Sample> upsample_bad_samples(InterpolateMode mode) {
  auto to = [mode](int64_t oh, int64_t ow) {
    return s::call1(
        [=](const Tensor& t) { return upsample2d(t, oh, ow, mode); });
  };
  return {
      s::undefined_input(to(4, 4), 1),
      {"3d_input", {s::varied({2, 3, 3}, kFloat32, 2.0, 1)}, to(4, 4)},
      {"zero_output", {s::varied({1, 2, 3, 3}, kFloat32, 2.0, 1)}, to(0, 4)},
      {"integer_input", {s::varied({1, 2, 3, 3}, kInt64, 20.0, 1)}, to(4, 4)},
  };
}

} // namespace

DITTO_OP_RECORDS(upsample) {
  register_op({
      .name = "upsample_nearest2d",
      .family = "interpolation",
      .callables =
          {"ditto::nn::functional::upsample2d(x, out_h, out_w, InterpolateMode::Nearest)",
           "ditto::nn::functional::upsample2d(x, out_h, out_w, InterpolateMode::NearestExact)",
           "ditto::nn::functional::interpolate(x, options) (nearest modes)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("upsample_nearest2d_backward")},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) { return upsample_samples(spec, false); },
      .bad_samples =
          [] { return upsample_bad_samples(InterpolateMode::Nearest); },
  });
  register_op({
      .name = "upsample_bilinear2d",
      .family = "interpolation",
      .callables =
          {"ditto::nn::functional::upsample2d(x, out_h, out_w, InterpolateMode::Bilinear, "
           "align_corners)",
           "ditto::nn::functional::interpolate(x, options) (bilinear)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("upsample_bilinear2d_backward")},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) { return upsample_samples(spec, true); },
      .bad_samples =
          [] { return upsample_bad_samples(InterpolateMode::Bilinear); },
  });
}

} // namespace ditto::nn::functional
