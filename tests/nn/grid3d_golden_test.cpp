// grid_sample on volumes against PyTorch 1.13, bit for bit in float32:
// outputs and the gradients of input and grid, every mode, padding mode and
// align_corners, at 1 and 2 threads with the deterministic mode on and off.
// tests/nn/gen_grid3d_golden.py wrote the fixture
// (tests/nn/grid3d_golden.json).

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

Tensor grid3d_f32(const json& values, const json& sizes) {
  return tensor(test::fixture_doubles(values))
      .to(kFloat32)
      .view(sizes.get<Shape>());
}

bool grid3d_bits_equal(const Tensor& got, const json& want) {
  const Tensor g = got.contiguous();
  const Tensor w = tensor(test::fixture_doubles(want)).to(kFloat32);
  if (g.numel() != w.numel()) {
    return false;
  }
  for (int64_t i = 0; i < g.numel(); ++i) {
    const float a = g.data_ptr<float>()[i], b = w.data_ptr<float>()[i];
    if (std::memcmp(&a, &b, sizeof a) != 0) {
      ADD_FAILURE() << "first difference at " << i << ": " << a << " against "
                    << b;
      return false;
    }
  }
  return true;
}

TEST(Grid3dGolden, EveryCaseHasPyTorchsBits) {
  std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/grid3d_golden.json");
  const json cases = json::parse(in)["cases"];
  ASSERT_EQ(cases.size(), 12u);
  const int saved = get_num_threads();
  for (int threads : {1, 2}) {
    for (bool det : {false, true}) {
      set_num_threads(threads);
      use_deterministic_algorithms(det);
      for (const json& c : cases) {
        const std::string mode = c["mode"], pad = c["padding_mode"];
        SCOPED_TRACE(
            mode + " " + pad +
            (c["align_corners"].get<bool>() ? " align" : "") + " at " +
            std::to_string(threads) + " threads");
        Tensor x = grid3d_f32(c["x"], c["x_sizes"]).requires_grad_();
        Tensor g = grid3d_f32(c["grid"], c["grid_sizes"]).requires_grad_();
        const F::GridSamplePadding p = pad == "zeros"
            ? F::GridSamplePadding::Zeros
            : pad == "border" ? F::GridSamplePadding::Border
                              : F::GridSamplePadding::Reflection;
        Tensor y = F::grid_sample(
            x,
            g,
            F::GridSampleOptions()
                .mode(
                    mode == "nearest" ? F::GridSampleMode::Nearest
                                      : F::GridSampleMode::Bilinear)
                .padding_mode(p)
                .align_corners(c["align_corners"].get<bool>()));
        EXPECT_TRUE(grid3d_bits_equal(y, c["y"]));
        y.backward(grid3d_f32(c["grad_y"], json(y.sizes())));
        EXPECT_TRUE(grid3d_bits_equal(x.grad(), c["grad_x"]));
        if (mode == "bilinear") {
          EXPECT_TRUE(grid3d_bits_equal(g.grad(), c["grad_grid"]));
        }
      }
    }
  }
  use_deterministic_algorithms(false);
  set_num_threads(saved);
}

TEST(Grid3dGolden, BadShapesAreRefused) {
  Tensor x = ones({1, 2, 3, 4, 5});
  EXPECT_THROW(F::grid_sample(x, zeros({1, 2, 2, 2, 2})), ValueError);
  EXPECT_THROW(F::grid_sample(x, zeros({2, 2, 2, 2, 3})), ValueError);
  EXPECT_THROW(F::grid_sample(x, zeros({1, 2, 2, 3})), ValueError);
  EXPECT_THROW(
      F::grid_sample(ones({1, 2, 0, 4, 5}), zeros({1, 2, 2, 2, 3})),
      ValueError);
}

} // namespace
} // namespace ditto
