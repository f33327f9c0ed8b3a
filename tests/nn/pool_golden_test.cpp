// The poolings over one, two and three dims and max unpooling against
// PyTorch 1.13, bit for bit in float32: outputs, indices and input
// gradients, at 1 and 2 threads, with the deterministic mode on and off.
// tests/nn/gen_pool_golden.py wrote the fixture (tests/nn/pool_golden.json).

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ditto/ditto.h"
#include "tests/nn/fixture.h"

namespace ditto {
namespace {

namespace F = ditto::nn::functional;
using nlohmann::json;

const json& pool_golden() {
  static const json j = [] {
    std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/pool_golden.json");
    return json::parse(in);
  }();
  return j;
}

Tensor golden_f32(const json& values, const json& sizes) {
  return tensor(test::fixture_doubles(values))
      .to(kFloat32)
      .view(sizes.get<Shape>());
}

// An argument as the ops take it: one int or a list.
IntList ints(const json& args, const char* key, IntList fallback) {
  if (!args.contains(key) || args[key].is_null()) {
    return fallback;
  }
  const json& v = args[key];
  return v.is_array() ? v.get<IntList>() : IntList{v.get<int64_t>()};
}

// Runs case c's op on x: the output and the indices (undefined where the op
// gives none).
std::tuple<Tensor, Tensor> run(const json& c, const Tensor& x) {
  const std::string op = c["op"];
  const json& a = c["args"];
  const IntList k = ints(a, "kernel_size", {});
  const IntList st = ints(a, "stride", {});
  const IntList pad = ints(a, "padding", {0});
  const IntList dil = ints(a, "dilation", {1});
  const bool ceil = a.value("ceil_mode", false);
  const bool include = a.value("count_include_pad", true);
  std::optional<int64_t> div;
  if (a.contains("divisor_override")) {
    div = a["divisor_override"].get<int64_t>();
  }
  const IntList size = ints(a, "output_size", {});
  if (op == "pad") {
    return {
        F::pad(
            x,
            a["pad"].get<IntList>(),
            a["mode"].get<std::string>(),
            a["value"].get<double>()),
        {}};
  }
  if (op.starts_with("fractional_max_pool")) {
    std::vector<double> ratio;
    if (a.contains("output_ratio")) {
      const json& r = a["output_ratio"];
      ratio = r.is_array() ? r.get<std::vector<double>>()
                           : std::vector<double>{r.get<double>()};
    }
    Tensor u;
    if (c.contains("random_samples")) {
      const int n = op == "fractional_max_pool2d" ? 2 : 3;
      const int64_t batch = x.dim() == n + 1 ? 1 : x.size(0);
      u = golden_f32(
          c["random_samples"],
          Shape{batch, x.size(x.dim() - n - 1), int64_t(n)});
    } else {
      manual_seed(c["seed"].get<uint64_t>());
    }
    return op == "fractional_max_pool2d"
        ? F::fractional_max_pool2d_with_indices(x, k, size, ratio, u)
        : F::fractional_max_pool3d_with_indices(x, k, size, ratio, u);
  }
  if (op == "max_pool1d") {
    return F::max_pool1d_with_indices(x, k, st, pad, dil, ceil);
  }
  if (op == "max_pool3d") {
    return F::max_pool3d_with_indices(x, k, st, pad, dil, ceil);
  }
  if (op == "avg_pool1d") {
    return {F::avg_pool1d(x, k, st, pad, ceil, include), {}};
  }
  if (op == "avg_pool3d") {
    return {F::avg_pool3d(x, k, st, pad, ceil, include, div), {}};
  }
  if (op == "adaptive_avg_pool1d") {
    return {F::adaptive_avg_pool1d(x, size), {}};
  }
  if (op == "adaptive_avg_pool3d") {
    return {F::adaptive_avg_pool3d(x, size), {}};
  }
  if (op == "adaptive_max_pool1d") {
    return F::adaptive_max_pool1d_with_indices(x, size);
  }
  if (op == "adaptive_max_pool2d") {
    return F::adaptive_max_pool2d_with_indices(x, size);
  }
  if (op == "adaptive_max_pool3d") {
    return F::adaptive_max_pool3d_with_indices(x, size);
  }
  const Tensor idx = tensor(c["indices"].get<std::vector<int64_t>>())
                         .view(c["sizes"].get<Shape>());
  using Unpool = decltype(&F::max_unpool1d);
  const std::map<std::string, Unpool> unpools = {
      {"max_unpool1d", &F::max_unpool1d},
      {"max_unpool2d", &F::max_unpool2d},
      {"max_unpool3d", &F::max_unpool3d}};
  return {unpools.at(op)(x, idx, k, st, pad, size), {}};
}

// got's float32 bits equal want's (NaN where want has null).
void expect_bits(const Tensor& got, const json& want, const std::string& what) {
  const Tensor g = got.contiguous().flatten();
  ASSERT_EQ(g.dtype(), kFloat32) << what;
  ASSERT_EQ(g.numel(), int64_t(want.size())) << what;
  const float* p = g.data_ptr<float>();
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].is_null()) {
      bad += !std::isnan(p[i]);
      continue;
    }
    const float w = float(want[i].get<double>());
    bad += std::memcmp(&w, &p[i], sizeof w) != 0;
    if (bad == 1 && std::memcmp(&w, &p[i], sizeof w) != 0) {
      ADD_FAILURE() << what << ": first difference at " << i << ": " << p[i]
                    << " against " << w;
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

TEST(PoolGolden, EveryCaseHasPyTorchsBits) {
  const json& cases = pool_golden()["cases"];
  ASSERT_GE(cases.size(), 32u);
  for (int threads : {1, 2}) {
    for (bool det : {false, true}) {
      set_num_threads(threads);
      use_deterministic_algorithms(det);
      for (const json& c : cases) {
        const std::string what = c["name"].get<std::string>() + " at " +
            std::to_string(threads) + " threads" +
            (det ? ", deterministic" : "");
        Tensor x = golden_f32(c["x"], c["sizes"]).requires_grad_(true);
        auto [y, idx] = run(c, x);
        EXPECT_EQ(y.sizes(), c["out_sizes"].get<Shape>()) << what;
        expect_bits(y, c["y"], what + ": output");
        if (idx.defined() && c.contains("indices") &&
            c["op"].get<std::string>().find("unpool") == std::string::npos) {
          const Tensor ic = idx.contiguous();
          const int64_t* ip = ic.data_ptr<int64_t>();
          EXPECT_EQ(
              std::vector<int64_t>(ip, ip + ic.numel()),
              c["indices"].get<std::vector<int64_t>>())
              << what;
        }
        y.backward(golden_f32(c["grad_y"], c["out_sizes"]));
        expect_bits(x.grad(), c["grad_x"], what + ": input gradient");
      }
    }
  }
  use_deterministic_algorithms(false);
  set_num_threads(2);
}

// The layers of a printed Sequential, one line each.
std::vector<std::string> printed_layers(const char* key) {
  std::vector<std::string> out;
  std::istringstream lines(pool_golden()[key].get<std::string>());
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("): ");
    if (at != std::string::npos) {
      out.push_back(line.substr(at + 3));
    }
  }
  return out;
}

// Each layer prints as PyTorch's does (the fixture's Sequential, line by
// line) and computes what its functional op computes.
TEST(PoolGolden, LayersPrintAndComputeAsPyTorchs) {
  namespace nn = ditto::nn;
  const std::vector<std::string> want = printed_layers("repr_layers");
  std::vector<std::string> got = {
      nn::MaxPool1d(3)->repr(),
      nn::MaxPool3d(nn::MaxPool3dOptions(3).stride({2}).padding({1}))->repr(),
      nn::AvgPool1d(3)->repr(),
      nn::AvgPool3d(3)->repr(),
      nn::AvgPool3d(nn::AvgPool3dOptions({3, 2, 2}).divisor_override(2))
          ->repr(),
      nn::AdaptiveAvgPool1d(3)->repr(),
      nn::AdaptiveAvgPool3d({1, 2, 3})->repr(),
      nn::AdaptiveMaxPool1d(3)->repr(),
      nn::AdaptiveMaxPool2d({3, 4})->repr(),
      nn::AdaptiveMaxPool3d(2)->repr(),
      nn::MaxUnpool1d(2)->repr(),
      nn::MaxUnpool2d(2)->repr(),
      nn::MaxUnpool3d(nn::MaxUnpool3dOptions(2).stride({1}).padding({1}))
          ->repr(),
      nn::FractionalMaxPool2d(
          nn::FractionalMaxPool2dOptions(2).output_size({3}))
          ->repr(),
      nn::FractionalMaxPool3d(
          nn::FractionalMaxPool3dOptions({2, 3, 2}).output_ratio({0.5}))
          ->repr(),
  };
  EXPECT_EQ(got, want);

  manual_seed(3);
  const Tensor x = randn({2, 3, 6, 8, 4});
  nn::MaxPool3d pool(nn::MaxPool3dOptions(2));
  auto [y, idx] = pool->forward_with_indices(x);
  EXPECT_TRUE(equal(y, F::max_pool3d(x, {2})));
  // Unpooling puts each maximum back where it was, zeros elsewhere.
  const Tensor back = nn::MaxUnpool3d(2)->forward(y, idx);
  EXPECT_TRUE(equal(back, where(back.ne(0), x, zeros_like(x))));
  EXPECT_TRUE(equal(F::max_pool3d(back, {2}), y));
  EXPECT_TRUE(equal(
      nn::AdaptiveMaxPool2d({3, 4})->forward(x[0]),
      F::adaptive_max_pool2d(x[0], {3, 4})));
  EXPECT_TRUE(equal(
      nn::AvgPool1d(3)->forward(x.flatten(2)),
      F::avg_pool1d(x.flatten(2), {3})));
  EXPECT_THROW(nn::MaxPool3d(nn::MaxPool3dOptions({2, 2})), ValueError);
  EXPECT_THROW(
      nn::AvgPool1d(nn::AvgPool1dOptions(2).divisor_override(3)), ValueError);
  // Fractional pooling draws its samples at each forward, as PyTorch's.
  nn::FractionalMaxPool2d frac(
      nn::FractionalMaxPool2dOptions(2).output_ratio({0.5}));
  manual_seed(9);
  const Tensor f1 = frac->forward(x[0]);
  const Tensor f2 = frac->forward(x[0]);
  manual_seed(9);
  EXPECT_TRUE(equal(f1, F::fractional_max_pool2d(x[0], {2}, {}, {0.5})));
  EXPECT_TRUE(equal(f2, F::fractional_max_pool2d(x[0], {2}, {}, {0.5})));
  EXPECT_THROW(nn::FractionalMaxPool2d(2), ValueError); // no output size
  EXPECT_THROW(
      nn::FractionalMaxPool3d(
          nn::FractionalMaxPool3dOptions(2).output_size({2}).output_ratio(
              {0.5})),
      ValueError);
  EXPECT_THROW(
      nn::FractionalMaxPool2d(
          nn::FractionalMaxPool2dOptions(2).output_ratio({1.5})),
      ValueError);
}

TEST(PoolGolden, PaddingLayersPrintAsPyTorchsAndPad) {
  namespace nn = ditto::nn;
  const std::vector<std::string> got = {
      nn::ReflectionPad1d(2)->repr(),
      nn::ReflectionPad1d({1, 2})->repr(),
      nn::ReflectionPad3d(1)->repr(),
      nn::ReplicationPad1d(3)->repr(),
      nn::ReplicationPad2d({1, 2, 3, 4})->repr(),
      nn::ReplicationPad3d({1, 2, 3, 4, 5, 6})->repr(),
      nn::ConstantPad1d(2, 3.5)->repr(),
      nn::ConstantPad2d(1, 0.0)->repr(),
      nn::ConstantPad3d(1, -1.25)->repr(),
      nn::ZeroPad2d(1)->repr(),
  };
  EXPECT_EQ(got, printed_layers("repr_pads"));
  manual_seed(4);
  const Tensor x = randn({2, 3, 4, 5, 6});
  EXPECT_TRUE(equal(
      nn::ReflectionPad3d({1, 2, 3, 0, 1, 1})->forward(x),
      F::pad(x, {1, 2, 3, 0, 1, 1}, "reflect")));
  EXPECT_TRUE(equal(
      nn::ConstantPad1d(2, 0.5)->forward(x),
      F::pad(x, {2, 2}, "constant", 0.5)));
  EXPECT_THROW(nn::ReplicationPad3d({1, 2}), ValueError);
  // Reflect pads must stay below the size they mirror.
  EXPECT_THROW(nn::ReflectionPad3d(4)->forward(x), ValueError);
}

} // namespace
} // namespace ditto
