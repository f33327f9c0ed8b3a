// The records of the interpolations upsample_nearest1d/2d/3d,
// upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d,
// upsample_bicubic2d and the antialiased upsample_bilinear2d_aa and
// upsample_bicubic2d_aa (upsample.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ditto/nn/functional/vision.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::plane_path;

using ::ditto::detail::samples::kFloating;

// ---- interpolation

// The ATen forms a record holds (composite/interpolation.ops.toml): each
// name's .vec overload and its fixed-rank one.
std::vector<std::string> aten_callables(
    const std::array<const char*, 2>& names,
    bool interpolating,
    int n) {
  static const char* const kScales[] = {
      "", "scales", "scales_h, scales_w", "scales_d, scales_h, scales_w"};
  const std::string align = interpolating ? "align_corners, " : "";
  std::vector<std::string> out;
  for (const char* name : names) {
    if (name == nullptr) {
      continue;
    }
    out.push_back(
        std::string("ditto::") + name + "(input, output_size, " + align +
        "scale_factors)");
    out.push_back(
        std::string("ditto::") + name + "(self, output_size, " + align +
        kScales[n] + ")");
  }
  return out;
}

// a's items, then b's.
template <typename T>
std::vector<T> with(std::vector<T> a, std::vector<T> b) {
  for (T& x : b) {
    a.push_back(std::move(x));
  }
  return a;
}

// The .vec forms' own refusals: both of output_size and scale_factors,
// neither, and one value too many.
using VecFn = Tensor (*)(
    const Tensor&,
    const OptionalIntArg&,
    const std::optional<std::vector<double>>&);
std::vector<Sample> aten_bad_samples(VecFn vec, int n) {
  Tensor x = s::varied(Shape(size_t(n + 2), 3), kFloat32, 2.0, 1);
  const IntList four(size_t(n), 4);
  const std::vector<double> two(size_t(n), 2.0);
  auto call = [vec](OptionalIntArg size, std::optional<std::vector<double>> f) {
    return s::call1([=](const Tensor& t) { return vec(t, size, f); });
  };
  IntList more = four;
  more.push_back(4);
  return {
      {"size_and_scale_factors", {x}, call(four, two)},
      {"neither", {x}, call(std::nullopt, std::nullopt)},
      {"one_size_too_many", {x}, call(more, std::nullopt)},
  };
}

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

// The upsample ops over 1 and 3 dims, bicubic and the antialiased modes
// (2-d nearest and bilinear have their own samples above).
struct UpsampleOp {
  const char* name;
  InterpolateMode mode;
  int n;
  bool antialias;
  // the ATen forms: the record's own (a .vec overload with
  // align_corners=false for the bad samples) and nearest-exact's
  std::array<const char*, 2> aten;
  VecFn vec;
};

