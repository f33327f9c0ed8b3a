// Normalization, average pooling, padding, embedding and dropout2d against
// PyTorch 1.13 (tests/nn/gen_nn_golden.py, "layers"): outputs, running
// statistics and gradients; BatchNorm's forward bit for bit.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"

namespace ditto {
namespace {

namespace nn = ditto::nn;
namespace F = ditto::nn::functional;
using nlohmann::json;

const json& layers() {
  static const json j = [] {
    std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/nn_golden.json");
    return json::parse(in)["layers"];
  }();
  return j;
}

Tensor f32(const json& v, const Shape& s) {
  return tensor(v.get<std::vector<float>>()).view(s);
}
Tensor f64(const json& v, const Shape& s) {
  return tensor(v.get<std::vector<double>>()).view(s);
}

void expect_close(const Tensor& got, const json& want, double tol) {
  auto w = want.get<std::vector<double>>();
  Tensor g = got.contiguous().to(kFloat64).flatten();
  ASSERT_EQ(g.numel(), int64_t(w.size()));
  const double* p = g.data_ptr<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_NEAR(p[i], w[i], tol * std::max(1.0, std::abs(w[i]))) << i;
  }
}

void expect_bits(const Tensor& got, const json& want) {
  auto w = want.get<std::vector<float>>();
  Tensor g = got.contiguous().flatten();
  ASSERT_EQ(g.numel(), int64_t(w.size()));
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_EQ(g.data_ptr<float>()[i], w[i]) << i;
  }
}

// Gradients of (y * r).sum() for y = fn(x).
Tensor grad_of(
    const std::function<Tensor(const Tensor&)>& fn,
    const Tensor& x,
    const Tensor& r) {
  Tensor leaf = x.clone().requires_grad_();
  fn(leaf).mul(r).sum().backward();
  return leaf.grad();
}

TEST(NnLayers, BatchNorm2dIsPyTorchsBits) {
  const json& c = layers()["bn2d"];
  Tensor x = f32(c["x"], {4, 3, 5, 5}), x2 = f32(c["x2"], {4, 3, 5, 5});
  nn::BatchNorm2d bn(3);
  {
    autograd::NoGradGuard ng;
    bn.weight.copy_(f32(c["w"], {3}));
    bn.bias.copy_(f32(c["b"], {3}));
  }
  expect_bits(bn.forward(x), c["y1"]);
  bn.forward(x2);
  expect_bits(bn.running_mean, c["running_mean"]);
  expect_bits(bn.running_var, c["running_var"]);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  bn.eval();
  expect_close(bn.forward(x), c["y3"], 1e-6);
  // Gradients (training mode) to float32 rounding.
  nn::BatchNorm2d bt(3);
  {
    autograd::NoGradGuard ng;
    bt.weight.copy_(f32(c["w"], {3}));
    bt.bias.copy_(f32(c["b"], {3}));
  }
  Tensor r = f32(c["r"], {4, 3, 5, 5});
  Tensor xl = x.clone().requires_grad_();
  bt.forward(xl).mul(r).sum().backward();
  expect_close(xl.grad(), c["grad_x"], 2e-5);
  expect_close(bt.weight.grad(), c["grad_w"], 2e-5);
  expect_close(bt.bias.grad(), c["grad_b"], 2e-5);
  // The same bits for any thread count.
  const uint64_t want = fingerprint(xl.grad());
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    EXPECT_EQ(
        fingerprint(
            grad_of([&](const Tensor& t) { return bt.forward(t); }, x, r)),
        want);
  }
  set_num_threads(2);
}

TEST(NnLayers, BatchNorm1dCumulativeAverageAndErrors) {
  const json& c = layers()["bn1d_cumulative"];
  nn::BatchNorm1d bn(nn::BatchNormOptions(4).momentum(std::nullopt));
  bn.forward(f32(c["z"], {8, 4}));
  bn.forward(f32(c["z2"], {8, 4}));
  expect_close(bn.running_mean, c["running_mean"], 1e-6);
  expect_close(bn.running_var, c["running_var"], 1e-6);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  EXPECT_EQ(
      bn.repr(),
      "BatchNorm1d(4, eps=1e-05, momentum=None, affine=True, "
      "track_running_stats=True)");
  const uint64_t before = fingerprint(bn.running_mean);
  EXPECT_THROW(bn.forward(randn({1, 4})), ValueError); // one value per channel
  EXPECT_THROW(bn.forward(randn({8, 5})), ValueError);
  EXPECT_THROW(bn.forward(randn({8, 4, 2, 2})), ValueError);
  EXPECT_EQ(fingerprint(bn.running_mean), before);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
}

