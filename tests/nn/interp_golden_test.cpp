// F.interpolate in every mode against PyTorch 1.13's AVX2 kernels, bit for
// bit in float32: outputs and input gradients at 1 and 2 threads, with the
// deterministic mode on and off (Note [PyTorch's interpolation bits] in
// ditto/nn/functional/upsample.cpp). tests/nn/gen_interp_golden.py wrote
// the fixture (tests/nn/interp_golden.json).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/error_of.h"
#include "tests/nn/fixture.h"

namespace ditto {
namespace {

namespace F = ditto::nn::functional;
using nlohmann::json;

const json& interp_golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/nn/interp_golden.json");
    return json::parse(in);
  }();
  return j;
}

Tensor interp_f32(const json& values, const json& sizes) {
  return tensor(test::fixture_doubles(values))
      .to(kFloat32)
      .view(sizes.get<Shape>());
}

// The options of a case as F.interpolate's keyword arguments.
F::InterpolateOptions options_of(const json& a) {
  F::InterpolateOptions o;
  o.mode(F::interpolate_mode_from_name(a["mode"], "test"));
  if (a.contains("size")) {
    const json& s = a["size"];
    o.size(s.is_array() ? s.get<IntList>() : IntList{s.get<int64_t>()});
  } else {
    const json& f = a["scale_factor"];
    o.scale_factor(
        f.is_array() ? f.get<std::vector<double>>()
                     : std::vector<double>{f.get<double>()});
  }
  if (a.contains("align_corners")) {
    o.align_corners(a["align_corners"].get<bool>());
  }
  o.recompute_scale_factor(a.value("recompute_scale_factor", false));
  o.antialias(a.value("antialias", false));
  return o;
}

// The distance in units in the last place between two floats of one sign.
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return std::abs(int64_t(ia) - int64_t(ib));
}

// The elements of got more than tol_ulps from want's (0: whose float32
// bits differ).
int64_t differing(
    const Tensor& got,
    const json& want,
    std::string* first,
    int64_t tol_ulps = 0) {
  const Tensor g = got.contiguous().flatten();
  EXPECT_EQ(g.numel(), int64_t(want.size()));
  const float* p = g.data_ptr<float>();
  int64_t bad = 0;
  for (size_t i = 0; i < want.size() && int64_t(i) < g.numel(); ++i) {
    const float w = float(want[i].get<double>());
    const bool same = tol_ulps == 0
        ? std::memcmp(&w, &p[i], sizeof w) == 0
        : std::abs(p[i] - w) <= 1e-6f * std::max(1.0f, std::abs(w)) ||
            ulps(p[i], w) <= tol_ulps;
    if (!same) {
      if (bad++ == 0) {
        *first = "at " + std::to_string(i) + ": " + std::to_string(p[i]) +
            " against " + std::to_string(w);
      }
    }
  }
  return bad;
}

TEST(InterpGolden, EveryModeHasPyTorchsAvx2Bits) {
  const json& cases = interp_golden()["cases"];
  ASSERT_EQ(interp_golden()["capability"], "avx2");
  ASSERT_GE(cases.size(), 26u);
  for (int threads : {1, 2}) {
    for (bool det : {false, true}) {
      set_num_threads(threads);
      use_deterministic_algorithms(det);
      for (const json& c : cases) {
        const std::string what = c["name"].get<std::string>() + " at " +
            std::to_string(threads) + " threads" +
            (det ? ", deterministic" : "");
        Tensor x = interp_f32(c["x"], c["sizes"]).requires_grad_(true);
        Tensor y = F::interpolate(x, options_of(c["args"]));
        ASSERT_EQ(y.sizes(), c["out_sizes"].get<Shape>()) << what;
        // Antialiasing: PyTorch's weights exactly, its sums not yet (see
        // docs/nn.md): within 1 ulp (or 1e-6 near zero).
        const int64_t tol = c["args"].value("antialias", false) ? 1 : 0;
        std::string first;
        EXPECT_EQ(differing(y, c["y"], &first, tol), 0)
            << what << ": output, first " << first;
        y.backward(interp_f32(c["grad_y"], c["out_sizes"]));
        EXPECT_EQ(differing(x.grad(), c["grad_x"], &first, tol), 0)
            << what << ": input gradient, first " << first;
      }
    }
  }
  use_deterministic_algorithms(false);
  set_num_threads(2);
}

