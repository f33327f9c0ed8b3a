// F.interpolate in every mode against PyTorch 1.13's AVX2 kernels, bit for
// bit in float32: outputs and input gradients at 1 and 2 threads, with the
// deterministic mode on and off (Note [PyTorch's interpolation bits] in
// ditto/nn/functional/upsample.cpp). tests/nn/gen_interp_golden.py wrote
// the fixture (tests/nn/interp_golden.json).

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
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

} // namespace
} // namespace ditto
