// The records of grid_sample and affine_grid (grid_sample.cpp) (Note [Op
// records] in ditto/ops/record.cpp).

#include "ditto/nn/functional/vision.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::plane_path;

using ::ditto::detail::samples::kFloating;

// ---- grid sampling

std::vector<Sample> grid_sample_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t n = s::size(spec, 2, 1);
  Tensor in = s::varied(
      {n, s::size(spec, 5, 2), s::size(spec, 37, 4), s::size(spec, 41, 5)},
      dt,
      8.0,
      1);
  const int64_t ho = s::size(spec, 29, 3), wo = s::size(spec, 31, 2);
  Tensor grid = s::varied({n, ho, wo, 2}, dt, 1.9, 2);
  Tensor wide = s::varied({n, ho, wo, 2}, dt, 2.6, 3);
  Tensor plane =
      s::varied({1, 1, s::size(spec, 53, 4), s::size(spec, 47, 3)}, dt, 8.0, 4);
  Tensor plane_grid =
      s::varied({1, s::size(spec, 97, 3), s::size(spec, 89, 3), 2}, dt, 1.9, 5);
  Tensor vol = s::varied(
      {n,
       s::size(spec, 3, 2),
       s::size(spec, 9, 3),
       s::size(spec, 11, 3),
       s::size(spec, 13, 4)},
      dt,
      8.0,
      6);
  const int64_t dv = s::size(spec, 7, 2), hv = s::size(spec, 8, 2),
                wv = s::size(spec, 9, 2);
  Tensor vol_grid = s::varied({n, dv, hv, wv, 3}, dt, 1.9, 7);
  Tensor vol_wide = s::varied({n, dv, hv, wv, 3}, dt, 2.6, 8);
  Tensor vol_plane = s::varied(
      {1, 1, s::size(spec, 12, 3), s::size(spec, 10, 2), s::size(spec, 9, 3)},
      dt,
      8.0,
      9);
  Tensor vol_grid1 = s::varied(
      {1, s::size(spec, 21, 2), s::size(spec, 19, 2), s::size(spec, 17, 2), 3},
      dt,
      1.9,
      10);
  auto gs = [](GridSampleMode m, GridSamplePadding p, bool align) {
    return s::call2([=](const Tensor& x, const Tensor& g) {
      return grid_sample(
          x,
          g,
          GridSampleOptions().mode(m).padding_mode(p).align_corners(align));
    });
  };
  const auto bil = GridSampleMode::Bilinear;
  const auto zeros = GridSamplePadding::Zeros;
  return {
      {"bilinear_zeros", {in, grid}, gs(bil, zeros, false)},
      {"bilinear_border_align",
       {in, wide},
       gs(bil, GridSamplePadding::Border, true)},
      {"bilinear_reflection",
       {in, wide},
       gs(bil, GridSamplePadding::Reflection, false)},
      {"nearest", {in, grid}, gs(GridSampleMode::Nearest, zeros, false)},
      {"strided", {s::strided(in), grid}, gs(bil, zeros, false)},
      {"one_plane", {plane, plane_grid}, gs(bil, zeros, true)},
      // Volumes (trilinear): Note [grid_sample in 3-d].
      {"volume_trilinear_zeros", {vol, vol_grid}, gs(bil, zeros, false)},
      {"volume_trilinear_reflection_align",
       {vol, vol_wide},
       gs(bil, GridSamplePadding::Reflection, true)},
      {"volume_nearest_border",
       {vol, vol_wide},
       gs(GridSampleMode::Nearest, GridSamplePadding::Border, false)},
      {"volume_one_plane", {vol_plane, vol_grid1}, gs(bil, zeros, false)},
  };
}

} // namespace

DITTO_OP_RECORDS(grid_sample) {
  register_op({
      .name = "grid_sample",
      .family = "interpolation",
      .callables =
          {"ditto::nn::functional::grid_sample(input, grid, options)",
           "ditto::grid_sampler(input, grid, interpolation_mode, "
           "padding_mode, align_corners)",
           "ditto::grid_sampler_2d(input, grid, interpolation_mode, "
           "padding_mode, align_corners)",
           "ditto::grid_sampler_3d(input, grid, interpolation_mode, "
           "padding_mode, align_corners)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path(
          "grid_sampler_2d_backward",
          "1.21x the fast variant's time (32 x 64 x 56 x 56, 2 threads)")},
      .dtypes = kFloating,
      .samples = grid_sample_samples,
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& x, const Tensor& g) {
              return grid_sample(x, g);
            });
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"batch_mismatch",
                 {s::varied({2, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat32, 1.0, 2)},
                 call},
                {"dtype_mismatch",
                 {s::varied({1, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat64, 1.0, 2)},
                 call},
                // ATen's forms: their mode numbers and ranks.
                {"bicubic_mode",
                 {s::varied({1, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat32, 1.0, 2)},
                 s::call2([](const Tensor& x, const Tensor& g) {
                   return grid_sampler(x, g, 2, 0, false);
                 })},
                {"padding_mode_out_of_range",
                 {s::varied({1, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat32, 1.0, 2)},
                 s::call2([](const Tensor& x, const Tensor& g) {
                   return grid_sampler(x, g, 0, 3, false);
                 })},
                {"grid_sampler_3d_of_a_4d_input",
                 {s::varied({1, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat32, 1.0, 2)},
                 s::call2([](const Tensor& x, const Tensor& g) {
                   return grid_sampler_3d(x, g, 0, 0, false);
                 })},
            };
          },
  });
  register_op({
      .name = "affine_grid",
      .family = "interpolation",
      .callables =
          {"ditto::nn::functional::affine_grid(theta, size, "
           "align_corners)",
           "ditto::affine_grid_generator(theta, size, align_corners)"},
      .deterministic_because =
          "one batched product with k = 3 (one fma chain per output element) "
          "of a base grid built elementwise",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 4, 2);
            Tensor theta = s::varied({n, 2, 3}, spec.dtype, 2.0, 1);
            auto grid = [n](int64_t h, int64_t w, bool align) {
              return s::call1([=](const Tensor& t) {
                return affine_grid(t, {n, 3, h, w}, align);
              });
            };
            const int64_t h = s::size(spec, 37, 3), w = s::size(spec, 41, 2);
            return std::vector<Sample>{
                {"grid", {theta}, grid(h, w, false)},
                {"align_corners", {theta}, grid(h, w, true)},
                {"one_row", {theta}, grid(1, w, false)},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"theta_shape",
                 {s::varied({2, 3, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& t) {
                   return affine_grid(t, {2, 1, 4, 4});
                 })},
                {"integer_theta",
                 {s::varied({2, 2, 3}, kInt64, 20.0, 1)},
                 s::call1([](const Tensor& t) {
                   return affine_grid(t, {2, 1, 4, 4});
                 })},
            };
          },
  });
}

} // namespace ditto::nn::functional
