// The poolings over one, two and three dims and max unpooling against
// PyTorch 1.13, bit for bit in float32: outputs, indices and input
// gradients, at 1 and 2 threads, with the deterministic mode on and off.
// tests/nn/gen_pool_golden.py wrote the fixture (tests/nn/pool_golden.json).

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

const json& pool_golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/nn/pool_golden.json");
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
std::pair<Tensor, Tensor> run(const json& c, const Tensor& x) {
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
  using Unpool = Tensor (*)(
      const Tensor&,
      const Tensor&,
      const IntList&,
      const IntList&,
      const IntList&,
      const IntList&);
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
  ASSERT_GE(cases.size(), 27u);
  for (int threads : {1, 2}) {
    for (bool det : {false, true}) {
      set_num_threads(threads);
      use_deterministic_algorithms(det);
      for (const json& c : cases) {
        const std::string what = c["name"].get<std::string>() + " at " +
            std::to_string(threads) + " threads" + (det ? ", deterministic" : "");
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

} // namespace
} // namespace ditto
