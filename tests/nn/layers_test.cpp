// Normalization, average pooling, padding, embedding and dropout2d against
// PyTorch 1.13 (tests/nn/gen_nn_golden.py, "layers"): outputs, running
// statistics and gradients; BatchNorm's forward bit for bit.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/nn/fixture.h"

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
using test::expect_close;
using test::f64;

void expect_bits(const Tensor& got, const json& want) {
  auto w = want.get<std::vector<float>>();
  Tensor g = got.contiguous().flatten();
  ASSERT_EQ(g.numel(), int64_t(w.size()));
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_EQ(g.data_ptr<float>()[i], w[i]) << i;
  }
}

// zlib's CRC-32 of the tensor's bytes (what the script records).
uint32_t crc32_of(const Tensor& t) {
  Tensor c = t.contiguous();
  uint32_t crc = 0xFFFFFFFFu;
  const auto* p = static_cast<const uint8_t*>(c.raw_data());
  for (int64_t i = 0; i < c.numel() * int64_t(c.element_size()); ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) {
      crc = crc & 1 ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
    }
  }
  return crc ^ 0xFFFFFFFFu;
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
    bn->weight.copy_(f32(c["w"], {3}));
    bn->bias.copy_(f32(c["b"], {3}));
  }
  expect_bits(bn->forward(x), c["y1"]);
  bn->forward(x2);
  expect_bits(bn->running_mean, c["running_mean"]);
  expect_bits(bn->running_var, c["running_var"]);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  bn->eval();
  expect_close(bn->forward(x), c["y3"], 1e-6);
  // Gradients (training mode) to float32 rounding.
  nn::BatchNorm2d bt(3);
  {
    autograd::NoGradGuard ng;
    bt->weight.copy_(f32(c["w"], {3}));
    bt->bias.copy_(f32(c["b"], {3}));
  }
  Tensor r = f32(c["r"], {4, 3, 5, 5});
  Tensor xl = x.clone().requires_grad_();
  bt->forward(xl).mul(r).sum().backward();
  expect_close(xl.grad(), c["grad_x"], 2e-5);
  expect_close(bt->weight.grad(), c["grad_w"], 2e-5);
  expect_close(bt->bias.grad(), c["grad_b"], 2e-5);
  // The same bits for any thread count.
  const uint64_t want = fingerprint(xl.grad());
  for (int threads : {1, 3}) {
    set_num_threads(threads);
    EXPECT_EQ(
        fingerprint(
            grad_of([&](const Tensor& t) { return bt->forward(t); }, x, r)),
        want);
  }
  set_num_threads(2);
}