TEST(NnLayers, LayerNormAndGroupNormArePyTorchs) {
  for (const char* name : {"layernorm", "groupnorm"}) {
    SCOPED_TRACE(name);
    const json& c = layers()[name];
    const bool ln = std::string(name) == "layernorm";
    Shape xs = ln ? Shape{3, 4, 5} : Shape{2, 6, 3, 3};
    Shape ps = ln ? Shape{5} : Shape{6};
    std::unique_ptr<nn::Module> m;
    Tensor w, b;
    std::function<Tensor(const Tensor&)> fwd;
    if (ln) {
      auto l = std::make_shared<nn::LayerNorm>(5);
      w = l->weight;
      b = l->bias;
      fwd = [l](const Tensor& t) { return l->forward(t); };
    } else {
      auto gn = std::make_shared<nn::GroupNorm>(2, 6);
      w = gn->weight;
      b = gn->bias;
      fwd = [gn](const Tensor& t) { return gn->forward(t); };
    }
    {
      autograd::NoGradGuard ng;
      w.copy_(f32(c["w"], ps));
      b.copy_(f32(c["b"], ps));
    }
    Tensor x = f32(c["x"], xs);
    expect_close(fwd(x), c["y"], 1e-5);
    expect_close(grad_of(fwd, x, f32(c["r"], xs)), c["grad_x"], 1e-4);
    expect_close(w.grad(), c["grad_w"], 1e-4);
  }
}

TEST(NnLayers, PoolingAndPaddingArePyTorchs) {
  Tensor x = f64(layers()["pool_input"], {2, 3, 7, 9});
  std::map<std::string, std::function<Tensor(const Tensor&)>> fns = {
      {"avg_k2", [](const Tensor& t) { return F::avg_pool2d(t, {2}); }},
      {"avg_k3_s2_p1_ceil_nopad",
       [](const Tensor& t) {
         return F::avg_pool2d(t, {3}, {2}, {1}, true, false);
       }},
      {"avg_k3_s2_p1_ceil",
       [](const Tensor& t) { return F::avg_pool2d(t, {3}, {2}, {1}, true); }},
      {"avg_k32_div5",
       [](const Tensor& t) {
         return F::avg_pool2d(t, {3, 2}, {1, 2}, {0}, false, true, 5);
       }},
      {"adaptive_3_4",
       [](const Tensor& t) {
         return F::adaptive_avg_pool2d(t, {3, 4});
       }},
      {"adaptive_5_6",
       [](const Tensor& t) {
         return F::adaptive_avg_pool2d(t, {5, 6});
       }},
      {"pad_reflect",
       [](const Tensor& t) {
         return F::pad(t, {2, 1, 3, 0}, "reflect");
       }},
      {"pad_replicate",
       [](const Tensor& t) {
         return F::pad(t, {2, 4, 1, 3}, "replicate");
       }},
      {"pad_constant",
       [](const Tensor& t) {
         return F::pad(t, {1, 2, 0, 1}, "constant", 0.5);
       }},
  };
  int checked = 0;
  for (const auto& c : layers()["pool_cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    auto& fn = fns.at(name);
    Tensor y = fn(x);
    EXPECT_EQ(y.sizes(), c["shape"].get<Shape>());
    expect_close(y, c["y"], 1e-12);
    expect_close(grad_of(fn, x, f64(c["r"], y.sizes())), c["grad_x"], 1e-12);
    ++checked;
  }
  EXPECT_EQ(checked, 9);
  EXPECT_THROW(F::avg_pool2d(x, {2}, {}, {2}), ValueError);
  EXPECT_THROW(F::avg_pool2d(x, {2}, {}, {0}, false, true, 0), ValueError);
  EXPECT_THROW(F::pad(x, {9, 0}, "reflect"), ValueError);
}

TEST(NnLayers, EmbeddingSkipsThePaddingRowInBothModes) {
  const json& c = layers()["embedding"];
  Tensor w = f64(c["w"], {10, 3});
  Tensor idx = tensor(c["idx"].get<std::vector<int64_t>>()).view({2, 3});
  Tensor r = f64(c["r"], {2, 3, 3});
  for (bool det : {true, false}) {
    DeterministicGuard guard(det);
    auto fn = [&](const Tensor& t) { return F::embedding(idx, t, 8); };
    expect_close(fn(w), c["y"], 0);
    expect_close(grad_of(fn, w, r), c["grad_w"], 1e-12);
  }
  nn::Embedding e(nn::EmbeddingOptions(10, 4).padding_idx(-2));
  EXPECT_EQ(e.options.padding_idx(), 8);
  EXPECT_EQ(e.weight[8].abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(e.repr(), "Embedding(10, 4, padding_idx=8)");
  EXPECT_THROW(e.forward(tensor(std::vector<int64_t>{10})), IndexError);
}

TEST(NnLayers, Dropout2dDrawsAsPyTorch) {
  const json& c = layers()["dropout2d"];
  manual_seed(5);
  Tensor y = F::dropout2d(ones({3, 4, 2, 2}), 0.3);
  expect_bits(y, c["y"]);
  nn::Dropout2d d(0.3);
  d.eval();
  EXPECT_TRUE(d.forward(y).is_same(y));
}

} // namespace
} // namespace ditto