std::vector<Sample> upsample_nd_samples(const SampleSpec& spec, UpsampleOp u) {
  const Dtype dt = spec.dtype;
  Shape sizes = {s::size(spec, 2, 1), s::size(spec, 3, 2)};
  Shape plane_sizes = {1, 1};
  const int64_t big[3] = {
      s::size(spec, 9, 3), s::size(spec, 11, 4), s::size(spec, 13, 3)};
  const int64_t one_plane[3] = {
      s::size(spec, 17, 3), s::size(spec, 19, 4), s::size(spec, 301, 5)};
  for (int i = 0; i < u.n; ++i) {
    sizes.push_back(big[3 - u.n + i]);
    plane_sizes.push_back(
        u.n == 1 ? s::size(spec, 4001, 6) : one_plane[3 - u.n + i]);
  }
  Tensor x = s::varied(sizes, dt, 8.0, 1);
  Tensor plane = s::varied(plane_sizes, dt, 8.0, 2);
  auto grown = [&](const Tensor& t, double f) {
    IntList out;
    for (int i = 0; i < u.n; ++i) {
      out.push_back(std::max<int64_t>(1, int64_t(double(t.size(2 + i)) * f)));
    }
    return out;
  };
  auto to = [u](IntList size, bool align) {
    return s::call1([=](const Tensor& t) {
      return upsample(t, size, u.mode, align, {}, u.antialias);
    });
  };
  const bool interpolating = u.mode != InterpolateMode::Nearest &&
      u.mode != InterpolateMode::NearestExact;
  std::vector<Sample> out = {
      {"up", {x}, to(grown(x, 1.7), false)},
      {"down", {x}, to(grown(x, 0.45), false)},
      {"strided", {s::strided(x)}, to(grown(x, 1.7), false)},
      {"one_plane", {plane}, to(grown(plane, 1.3), false)},
      {"scale_factor", {x}, s::call1([u](const Tensor& t) {
         InterpolateOptions o;
         o.scale_factor({2.5}).mode(u.mode).antialias(u.antialias);
         return interpolate(t, o);
       })},
  };
  if (interpolating) {
    out.push_back({"align_corners", {x}, to(grown(x, 1.7), true)});
    out.push_back({"align_corners_down", {x}, to(grown(x, 0.45), true)});
  }
  if (u.mode == InterpolateMode::Nearest) {
    out.push_back(
        {"nearest_exact",
         {x},
         s::call1([size = grown(x, 1.7)](const Tensor& t) {
           return upsample(t, size, InterpolateMode::NearestExact);
         })});
  }
  return out;
}

std::vector<Sample> upsample_nd_bad_samples(const UpsampleOp& u) {
  auto to = [u](IntList size) {
    return s::call1([=](const Tensor& t) {
      return upsample(t, size, u.mode, false, {}, u.antialias);
    });
  };
  const IntList four(size_t(u.n), 4);
  IntList zero = four;
  zero.back() = 0;
  Shape ok(size_t(u.n + 2), 3), low(size_t(u.n + 1), 3);
  std::vector<Sample> out = {
      s::undefined_input(to(four), 1),
      {"rank", {s::varied(low, kFloat32, 2.0, 1)}, to(four)},
      {"zero_output", {s::varied(ok, kFloat32, 2.0, 1)}, to(zero)},
      {"integer_input", {s::varied(ok, kInt64, 20.0, 1)}, to(four)},
  };
  return with(std::move(out), aten_bad_samples(u.vec, u.n));
}

} // namespace