TEST(NnLayers, BatchNorm1dCumulativeAverageAndErrors) {
  const json& c = layers()["bn1d_cumulative"];
  nn::BatchNorm1d bn(nn::BatchNormOptions(4).momentum(std::nullopt));
  bn->forward(f32(c["z"], {8, 4}));
  bn->forward(f32(c["z2"], {8, 4}));
  expect_close(bn->running_mean, c["running_mean"], 1e-6);
  expect_close(bn->running_var, c["running_var"], 1e-6);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  EXPECT_EQ(
      bn->repr(),
      "BatchNorm1d(4, eps=1e-05, momentum=None, affine=True, "
      "track_running_stats=True)");
  const uint64_t before = fingerprint(bn->running_mean);
  EXPECT_THROW(bn->forward(randn({1, 4})), ValueError); // one value per channel
  EXPECT_THROW(bn->forward(randn({8, 5})), ValueError);
  EXPECT_THROW(bn->forward(randn({8, 4, 2, 2})), ValueError);
  EXPECT_EQ(fingerprint(bn->running_mean), before);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
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
      auto l = std::make_shared<nn::LayerNormImpl>(5);
      w = l->weight;
      b = l->bias;
      fwd = [l](const Tensor& t) { return l->forward(t); };
    } else {
      auto gn = std::make_shared<nn::GroupNormImpl>(2, 6);
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
  EXPECT_EQ(e->options.padding_idx(), 8);
  EXPECT_EQ(e->weight[8].abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(e->repr(), "Embedding(10, 4, padding_idx=8)");
  EXPECT_THROW(e->forward(tensor(std::vector<int64_t>{10})), IndexError);
}

TEST(NnLayers, ConvTranspose2dIsPyTorchs) {
  const json& c = layers()["conv_transpose"];
  nn::ConvTranspose2d ct(nn::ConvTranspose2dOptions(4, 6, {3})
                             .stride({2})
                             .padding({1})
                             .output_padding({1})
                             .groups(2));
  ct->to(kFloat64);
  {
    autograd::NoGradGuard ng;
    ct->weight.copy_(f64(c["w"], c["w_shape"].get<Shape>()));
    ct->bias.copy_(f64(c["b"], {6}));
  }
  EXPECT_EQ(ct->repr(), c["repr"].get<std::string>());
  Tensor x = f64(c["x"], {2, 4, 5, 4});
  Tensor y = ct->forward(x);
  EXPECT_EQ(y.sizes(), c["shape"].get<Shape>());
  expect_close(y, c["y"], 1e-12);
  auto fn = [&](const Tensor& t) { return ct->forward(t); };
  expect_close(grad_of(fn, x, f64(c["r"], y.sizes())), c["grad_x"], 1e-12);
  expect_close(ct->weight.grad(), c["grad_w"], 1e-12);
  expect_close(ct->bias.grad(), c["grad_b"], 1e-12);
  EXPECT_THROW(ct->forward(randn({2, 3, 5, 4}, kFloat64)), ValueError);
  EXPECT_THROW(
      conv_transpose2d(x, ct->weight, {}, {2}, {1}, {2}, 2), ValueError);
}

// ConvTranspose1d, one of ConvNdImpl<D, Transposed>'s six layers (the
// others have their own goldens): PyTorch 1.13's initial bits, repr,
// float64 forward and gradients, unbatched input
// (gen_conv_transpose1d_golden.py).
TEST(NnLayers, ConvTranspose1dIsPyTorchs) {
  const json c = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/nn/conv_transpose1d_golden.json");
    return json::parse(in);
  }();
  manual_seed(0);
  nn::ConvTranspose1d ct(nn::ConvTranspose1dOptions(4, 6, 3)
                             .stride(2)
                             .padding(1)
                             .output_padding(1)
                             .groups(2));
  EXPECT_EQ(ct->weight.sizes(), c["init"]["w_shape"].get<Shape>());
  expect_bits(ct->weight, c["init"]["w"]);
  expect_bits(ct->bias, c["init"]["b"]);
  EXPECT_EQ(ct->repr(), c["init"]["repr"].get<std::string>());
  manual_seed(0);
  nn::ConvTranspose1d plain(3, 5, 2, 1, 0, 0, 1, false, 2); // positional
  expect_bits(plain->weight, c["plain"]["w"]);
  EXPECT_FALSE(plain->bias.defined());
  EXPECT_EQ(plain->repr(), c["plain"]["repr"].get<std::string>());

  ct->to(kFloat64);
  const json& f = c["forward"];
  Tensor x = f64(f["x"], {2, 4, 7});
  Tensor y = ct->forward(x);
  EXPECT_EQ(y.sizes(), f["shape"].get<Shape>());
  expect_close(y, f["y"], 1e-12);
  auto fn = [&](const Tensor& t) { return ct->forward(t); };
  expect_close(grad_of(fn, x, f64(f["r"], y.sizes())), f["grad_x"], 1e-12);
  expect_close(ct->weight.grad(), f["grad_w"], 1e-12);
  expect_close(ct->bias.grad(), f["grad_b"], 1e-12);
  const json& u = c["unbatched"];
  Tensor yu = ct->forward(f64(u["x"], {4, 5}));
  EXPECT_EQ(yu.sizes(), u["shape"].get<Shape>());
  expect_close(yu, u["y"], 1e-12);
  // Sizes are one value for one dim; the input must have 4 channels.
  EXPECT_THROW(
      nn::ConvTranspose1d(nn::ConvTranspose1dOptions(4, 6, {3, 3})),
      ValueError);
  EXPECT_THROW(ct->forward(randn({2, 3, 7}, kFloat64)), ValueError);
  EXPECT_THROW(F::conv_transpose1d(x, ct->weight, {}, {2, 2}), ValueError);
}

