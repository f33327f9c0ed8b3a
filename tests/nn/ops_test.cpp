// The ops under nn: losses, softmax and pooling against PyTorch's values
// (tests/nn/gen_nn_golden.py, "extra"), their gradients by gradcheck, the
// fused optimizer arithmetic, and the determinism contract of the pooling
// backward and of training.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"
#include "tests/nn/fixture.h"

namespace ditto {
namespace {

namespace F = ditto::nn::functional;
using F::Reduction;
using nlohmann::json;

const json& extra() {
  static const json j = [] {
    std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/nn_golden.json");
    return json::parse(in)["extra"];
  }();
  return j;
}

Tensor i64(const json& v, const Shape& shape) {
  return tensor(v.get<std::vector<int64_t>>()).view(shape);
}

using test::expect_close;
using test::f64;

TEST(NnOps, LossesArePyTorchs) {
  const json& in = extra()["loss_inputs"];
  const json& want = extra()["losses"];
  Tensor x = f64(in["x"], {6, 5}), w = f64(in["w"], {5}),
         p = f64(in["p"], {6, 5}), z = f64(in["z"], {6, 5}),
         y = f64(in["y"], {6, 5}), pw = f64(in["pw"], {5}),
         x4 = f64(in["x4"], {2, 3, 4, 5});
  Tensor t = i64(in["t"], {6}), t4 = i64(in["t4"], {2, 4, 5});
  using CE = F::CrossEntropyOptions;
  expect_close(F::cross_entropy(x, t), want["ce"]);
  expect_close(
      F::cross_entropy(x, t, CE().weight(w).reduction(Reduction::Sum)),
      want["ce_w_sum"]);
  expect_close(
      F::cross_entropy(x, t, CE().weight(w).label_smoothing(0.1)),
      want["ce_w_smooth"]);
  expect_close(
      F::cross_entropy(x, t, CE().label_smoothing(0.3)), want["ce_smooth"]);
  expect_close(F::cross_entropy(x, p), want["ce_prob"]);
  expect_close(
      F::cross_entropy(x, p, CE().weight(w).label_smoothing(0.2)),
      want["ce_prob_w_smooth"]);
  expect_close(F::cross_entropy(x4, t4), want["ce_4d"]);
  expect_close(
      F::nll_loss(
          F::log_softmax(x, 1),
          t,
          F::NLLLossOptions().reduction(Reduction::None)),
      want["nll_none"]);
  expect_close(F::mse_loss(z, y), want["mse"]);
  expect_close(F::l1_loss(z, y, Reduction::Sum), want["l1_sum"]);
  expect_close(
      F::smooth_l1_loss(z, y, Reduction::Mean, 0.5), want["smooth_l1_05"]);
  expect_close(F::binary_cross_entropy_with_logits(z, y), want["bce_logits"]);
  expect_close(
      F::binary_cross_entropy_with_logits(
          z, y, F::BCEWithLogitsOptions().pos_weight(pw)),
      want["bce_logits_pw"]);
  expect_close(
      F::kl_div(F::log_softmax(z, 1), p, F::KLDivReduction::BatchMean),
      want["kl_batchmean"]);
  expect_close(
      F::kl_div(F::log_softmax(z, 1), log(p), F::KLDivReduction::Sum, true),
      want["kl_log_target_sum"]);
  expect_close(F::log_softmax(x, 1), want["log_softmax"]);
  expect_close(F::softmax(x, 0), want["softmax0"]);
}

// A fixture number of bce_golden.json: a double, or "inf" / "-inf".
double bce_number(const json& v) {
  if (v.is_string()) {
    return v.get<std::string>() == "inf"
        ? std::numeric_limits<double>::infinity()
        : -std::numeric_limits<double>::infinity();
  }
  return v.get<double>();
}

void expect_bce_values(const Tensor& got, const json& want, const char* what) {
  Tensor g = got.detach().contiguous().to(kFloat64).flatten();
  ASSERT_EQ(g.numel(), int64_t(want.size())) << what;
  const double* p = g.data_ptr<double>();
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = bce_number(want[i]);
    if (std::isinf(w)) {
      EXPECT_EQ(p[i], w) << what << " " << i;
    } else {
      EXPECT_NEAR(p[i], w, 2e-6 * std::max(1.0, std::abs(w)))
          << what << " " << i;
    }
  }
}

// binary_cross_entropy's gradients are PyTorch's, also where the input is
// exactly 0 or 1: finite (about 1e12 / n), where the clamped logs' chain
// rule gave NaN (0 * inf) and killed a training at its first confident
// prediction.
// LibTorch's F::normalize(input, NormalizeFuncOptions): p = 2 is ditto's
// chain (normalize(x, dim, eps)), another p LibTorch's formula; out= takes
// the result.
TEST(NnOps, NormalizeTakesLibTorchsOptions) {
  Tensor x = tensor<float>({3, -4, 1, 1, 0, 0}, {3, 2});
  EXPECT_TRUE(equal(F::normalize(x), F::normalize(x, 1)));
  EXPECT_TRUE(equal(
      F::normalize(x, F::NormalizeFuncOptions().dim(0).eps(1e-6)),
      F::normalize(x, 0, 1e-6)));
  Tensor l1 = F::normalize(x, F::NormalizeFuncOptions().p(1));
  EXPECT_TRUE(equal(
      l1, tensor<float>({3.0f / 7, -4.0f / 7, 0.5f, 0.5f, 0, 0}, {3, 2})));
  // the zero row: 0 / eps
  Tensor inf = F::normalize(x, F::NormalizeFuncOptions().p(INFINITY));
  EXPECT_EQ(inf.abs().amax({1}).sum().item<float>(), 2.0f);
  Tensor out = empty({0});
  Tensor r = F::normalize(x, F::NormalizeFuncOptions().p(1).out(out));
  EXPECT_TRUE(r.is_same(out));
  EXPECT_TRUE(equal(out, l1));
  EXPECT_THROW(
      F::normalize(x, F::NormalizeFuncOptions().p(3).dim(2)), IndexError);
  // An all-zero row's gradient is 1 / eps for p = 2 as for another p (as
  // torch's; sqrt's gradient at 0 made it NaN), the other rows' unchanged.
  for (double p : {2.0, 1.0}) {
    Tensor w = x.clone().requires_grad_(true);
    F::normalize(w, F::NormalizeFuncOptions().p(p).eps(1e-6)).sum().backward();
    EXPECT_EQ(w.grad()[2][0].item<float>(), 1e6f) << p;
    EXPECT_EQ(w.grad()[2][1].item<float>(), 1e6f) << p;
    EXPECT_TRUE(bool(isfinite(w.grad()).all().item<bool>())) << p;
  }
}

TEST(NnOps, BinaryCrossEntropyGradientsArePyTorchsAtZeroAndOne) {
  std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/bce_golden.json");
  const json j = json::parse(in);
  const std::vector<double> x = j["input"].get<std::vector<double>>();
  const std::vector<double> t = j["target"].get<std::vector<double>>();
  ASSERT_EQ(x[0], 0.0);
  ASSERT_EQ(x[1], 1.0);
  int checked = 0;
  for (const json& c : j["cases"]) {
    const Dtype dt = c["dtype"] == "float32" ? kFloat32 : kFloat64;
    const std::string red = c["reduction"];
    const Reduction r = red == "mean" ? Reduction::Mean
        : red == "sum"                ? Reduction::Sum
                                      : Reduction::None;
    SCOPED_TRACE(
        red + " " + std::string(c["dtype"]) +
        (c["weighted"].get<bool>() ? " weighted" : ""));
    Tensor xi = tensor(x).view({3, 4}).to(dt).requires_grad_();
    Tensor ti = tensor(t).view({3, 4}).to(dt).requires_grad_();
    F::BinaryCrossEntropyFuncOptions o(r);
    if (c["weighted"].get<bool>()) {
      o.weight(tensor(j["weight"].get<std::vector<double>>()).to(dt));
    }
    Tensor loss = F::binary_cross_entropy(xi, ti, o);
    expect_bce_values(loss, c["loss"], "loss");
    Tensor g = tensor(c["grad_output"].get<std::vector<double>>())
                   .to(dt)
                   .view(loss.sizes());
    loss.backward(g);
    expect_bce_values(xi.grad(), c["grad_input"], "grad_input");
    expect_bce_values(ti.grad(), c["grad_target"], "grad_target");
    // At x = 0 with target 1 the gradient is finite and large.
    const double g0 = xi.grad().flatten()[0].to(kFloat64).item<double>();
    EXPECT_TRUE(std::isfinite(g0));
    EXPECT_LT(g0, -1e9);
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(NnOps, MaxPoolIsPyTorchsIncludingTiesAndNaN) {
  Tensor x = f64(extra()["pool_input"], {2, 3, 7, 9});
  for (const auto& c : extra()["pool"]) {
    const json& a = c["args"];
    auto list = [&](const char* k, IntList d) {
      if (!a.contains(k)) {
        return d;
      }
      return a[k].is_array() ? a[k].get<IntList>()
                             : IntList{a[k].get<int64_t>()};
    };
    auto [out, idx] = F::max_pool2d_with_indices(
        x,
        list("kernel_size", {}),
        list("stride", {}),
        list("padding", {0}),
        list("dilation", {1}),
        a.value("ceil_mode", false));
    SCOPED_TRACE(a.dump());
    EXPECT_EQ(out.sizes(), c["shape"].get<Shape>());
    expect_close(out, c["values"], 0);
    EXPECT_EQ(
        idx.contiguous().flatten().to(kInt64).data_ptr<int64_t>()[0],
        c["indices"][0].get<int64_t>());
    auto want_idx = c["indices"].get<std::vector<int64_t>>();
    Tensor flat = idx.contiguous().flatten();
    for (size_t i = 0; i < want_idx.size(); ++i) {
      ASSERT_EQ(flat.data_ptr<int64_t>()[i], want_idx[i]) << i;
    }
  }
}

TEST(NnOps, GradientsPassGradcheck) {
  manual_seed(3);
  Tensor x = randn({4, 5}, kFloat64).requires_grad_();
  Tensor t = tensor(std::vector<int64_t>{1, -100, 4, 0});
  Tensor w = rand({5}, kFloat64).add(0.5);
  Tensor y = rand({4, 5}, kFloat64);
  auto check = [](const char* name, auto fn, std::vector<Tensor> in) {
    auto r = autograd::gradcheck(fn, in);
    EXPECT_TRUE(r.ok) << name << ": " << r.report;
  };
  check(
      "log_softmax",
      [](auto& v) { return log_softmax(v[0], 1).mul(v[0]).sum(); },
      {x});
  check(
      "softmax", [](auto& v) { return softmax(v[0], 0).mul(v[0]).sum(); }, {x});
  check(
      "cross_entropy",
      [&](auto& v) {
        return F::cross_entropy(
            v[0], t, F::CrossEntropyOptions().weight(w).label_smoothing(0.2));
      },
      {x});
  check(
      "cross_entropy_prob",
      [&](auto& v) { return F::cross_entropy(v[0], y); },
      {x});
  check("mse", [&](auto& v) { return F::mse_loss(v[0], y); }, {x});
  check(
      "smooth_l1",
      [&](auto& v) { return F::smooth_l1_loss(v[0], y, Reduction::Sum, 0.7); },
      {x});
  check(
      "bce_logits",
      [&](auto& v) {
        return F::binary_cross_entropy_with_logits(
            v[0], y, F::BCEWithLogitsOptions().pos_weight(w));
      },
      {x});
  check(
      "kl_div",
      [&](auto& v) { return F::kl_div(F::log_softmax(v[0], 1), y); },
      {x});
  check(
      "leaky_relu",
      [](auto& v) { return F::leaky_relu(v[0], 0.1).sum(); },
      {x});
  check("silu", [](auto& v) { return F::silu(v[0]).sum(); }, {x});
  Tensor img = randn({2, 3, 6, 7}, kFloat64).requires_grad_();
  check(
      "max_pool2d",
      [](auto& v) {
        return max_pool2d(v[0], {3, 2}, {2, 1}, {1, 1}, {1, 1}, true)
            .pow(2.0)
            .sum();
      },
      {img});
  Tensor a = randn({3, 4}, kFloat64).requires_grad_();
  Tensor b = randn({3, 4}, kFloat64).requires_grad_();
  Tensor c = rand({4}, kFloat64).add(1.0).requires_grad_();
  check(
      "add_alpha",
      [](auto& v) { return add(v[0], v[1], 0.3).pow(2.0).sum(); },
      {a, b});
  check(
      "addcmul",
      [](auto& v) { return addcmul(v[0], v[1], v[2], -0.7).pow(2.0).sum(); },
      {a, b, c});
  check(
      "addcdiv",
      [](auto& v) { return addcdiv(v[0], v[1], v[2], 0.4).pow(2.0).sum(); },
      {a, b, c});
}

TEST(NnOps, LayerGradientsPassGradcheck) {
  manual_seed(4);
  auto check = [](const char* name, auto fn, std::vector<Tensor> in) {
    auto r = autograd::gradcheck(fn, in);
    EXPECT_TRUE(r.ok) << name << ": " << r.report;
  };
  Tensor x = randn({3, 4, 5, 6}, kFloat64).requires_grad_();
  Tensor w = rand({4}, kFloat64).add(0.5).requires_grad_();
  Tensor b = randn({4}, kFloat64).requires_grad_();
  check(
      "batch_norm",
      [](auto& v) {
        return F::batch_norm(v[0], {}, {}, v[1], v[2], true, 0.1, 1e-5)
            .pow(2.0)
            .sum();
      },
      {x, w, b});
  Tensor rm = zeros({4}, kFloat64), rv = ones({4}, kFloat64);
  check(
      "batch_norm_eval",
      [&](auto& v) {
        return F::batch_norm(v[0], rm, rv, v[1], v[2], false, 0.1, 1e-5)
            .pow(2.0)
            .sum();
      },
      {x, w, b});
  Tensor lw = randn({6}, kFloat64).requires_grad_();
  check(
      "layer_norm",
      [](auto& v) { return F::layer_norm(v[0], {6}, v[1]).pow(3.0).sum(); },
      {x, lw});
  check(
      "group_norm",
      [&](auto& v) {
        return F::group_norm(v[0], 2, v[1], v[2]).pow(3.0).sum();
      },
      {x, w, b});
  check(
      "avg_pool2d",
      [](auto& v) {
        return F::avg_pool2d(v[0], {3}, {2}, {1}, true, false).pow(2.0).sum();
      },
      {x});
  check(
      "adaptive_avg_pool2d",
      [](auto& v) {
        return F::adaptive_avg_pool2d(v[0], {4, 4}).pow(2.0).sum();
      },
      {x});
  check(
      "upsample_bilinear",
      [](auto& v) {
        return F::upsample2d(v[0], 7, 9, F::InterpolateMode::Bilinear, true)
            .pow(2.0)
            .sum();
      },
      {x});
  check(
      "pad_replicate",
      [](auto& v) {
        return ::ditto::pad(v[0], {2, 3, 1, 1}, "replicate").pow(2.0).sum();
      },
      {x});
  Tensor grid = rand({3, 3, 4, 2}, kFloat64).mul(1.8).sub(0.9).requires_grad_();
  check(
      "grid_sample",
      [](auto& v) {
        return F::grid_sample(
                   v[0],
                   v[1],
                   F::GridSampleOptions().padding_mode(
                       F::GridSamplePadding::Border))
            .pow(2.0)
            .sum();
      },
      {x, grid});
  Tensor ctw = randn({4, 3, 3, 3}, kFloat64).requires_grad_();
  Tensor ctb = randn({3}, kFloat64).requires_grad_();
  check(
      "conv_transpose2d",
      [](auto& v) {
        return conv_transpose2d(v[0], v[1], v[2], {2}, {1}, {1}).pow(2.0).sum();
      },
      {x, ctw, ctb});
  Tensor table = randn({7, 3}, kFloat64).requires_grad_();
  Tensor idx = tensor(std::vector<int64_t>{1, 5, 5, 0, 2});
  check(
      "embedding",
      // (the padding row gets no gradient by design: PyTorch semantics, so
      // gradcheck runs with an unused padding index)
      [&](auto& v) { return F::embedding(idx, v[0], 6).pow(2.0).sum(); },
      {table});
}

TEST(NnOps, FusedArithmeticRoundsAsPyTorch) {
  // add(alpha) is one fused multiply-add; addcmul rounds value*t1 first;
  // addcdiv rounds every step (pytorch-training.md section 5).
  const float a = 1.0f, b = 1e-8f, c = 3.0f;
  const double s = 1.0 / 3;
  Tensor ta = full({1}, a), tb = full({1}, b), tc = full({1}, c);
  EXPECT_EQ(add(ta, tb, s).item<float>(), std::fma(float(s), b, a));
  EXPECT_EQ(
      addcmul(ta, tb, tc, s).item<float>(),
      std::fma(float(float(s) * b), c, a));
  EXPECT_EQ(
      addcdiv(ta, tb, tc, s).item<float>(), a + float(float(float(s) * b) / c));
  Tensor t = full({5}, 2.0f);
  t.add_(full({5}, 1.0f), -0.5).addcmul_(full({5}, 2.0f), full({5}, 3.0f), 0.5);
  EXPECT_EQ(t[4].item<float>(), 4.5f);
  EXPECT_THROW(addcmul(ta, tb, tc, std::nan("")), ValueError);
  EXPECT_THROW(add(ones({2}), ones({3}), 2.0), ValueError);
  Tensor ints = tensor(std::vector<int64_t>{1, 2});
  EXPECT_EQ(add(ints, ints, 3)[1].item<int64_t>(), 8);
  EXPECT_THROW(add(ints, ints, 0.5), TypeError);
}

TEST(NnOps, BadInputGetsClearErrorsAndChangesNothing) {
  Tensor x = randn({4, 5});
  EXPECT_THROW(
      F::cross_entropy(x, tensor(std::vector<int64_t>{0, 1, 5, 2})),
      IndexError);
  try {
    F::cross_entropy(x, tensor(std::vector<int64_t>{0, 1, 7, 2}));
  } catch (const IndexError& e) {
    EXPECT_NE(
        std::string(e.what()).find("Target 7 is out of bounds"),
        std::string::npos);
  }
  EXPECT_THROW(
      F::cross_entropy(x, tensor(std::vector<int64_t>{0, 1})), ValueError);
  EXPECT_THROW(F::cross_entropy(x, x.to(kInt32)), TypeError);
  EXPECT_THROW(max_pool2d(randn({2, 3}), {2}), ValueError);
  EXPECT_THROW(max_pool2d(randn({1, 1, 4, 4}), {2}, {}, {2}), ValueError);
  EXPECT_THROW(max_pool2d(randn({1, 1, 2, 2}), {3}), ValueError);
  EXPECT_THROW(max_pool2d(randn({1, 1, 4, 4}), {INT64_MAX}), ValueError);
  nn::Conv2d conv(3, 4, 3);
  try {
    conv->forward(randn({1, 2, 8, 8}));
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("to have 3 channels, but got 2"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(conv->forward(randn({8, 8})), ValueError);
  nn::Linear lin(5, 2);
  EXPECT_THROW(lin->forward(randn({3, 4})), ValueError);
}

// The scatter-backward ops (Note [Plane scatters], and those through
// index_add_): the deterministic variant gives the serial loop's bits (one
// thread) for 1, 2, 3 and 8 threads and every capability; the fast variant
// (8 threads, so one plane is split between threads) is within rounding of
// it. Shapes of one plane and of many planes.
struct ScatterCase {
  std::string name;
  Shape in;
  std::function<Tensor(const Tensor&)> fn;
};

std::vector<ScatterCase> scatter_cases() {
  std::vector<ScatterCase> cases;
  manual_seed(5);
  static const Tensor grid1 = rand({1, 40, 40, 2}) * 2.2 - 1.1;
  static const Tensor grid3 = rand({3, 12, 12, 2}) * 2.2 - 1.1;
  static const Tensor idx = randint(0, 50, {4000});
  for (const Shape& in : {Shape{1, 1, 67, 61}, Shape{3, 5, 19, 17}}) {
    const bool one = in[0] == 1;
    cases.push_back({"max_pool2d", in, [](const Tensor& x) {
                       return max_pool2d(x, {3}, {1}, {1});
                     }});
    cases.push_back({"avg_pool2d", in, [](const Tensor& x) {
                       return F::avg_pool2d(x, {3}, {1}, {1});
                     }});
    cases.push_back({"adaptive_avg_pool2d", in, [](const Tensor& x) {
                       return F::adaptive_avg_pool2d(x, {13, 11});
                     }});
    cases.push_back(
        {"upsample_nearest2d", in, [](const Tensor& x) {
           return F::interpolate(x, F::InterpolateOptions().size({101, 97}));
         }});
    cases.push_back({"upsample_bilinear2d", in, [](const Tensor& x) {
                       return F::interpolate(
                           x,
                           F::InterpolateOptions().size({101, 97}).mode(
                               F::InterpolateMode::Bilinear));
                     }});
    cases.push_back({"grid_sampler_2d (bilinear)", in, [one](const Tensor& x) {
                       return F::grid_sample(
                           x, (one ? grid1 : grid3).to(x.dtype()));
                     }});
    cases.push_back(
        {"grid_sampler_2d (nearest)", in, [one](const Tensor& x) {
           return F::grid_sample(
               x,
               (one ? grid1 : grid3).to(x.dtype()),
               F::GridSampleOptions().mode(F::GridSampleMode::Nearest));
         }});
    cases.push_back({"reflection_pad2d", in, [](const Tensor& x) {
                       return F::pad(x, {5, 4, 3, 6}, "reflect");
                     }});
    cases.push_back({"replication_pad2d", in, [](const Tensor& x) {
                       return F::pad(x, {5, 4, 3, 6}, "replicate");
                     }});
  }
  cases.push_back({"embedding", {50, 16}, [](const Tensor& w) {
                     return F::embedding(idx, w);
                   }});
  return cases;
}

Tensor scatter_grad(const ScatterCase& c, Dtype dt) {
  manual_seed(9);
  Tensor x = randn(c.in, dt).requires_grad_();
  Tensor y = c.fn(x);
  y.backward(randn(y.sizes(), dt));
  return x.grad();
}

// grid_sample computes only the gradients asked for (PyTorch's
// output_mask); each equals the one computed with the other.
TEST(NnOps, GridSampleGradientOfOneInputOnly) {
  manual_seed(4);
  Tensor x = randn({2, 3, 9, 8}, kFloat64);
  Tensor grid = rand({2, 5, 6, 2}, kFloat64).mul(2.2).sub(1.1);
  Tensor g = randn({2, 3, 5, 6}, kFloat64);
  auto grads = [&](bool gx, bool gg) {
    Tensor xi = x.detach().requires_grad_(gx);
    Tensor gi = grid.detach().requires_grad_(gg);
    F::grid_sample(
        xi,
        gi,
        F::GridSampleOptions().padding_mode(F::GridSamplePadding::Reflection))
        .backward(g);
    return std::pair<Tensor, Tensor>{xi.grad(), gi.grad()};
  };
  auto both = grads(true, true);
  auto only_x = grads(true, false);
  auto only_grid = grads(false, true);
  EXPECT_FALSE(only_x.second.defined());
  EXPECT_FALSE(only_grid.first.defined());
  EXPECT_EQ(fingerprint(only_x.first), fingerprint(both.first));
  EXPECT_EQ(fingerprint(only_grid.second), fingerprint(both.second));
}

TEST(NnOps, ScatterBackwardsHaveADeterministicAndAFastVariant) {
  for (const ScatterCase& c : scatter_cases()) {
    for (Dtype dt : {kFloat32, kFloat64}) {
      SCOPED_TRACE(
          c.name + " " + shape_str(c.in) + " " + std::string(dtype_name(dt)));
      Tensor serial;
      {
        DeterministicGuard det(true);
        set_num_threads(1);
        serial = scatter_grad(c, dt);
        for (CpuCapability cap : test::testable_capabilities()) {
          set_cpu_capability(cap);
          for (int threads : test::test_thread_counts()) {
            set_num_threads(threads);
            EXPECT_EQ(fingerprint(scatter_grad(c, dt)), fingerprint(serial))
                << threads << " threads, " << cpu_capability_name(cap);
          }
        }
        set_cpu_capability(supported_cpu_capabilities().back());
      }
      DeterministicGuard fast(false);
      set_num_threads(8);
      Tensor g = scatter_grad(c, dt);
      const double tol = dt == kFloat32 ? 1e-5 : 1e-12;
      EXPECT_TRUE(allclose(g, serial, tol, tol))
          << "max diff " << (g - serial).abs().max().item<double>();
    }
  }
  set_num_threads(2);
}

// R1 and R2 for training: the CNN with dropout and SGD+momentum gives the
// same weights after 50 steps on two runs and for 1, 2 and 3 threads.
std::string train_fingerprint(int threads) {
  set_num_threads(threads);
  DeterministicGuard det(true);
  manual_seed(7);
  nn::Sequential model{
      nn::Conv2d(1, 8, 3, 1, 1),
      nn::ReLU(),
      nn::MaxPool2d(2),
      nn::Flatten(),
      nn::Dropout(0.25),
      nn::Linear(8 * 14 * 14, 10)};
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  for (int step = 0; step < 50; ++step) {
    Tensor x = randn({16, 1, 28, 28});
    Tensor y = randint(0, 10, {16});
    Tensor loss = F::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  std::string fp;
  for (auto& [name, p] : model->named_parameters()) {
    fp += name + "=" + std::to_string(fingerprint(p)) + " ";
  }
  return fp;
}

TEST(NnOps, TrainingIsReproducibleAcrossRunsAndThreadCounts) {
  const std::string first = train_fingerprint(1);
  EXPECT_EQ(train_fingerprint(1), first);
  EXPECT_EQ(train_fingerprint(2), first);
  EXPECT_EQ(train_fingerprint(3), first);
  set_num_threads(2);
}

} // namespace
} // namespace ditto