// torch 1.13's F.interpolate in C++ (python/ditto/nn/functional.py is the
// same Python): the ATen form it calls, with output_size or scale_factors;
// undefined for area (adaptive average pooling, no upsample form).
Tensor aten_form(const Tensor& x, const json& a) {
  const std::string mode = a["mode"];
  const size_t n = size_t(x.dim() - 2);
  OptionalIntArg size;
  std::optional<std::vector<double>> f;
  if (a.contains("size")) {
    const json& s = a["size"];
    size = s.is_array() ? s.get<IntList>() : IntList(n, s.get<int64_t>());
  } else {
    const json& sf = a["scale_factor"];
    const std::vector<double> v = sf.is_array()
        ? sf.get<std::vector<double>>()
        : std::vector<double>(n, sf.get<double>());
    if (a.value("recompute_scale_factor", false)) {
      IntList sizes;
      for (size_t i = 0; i < n; ++i) {
        sizes.push_back(
            int64_t(std::floor(double(x.size(int64_t(2 + i))) * v[i])));
      }
      size = sizes;
    } else {
      f = v;
    }
  }
  const bool ac = a.value("align_corners", false);
  const bool aa = a.value("antialias", false);
  if (mode == "nearest") {
    return n == 1 ? upsample_nearest1d(x, size, f)
        : n == 2  ? upsample_nearest2d(x, size, f)
                  : upsample_nearest3d(x, size, f);
  }
  if (mode == "nearest-exact") {
    return n == 1 ? _upsample_nearest_exact1d(x, size, f)
        : n == 2  ? _upsample_nearest_exact2d(x, size, f)
                  : _upsample_nearest_exact3d(x, size, f);
  }
  if (mode == "linear") {
    return upsample_linear1d(x, size, ac, f);
  }
  if (mode == "bilinear") {
    return aa ? _upsample_bilinear2d_aa(x, size, ac, f)
              : upsample_bilinear2d(x, size, ac, f);
  }
  if (mode == "bicubic") {
    return aa ? _upsample_bicubic2d_aa(x, size, ac, f)
              : upsample_bicubic2d(x, size, ac, f);
  }
  if (mode == "trilinear") {
    return upsample_trilinear3d(x, size, ac, f);
  }
  return Tensor();
}

// The declared ATen forms (composite/interpolation.ops.toml), called as
// F.interpolate calls them, give PyTorch's bits too.
TEST(InterpGolden, AtenFormsHavePyTorchsAvx2Bits) {
  int64_t checked = 0;
  for (const json& c : interp_golden()["cases"]) {
    const std::string what = c["name"];
    Tensor x = interp_f32(c["x"], c["sizes"]).requires_grad_(true);
    Tensor y = aten_form(x, c["args"]);
    if (!y.defined()) {
      continue;
    }
    ++checked;
    ASSERT_EQ(y.sizes(), c["out_sizes"].get<Shape>()) << what;
    const int64_t tol = c["args"].value("antialias", false) ? 1 : 0;
    std::string first;
    EXPECT_EQ(differing(y, c["y"], &first, tol), 0)
        << what << ": output, first " << first;
    y.backward(interp_f32(c["grad_y"], c["out_sizes"]));
    EXPECT_EQ(differing(x.grad(), c["grad_x"], &first, tol), 0)
        << what << ": input gradient, first " << first;
  }
  EXPECT_GE(checked, 20);
}

// The fixed-rank forms (sizes, a scale or none per dim) are the .vec
// forms' bits; the .vec forms take exactly one of output_size and
// scale_factors.
TEST(InterpGolden, AtenFixedRankFormsAndRefusals) {
  Tensor x = linspace(-2.0, 3.0, 2 * 3 * 5 * 7, kFloat32).view({2, 3, 5, 7});
  EXPECT_TRUE(equal(
      upsample_bilinear2d(x, {9, 4}, true),
      upsample_bilinear2d(
          x, OptionalIntArg(IntList{9, 4}), true, std::nullopt)));
  EXPECT_TRUE(equal(
      upsample_nearest2d(x, {10, 14}, 2.0, 2.0),
      upsample_nearest2d(x, std::nullopt, std::vector<double>{2.0, 2.0})));
  EXPECT_TRUE(equal(
      upsample_bicubic2d(x, {12, 17}, false, 2.5, 2.5),
      upsample_bicubic2d(
          x, std::nullopt, false, std::vector<double>{2.5, 2.5})));
  Tensor v = x.view({2, 3, 5, 7, 1});
  EXPECT_EQ(
      upsample_trilinear3d(v, {3, 4, 2}, false).sizes(),
      Shape({2, 3, 3, 4, 2}));
  EXPECT_EQ(
      upsample_linear1d(
          x.view({6, 5, 7}), std::nullopt, false, std::vector<double>{1.5})
          .sizes(),
      Shape({6, 5, 10}));
  const std::string both = test::error_of<ValueError>([&] {
    upsample_nearest2d(x, IntList{4, 4}, std::vector<double>{2.0, 2.0});
  });
  EXPECT_NE(both.find("[upsample_nearest2d]"), std::string::npos) << both;
  EXPECT_NE(
      both.find("exactly one of output_size and scale_factors"),
      std::string::npos)
      << both;
  EXPECT_THROW(upsample_nearest2d(x, std::nullopt, std::nullopt), ValueError);
  EXPECT_THROW(upsample_nearest2d(x, {4, 4, 4}), ValueError);
  EXPECT_THROW(upsample_nearest3d(x, {4, 4, 4}), ValueError); // 4-d input
  EXPECT_THROW(
      upsample_bilinear2d(
          x, std::nullopt, false, std::vector<double>{-1.0, 2.0}),
      ValueError);
}

} // namespace
} // namespace ditto