TEST(NnLayers, InterpolateIsPyTorchs) {
  using IO = F::InterpolateOptions;
  using M = F::InterpolateMode;
  std::map<std::string, IO> opts = {
      {"nearest_size", IO().size({8, 11})},
      {"nearest_scale", IO().scale_factor({1.7})},
      {"nearest_82", IO().size({82, 5})},
      {"nearest_exact", IO().size({9, 4}).mode(M::NearestExact)},
      {"bilinear", IO().size({9, 13}).mode(M::Bilinear)},
      {"bilinear_ac", IO().size({9, 13}).mode(M::Bilinear).align_corners(true)},
      {"bilinear_scale", IO().scale_factor({2.5, 0.6}).mode(M::Bilinear)},
      {"bilinear_recompute",
       IO().scale_factor({0.35})
           .mode(M::Bilinear)
           .recompute_scale_factor(true)},
  };
  int checked = 0;
  for (const auto& c : layers()["interpolate"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const IO& o = opts.at(name);
    Tensor x = f64(c["x"], c["in_shape"].get<Shape>());
    if (c["float32"].get<bool>()) {
      x = x.to(kFloat32);
    }
    auto fn = [&](const Tensor& t) { return F::interpolate(t, o); };
    Tensor y = fn(x);
    EXPECT_EQ(y.sizes(), c["shape"].get<Shape>());
    const double tol = x.dtype() == kFloat32 ? 1e-6 : 1e-12;
    expect_close(y, c["y"], tol);
    expect_close(
        grad_of(fn, x, f64(c["r"], y.sizes()).to(x.dtype())), c["grad_x"], tol);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  nn::Upsample up(IO().scale_factor({2.0}));
  EXPECT_EQ(up->repr(), layers()["upsample_repr"][0].get<std::string>());
  nn::Upsample up2(IO().size({4, 5}).mode(M::Bilinear));
  EXPECT_EQ(up2->repr(), layers()["upsample_repr"][1].get<std::string>());
  EXPECT_THROW(F::interpolate(randn({1, 1, 4, 4}), IO()), ValueError);
  EXPECT_THROW(
      F::interpolate(randn({1, 1, 4, 4}), IO().size({2}).align_corners(true)),
      ValueError);
  // Same bits for any thread count (the backward adds plane by plane).
  Tensor x = randn({2, 3, 17, 19});
  Tensor r = randn({2, 3, 40, 33});
  auto fn = [](const Tensor& t) {
    return F::interpolate(
        t, IO().size({40, 33}).mode(F::InterpolateMode::Bilinear));
  };
  const uint64_t want = fingerprint(grad_of(fn, x, r));
  for (int threads : {1, 3, 8}) {
    set_num_threads(threads);
    EXPECT_EQ(fingerprint(grad_of(fn, x, r)), want) << threads;
  }
  set_num_threads(2);
}

TEST(NnLayers, GridSampleAndAffineGridArePyTorchs) {
  const json& c = layers()["grid_sample"];
  Tensor x = f64(c["x"], {2, 3, 5, 6});
  Tensor theta = f64(c["theta"], {2, 2, 3});
  Tensor ag = F::affine_grid(theta, {2, 3, 4, 7});
  expect_close(ag, c["affine"], 1e-12);
  expect_close(
      grad_of(
          [](const Tensor& t) {
            return F::affine_grid(t, {2, 3, 4, 7});
          },
          theta,
          f64(c["affine_r"], {2, 4, 7, 2})),
      c["affine_grad"],
      1e-12);
  int checked = 0;
  for (const auto& k : c["cases"]) {
    const std::string mode = k["mode"], pad = k["padding"];
    const bool ac = k["align_corners"];
    SCOPED_TRACE(mode + " " + pad + (ac ? " align_corners" : ""));
    F::GridSampleOptions o;
    o.mode(
         mode == "nearest" ? F::GridSampleMode::Nearest
                           : F::GridSampleMode::Bilinear)
        .padding_mode(
            pad == "zeros"        ? F::GridSamplePadding::Zeros
                : pad == "border" ? F::GridSamplePadding::Border
                                  : F::GridSamplePadding::Reflection)
        .align_corners(ac);
    Tensor grid = f64(k["grid"], {2, 4, 7, 2});
    Tensor xl = x.clone().requires_grad_();
    Tensor gl = grid.clone().requires_grad_();
    Tensor y = F::grid_sample(xl, gl, o);
    expect_close(y, k["y"], 1e-12);
    y.mul(f64(k["r"], y.sizes())).sum().backward();
    expect_close(xl.grad(), k["grad_x"], 1e-12);
    if (mode == "bilinear") {
      expect_close(gl.grad(), k["grad_grid"], 1e-10);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 10);
  EXPECT_THROW(F::grid_sample(x, randn({2, 4, 7, 3}, kFloat64)), ValueError);
  EXPECT_THROW(F::grid_sample(x, randn({2, 4, 7, 2})), TypeError);
}

TEST(NnLayers, GeluAndErfArePyTorchs) {
  const json& c = layers()["gelu"];
  Tensor x = f64(c["x"], {141});
  expect_close(erf(x), c["erf"], 1e-15);
  for (const char* ap : {"none", "tanh"}) {
    SCOPED_TRACE(ap);
    auto fn = [&](const Tensor& t) { return F::gelu(t, ap); };
    expect_close(fn(x), c[ap]["y"], 1e-14);
    expect_close(
        grad_of(fn, x, f64(c[ap]["r"], {141})), c[ap]["grad_x"], 1e-13);
    expect_close(fn(x.to(kFloat32)), c[ap]["y32"], 1e-6);
  }
  EXPECT_EQ(nn::GELU()->repr(), c["repr"].get<std::string>());
  EXPECT_EQ(nn::GELU("tanh")->repr(), c["repr_tanh"].get<std::string>());
  EXPECT_THROW(nn::GELU("fast"), ValueError);
  // erf against glibc's over a dense sweep (ditto's own, docs/numerics.md).
  double worst = 0;
  for (int i = -60000; i <= 60000; ++i) {
    const double v = i * 1e-4;
    const double got = erf(scalar_tensor(v, kFloat64)).item<double>();
    const double want = std::erf(v);
    worst = std::max(
        worst, std::abs(got - want) / std::max(std::abs(want), 1e-300));
  }
  EXPECT_LT(worst, 2e-15); // about 7 ulp; docs/numerics.md
  std::cout << "erf: worst relative difference from glibc over [-6, 6]: "
            << worst << "\n";
}

TEST(NnLayers, TruncNormalAndOrthogonalArePyTorchs) {
  namespace init = nn::init;
  std::map<std::string, std::function<void(const Tensor&)>> fns = {
      {"trunc_normal_default", [](const Tensor& t) { init::trunc_normal_(t); }},
      {"trunc_normal_shifted",
       [](const Tensor& t) { init::trunc_normal_(t, 0.5, 0.3, -0.2, 0.9); }},
      {"trunc_normal_wide",
       [](const Tensor& t) { init::trunc_normal_(t, 0.0, 2.0, -3.0, 3.0); }},
      {"orthogonal_tall", [](const Tensor& t) { init::orthogonal_(t); }},
      {"orthogonal_wide", [](const Tensor& t) { init::orthogonal_(t, 2.0); }},
  };
  for (const auto& c : layers()["init_extra"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    manual_seed(17);
    Tensor t = empty(c["shape"].get<Shape>());
    fns.at(name)(t);
    EXPECT_EQ(
        crc32_of(default_generator().get_state()),
        c["rng_crc"].get<uint32_t>());
    if (name.rfind("trunc", 0) == 0) {
      // PyTorch's bits (its erfinv, glibc's libm, as on an FMA CPU).
      expect_bits(t, c["values"]);
    } else {
      expect_close(t, c["values"], 1e-5);
    }
  }
}

TEST(NnLayers, Dropout2dDrawsAsPyTorch) {
  const json& c = layers()["dropout2d"];
  manual_seed(5);
  Tensor y = F::dropout2d(ones({3, 4, 2, 2}), 0.3);
  expect_bits(y, c["y"]);
  nn::Dropout2d d(0.3);
  d->eval();
  EXPECT_TRUE(d->forward(y).is_same(y));
}

} // namespace
} // namespace ditto

namespace ditto {
namespace {

// The norms are ditto's fixed-order sums, so they agree with PyTorch's to
// rounding (not bit for bit); the scaling follows PyTorch's formula.
TEST(NnUtils, ClipGradNormIsPyTorchs) {
  const json& c = layers()["clip"];
  struct Case {
    const char* name;
    double max_norm, norm_type;
  };
  for (Case k :
       {Case{"norm2_05", 0.5, 2.0},
        Case{"norm_inf_03", 0.3, INFINITY},
        Case{"norm2_big", 100.0, 2.0}}) {
    SCOPED_TRACE(k.name);
    std::vector<Tensor> ps;
    for (size_t i = 0; i < c["grads"].size(); ++i) {
      Shape s = c["shapes"][i].get<Shape>();
      Tensor p = zeros(s).requires_grad_();
      p.mutable_grad() = f32(c["grads"][i], s);
      ps.push_back(p);
    }
    Tensor total = nn::utils::clip_grad_norm_(ps, k.max_norm, k.norm_type);
    EXPECT_NEAR(total.item<double>(), c[k.name]["total"].get<double>(), 1e-6);
    for (size_t i = 0; i < ps.size(); ++i) {
      expect_close(ps[i].grad(), c[k.name]["grads"][i], 1e-6);
    }
  }
  Tensor p = zeros({2}).requires_grad_();
  p.mutable_grad() = tensor(std::vector<float>{INFINITY, 1.0f});
  EXPECT_THROW(nn::utils::clip_grad_norm_({p}, 1.0, 2.0, true), ValueError);
  EXPECT_EQ(p.grad()[1].item<float>(), 1.0f); // unchanged
  nn::utils::clip_grad_value_({p}, 0.5);
  EXPECT_EQ(p.grad()[0].item<float>(), 0.5f);
  EXPECT_EQ(nn::utils::clip_grad_norm_({zeros({1})}, 1.0).item<float>(), 0.0f);
}

TEST(NnUtils, ParameterVectorsRoundTrip) {
  manual_seed(0);
  nn::Linear l(3, 2);
  Tensor v = nn::utils::parameters_to_vector(l->parameters());
  EXPECT_EQ(v.sizes(), (Shape{8}));
  nn::utils::vector_to_parameters(v.mul(2.0), l->parameters());
  EXPECT_TRUE(
      allclose(nn::utils::parameters_to_vector(l->parameters()), v.mul(2.0)));
  EXPECT_THROW(
      nn::utils::vector_to_parameters(zeros({7}), l->parameters()), ValueError);
}

// R4 for the optimizer and scheduler: stop after k steps, restore model,
// optimizer, scheduler and generator from their state dicts into fresh
// objects, continue: the same bits as never stopping.
struct TrainRun {
  nn::Sequential model;
  optim::AdamW opt;
  optim::OneCycleLR sched;
  explicit TrainRun(nn::Sequential m)
      : model(std::move(m)),
        opt(model->parameters(), optim::AdamOptions(1e-3).weight_decay(0.01)),
        sched(opt, optim::OneCycleLROptions(0.01, 40)) {}
  void steps(int n) {
    for (int i = 0; i < n; ++i) {
      Tensor x = randn({8, 6});
      Tensor y = randint(0, 3, {8});
      Tensor loss = F::cross_entropy(model->forward(x), y);
      opt.zero_grad();
      loss.backward();
      nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      opt.step();
      sched.step();
    }
  }
};

nn::Sequential small_model() {
  return nn::Sequential(
      nn::Linear(6, 16),
      nn::BatchNorm1d(16),
      nn::ReLU(),
      nn::Dropout(0.2),
      nn::Linear(16, 3));
}

TEST(NnUtils, ResumeFromStateDictsIsBitExact) {
  manual_seed(3);
  TrainRun straight(small_model());
  straight.steps(20);
  manual_seed(3);
  TrainRun first(small_model());
  first.steps(10);
  const nn::StateDict model_sd = first.model->state_dict();
  const nn::StateDict opt_sd = first.opt.state_dict();
  const nn::StateDict sched_sd = first.sched.state_dict();
  const Tensor rng = default_generator().get_state();
  manual_seed(99); // a different start, all overwritten below
  TrainRun resumed(small_model());
  resumed.model->load_state_dict(model_sd);
  resumed.opt.load_state_dict(opt_sd);
  resumed.sched.load_state_dict(sched_sd);
  default_generator().set_state(rng);
  resumed.steps(10);
  auto a = straight.model->state_dict(), b = resumed.model->state_dict();
  for (const auto& [name, t] : a) {
    EXPECT_EQ(fingerprint(t), fingerprint(b.at(name))) << name;
  }
  EXPECT_EQ(straight.opt.lr(0), resumed.opt.lr(0));
  // Bad state: nothing changes.
  nn::StateDict bad = opt_sd;
  bad.insert("state.0.exp_avg", zeros({5, 5}));
  const uint64_t before =
      fingerprint(resumed.opt.state_dict().at("state.0.exp_avg"));
  EXPECT_THROW(resumed.opt.load_state_dict(bad), ValueError);
  EXPECT_EQ(
      fingerprint(resumed.opt.state_dict().at("state.0.exp_avg")), before);
  nn::StateDict unknown;
  unknown.insert("state.99.exp_avg", zeros({1}));
  EXPECT_THROW(resumed.opt.load_state_dict(unknown), ValueError);
  EXPECT_THROW(resumed.sched.load_state_dict(nn::StateDict()), ValueError);
}

} // namespace
} // namespace ditto

namespace ditto {
namespace {

// Issue 61, item 18: an optimizer state holding values its constructor
// would refuse (lr -1 or NaN, Adam's beta1 2, a negative or fractional
// step) is refused by load_state_dict, naming the value, and changes
// nothing.
TEST(OptimizerState, ValuesTheConstructorRefusesAreRefused) {
  Tensor w = ones({3}).requires_grad_();
  optim::Adam adam({w}, optim::AdamOptions(0.01));
  w.mutable_grad() = ones({3});
  adam.step();
  const StateDict good = adam.state_dict();
  auto with = [&](const std::string& key, const Tensor& v) {
    StateDict sd;
    for (const auto& [k, t] : good) {
      sd.insert(k, k == key ? v : t);
    }
    return sd;
  };
  const double nan = std::nan("");
  struct Case {
    std::string key;
    Tensor value;
    std::string needle;
  };
  for (const Case& c :
       {Case{"param_groups.0.lr", scalar_tensor(-1.0, kFloat64), "-1"},
        Case{"param_groups.0.lr", scalar_tensor(nan, kFloat64), "nan"},
        Case{"param_groups.0.momentum", scalar_tensor(2.0, kFloat64), "2"},
        Case{"state.0.step", scalar_tensor(-3.0, kFloat32), "-3"},
        Case{"state.0.step", scalar_tensor(1.5, kFloat32), "1.5"}}) {
    try {
      adam.load_state_dict(with(c.key, c.value));
      ADD_FAILURE() << c.key << " accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(adam.lr(0), 0.01);
    EXPECT_EQ(*adam.momentum(0), 0.9);
    EXPECT_EQ(adam.param_state(w).at("step").item<float>(), 1.0f);
  }
  adam.load_state_dict(good); // the good state still loads
  EXPECT_EQ(adam.lr(0), 0.01);
}

} // namespace
} // namespace ditto