DITTO_OP_RECORDS(upsample) {
  // the interpolating .vec forms with align_corners=false
  constexpr VecFn linear1d = [](const Tensor& x,
                                const OptionalIntArg& size,
                                const std::optional<std::vector<double>>& f) {
    return upsample_linear1d(x, size, false, f);
  };
  constexpr VecFn trilinear3d =
      [](const Tensor& x,
         const OptionalIntArg& size,
         const std::optional<std::vector<double>>& f) {
        return upsample_trilinear3d(x, size, false, f);
      };
  constexpr VecFn bicubic2d = [](const Tensor& x,
                                 const OptionalIntArg& size,
                                 const std::optional<std::vector<double>>& f) {
    return upsample_bicubic2d(x, size, false, f);
  };
  constexpr VecFn bilinear2d_aa =
      [](const Tensor& x,
         const OptionalIntArg& size,
         const std::optional<std::vector<double>>& f) {
        return _upsample_bilinear2d_aa(x, size, false, f);
      };
  constexpr VecFn bicubic2d_aa =
      [](const Tensor& x,
         const OptionalIntArg& size,
         const std::optional<std::vector<double>>& f) {
        return _upsample_bicubic2d_aa(x, size, false, f);
      };
  const UpsampleOp ops[] = {
      {"upsample_nearest1d",
       InterpolateMode::Nearest,
       1,
       false,
       {"upsample_nearest1d", "_upsample_nearest_exact1d"},
       &upsample_nearest1d},
      {"upsample_nearest3d",
       InterpolateMode::Nearest,
       3,
       false,
       {"upsample_nearest3d", "_upsample_nearest_exact3d"},
       &upsample_nearest3d},
      {"upsample_linear1d",
       InterpolateMode::Linear,
       1,
       false,
       {"upsample_linear1d", nullptr},
       linear1d},
      {"upsample_trilinear3d",
       InterpolateMode::Trilinear,
       3,
       false,
       {"upsample_trilinear3d", nullptr},
       trilinear3d},
      {"upsample_bicubic2d",
       InterpolateMode::Bicubic,
       2,
       false,
       {"upsample_bicubic2d", nullptr},
       bicubic2d},
      {"upsample_bilinear2d_aa",
       InterpolateMode::Bilinear,
       2,
       true,
       {"_upsample_bilinear2d_aa", nullptr},
       bilinear2d_aa},
      {"upsample_bicubic2d_aa",
       InterpolateMode::Bicubic,
       2,
       true,
       {"_upsample_bicubic2d_aa", nullptr},
       bicubic2d_aa},
  };
  for (const UpsampleOp& u : ops) {
    std::vector<std::string> callables = aten_callables(
        u.aten,
        u.mode != InterpolateMode::Nearest &&
            u.mode != InterpolateMode::NearestExact,
        u.n);
    callables.insert(
        callables.end(),
        {std::string("ditto::nn::functional::upsample(x, output_size, "
                     "InterpolateMode::") +
             (u.mode == InterpolateMode::Nearest ? "Nearest" : "") +
             (u.mode == InterpolateMode::Linear ? "Linear" : "") +
             (u.mode == InterpolateMode::Trilinear ? "Trilinear" : "") +
             (u.mode == InterpolateMode::Bicubic ? "Bicubic" : "") +
             (u.mode == InterpolateMode::Bilinear ? "Bilinear" : "") +
             ", align_corners, scales, antialias=" +
             (u.antialias ? "true" : "false") + ")",
         std::string("ditto::nn::functional::interpolate(x, options) (") +
             interpolate_mode_name(u.mode) +
             (u.antialias ? ", antialias" : "") + ")"});
    register_op({
        .name = u.name,
        .family = "interpolation",
        .callables = std::move(callables),
        .deterministic_because = {},
        .nondeterministic = {plane_path(
            (std::string(u.name) + "_backward").c_str())},
        .dtypes = kFloating,
        .samples =
            [u](const SampleSpec& spec) {
              return upsample_nd_samples(spec, u);
            },
        .bad_samples = [u] { return upsample_nd_bad_samples(u); },
    });
  }
  register_op({
      .name = "upsample_nearest2d",
      .family = "interpolation",
      .callables = with(
          aten_callables(
              {"upsample_nearest2d", "_upsample_nearest_exact2d"}, false, 2),
          {"ditto::nn::functional::interpolate(x, options) (nearest modes)"}),
      .deterministic_because = {},
      .nondeterministic = {plane_path("upsample_nearest2d_backward")},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) { return upsample_samples(spec, false); },
      .bad_samples =
          [] {
            return with(
                upsample_bad_samples(InterpolateMode::Nearest),
                aten_bad_samples(&upsample_nearest2d, 2));
          },
  });
  register_op({
      .name = "upsample_bilinear2d",
      .family = "interpolation",
      .callables = with(
          aten_callables({"upsample_bilinear2d", nullptr}, true, 2),
          {"ditto::nn::functional::interpolate(x, options) (bilinear)"}),
      .deterministic_because = {},
      .nondeterministic = {plane_path("upsample_bilinear2d_backward")},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) { return upsample_samples(spec, true); },
      .bad_samples =
          [] {
            return with(
                upsample_bad_samples(InterpolateMode::Bilinear),
                aten_bad_samples(
                    [](const Tensor& x,
                       const OptionalIntArg& size,
                       const std::optional<std::vector<double>>& f) {
                      return upsample_bilinear2d(x, size, false, f);
                    },
                    2));
          },
  });
}

} // namespace ditto::nn::functional
