// MultiheadAttention against PyTorch 1.13 (LibTorch's module) in float32:
// the initial parameters bit for bit (out_proj drawn as a Linear, then
// in_proj_weight xavier_uniform_, the biases zero), the output and the
// attention weights (averaged and per head) with masks, and the input
// projection's gradient, within float32 rounding of the products; a
// sample's bits alone or in its batch (R8); RMSNorm's module.
// tests/nn/gen_attention_golden.py wrote the fixture
// (tests/nn/attention_golden.json).

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/error_of.h"
#include "tests/nn/fixture.h"

namespace ditto {
namespace {

namespace nn = ditto::nn;
using nlohmann::json;

const json& attention_golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/nn/attention_golden.json");
    return json::parse(in);
  }();
  return j;
}

Tensor f32(const json& values, const Shape& sizes) {
  return test::f64(values, sizes).to(kFloat32);
}

bool same_bits(const Tensor& got, const json& want) {
  const Tensor g = got.detach().contiguous().flatten();
  if (g.numel() != int64_t(want.size())) {
    return false;
  }
  const float* p = g.data_ptr<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    const float w = float(want[i].get<double>());
    if (std::memcmp(&w, &p[i], sizeof w) != 0) {
      return false;
    }
  }
  return true;
}

nn::MultiheadAttention make(const json& c) {
  manual_seed(c["seed"].get<uint64_t>());
  return nn::MultiheadAttention(
      nn::MultiheadAttentionOptions(c["embed_dim"], c["num_heads"])
          .bias(c["bias"].get<bool>()));
}

TEST(AttentionGolden, InitialParametersArePyTorchsBits) {
  for (const json& c : attention_golden()["cases"]) {
    nn::MultiheadAttention m = make(c);
    const auto params = m->named_parameters();
    ASSERT_EQ(params.size(), c["params"].size());
    for (const auto& [name, want] : c["params"].items()) {
      const Tensor* p = params.find(name);
      ASSERT_NE(p, nullptr) << name;
      EXPECT_TRUE(same_bits(*p, want)) << name;
    }
  }
}

TEST(AttentionGolden, OutputWeightsAndGradientArePyTorchs) {
  for (const json& c : attention_golden()["cases"]) {
    nn::MultiheadAttention m = make(c);
    const int64_t e = c["embed_dim"], l = c["L"], s = c["S"], n = c["N"];
    const Tensor q = f32(c["q"], {l, n, e});
    const Tensor k = f32(c["k"], {s, n, e});
    const Tensor v = f32(c["v"], {s, n, e});
    Tensor attn_mask, padding;
    if (c["masks"].get<bool>()) {
      attn_mask =
          gt(arange(0, s, 1, kInt64).reshape({1, s}),
             add(arange(0, l, 1, kInt64).reshape({l, 1}), 1));
      padding = zeros({n, s}, kBool);
      padding.select(0, 1).select(0, s - 1).fill_(true);
    }
    auto [out, weights] = m->forward(q, k, v, padding, true, attn_mask);
    test::expect_close(out, c["out"], 2e-6);
    test::expect_close(weights, c["weights"], 2e-6);
    auto [out2, per_head] =
        m->forward(q, k, v, padding, true, attn_mask, false);
    test::expect_close(per_head, c["weights_per_head"], 2e-6);
    EXPECT_EQ(fingerprint(out2), fingerprint(out));
    (out * f32(c["grad_out"], out.sizes())).sum().backward();
    test::expect_close(
        m->in_proj_weight.grad(), c["in_proj_weight_grad"], 2e-5);
  }
}

TEST(AttentionGolden, ASampleHasItsBitsAloneOrInTheBatch) {
  manual_seed(3);
  nn::MultiheadAttention m(
      nn::MultiheadAttentionOptions(8, 2).batch_first(true));
  const Tensor x = randn({5, 7, 8});
  const Tensor full = std::get<0>(m->forward(x, x, x));
  for (int64_t i : {0, 2, 4}) {
    const Tensor one = x.narrow(0, i, 1);
    const Tensor alone = std::get<0>(m->forward(one, one, one));
    EXPECT_EQ(fingerprint(alone), fingerprint(full.narrow(0, i, 1))) << i;
  }
  // Unbatched (L, E) equals a batch of one.
  const Tensor row = x.select(0, 1);
  EXPECT_EQ(
      fingerprint(std::get<0>(m->forward(row, row, row))),
      fingerprint(full.select(0, 1)));
}

TEST(AttentionGolden, BadArgumentsAreRefused) {
  EXPECT_THROW(nn::MultiheadAttention(6, 4), ValueError);
  EXPECT_THROW(
      nn::MultiheadAttention(nn::MultiheadAttentionOptions(6, 2).kdim(3)),
      ValueError);
  nn::MultiheadAttention m(6, 2);
  const Tensor x = randn({3, 2, 6});
  EXPECT_THROW(m->forward(x, x, x, {}, true, zeros({2, 2}, kBool)), ValueError);
  EXPECT_THROW(m->forward(x, randn({3, 2, 5}), x), ValueError);
  // Masks are bool or floating, as torch's.
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        m->forward(x, x, x, {}, true, ones({x.size(0), x.size(0)}, kInt64));
      }).find("only bool and floating types of attn_mask"),
      std::string::npos);
  EXPECT_NE(
      test::error_of<ValueError>([&] {
        m->forward(x, x, x, ones({x.size(1), x.size(0)}, kInt64));
      }).find("key_padding_mask"),
      std::string::npos);
}

TEST(AttentionGolden, TransformerEncoderLayerIsPyTorchs) {
  for (const json& c : attention_golden()["encoder_layers"]) {
    SCOPED_TRACE(c["activation"].get<std::string>());
    manual_seed(c["seed"].get<uint64_t>());
    const int64_t d = c["d_model"];
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(d, c["nhead"])
            .dim_feedforward(c["dim_feedforward"])
            .dropout(0.1)
            .activation(c["activation"] == "gelu" ? kGELU : kReLU)
            .norm_first(c["norm_first"].get<bool>()));
    const auto params = layer->named_parameters();
    ASSERT_EQ(params.size(), c["params"].size());
    for (const auto& [name, want] : c["params"].items()) {
      const Tensor* p = params.find(name);
      ASSERT_NE(p, nullptr) << name;
      EXPECT_TRUE(same_bits(*p, want)) << name;
    }
    layer->eval();
    const Tensor src = f32(c["src"], {5, 2, d});
    Tensor mask, padding;
    if (c["masks"].get<bool>()) {
      mask =
          gt(arange(0, 5, 1, kInt64).reshape({1, 5}),
             arange(0, 5, 1, kInt64).reshape({5, 1}));
      padding = zeros({2, 5}, kBool);
      padding.select(0, 0).select(0, 4).fill_(true);
    }
    NoGradGuard no_grad;
    test::expect_close(layer->forward(src, mask, padding), c["out"], 1e-5);
  }
  // A function as the activation.
  nn::TransformerEncoderLayer custom(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).activation(
          [](const Tensor& x) { return tanh(x); }));
  EXPECT_EQ(custom->forward(randn({3, 1, 4})).sizes(), (Shape{3, 1, 4}));
}

// LibTorch's TransformerEncoder / TransformerDecoder (copies of the layer
// given, with its weights) and Transformer (xavier over the matrices):
// initial parameters bit for bit, eval output within 1e-5.
TEST(AttentionGolden, TransformerStacksArePyTorchs) {
  for (const json& c : attention_golden()["stacks"]) {
    const std::string kind = c["kind"];
    SCOPED_TRACE(kind);
    manual_seed(c["seed"].get<uint64_t>());
    const int64_t d = c["d_model"], h = c["nhead"], n = c["layers"];
    const int64_t ff = c["dim_feedforward"];
    const bool nf = c["norm_first"];
    std::shared_ptr<nn::Module> m;
    std::function<Tensor(const Tensor&, const Tensor&)> run;
    const Tensor causal =
        nn::TransformerImpl::generate_square_subsequent_mask(4);
    Tensor padding = zeros({2, 5}, kBool);
    padding.select(0, 1).select(0, 4).fill_(true);
    if (kind == "encoder") {
      nn::TransformerEncoder e(
          nn::TransformerEncoderOptions(
              nn::TransformerEncoderLayer(
                  nn::TransformerEncoderLayerOptions(d, h)
                      .dim_feedforward(ff)
                      .norm_first(nf)),
              n)
              .norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({d})))));
      m = e.ptr();
      run = [e, padding](const Tensor& src, const Tensor&) {
        return e->forward(src, {}, padding);
      };
    } else if (kind == "decoder") {
      nn::TransformerDecoder dec(
          nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(d, h)
                                          .dim_feedforward(ff)
                                          .activation(kGELU)
                                          .norm_first(nf)),
          n);
      m = dec.ptr();
      run = [dec, causal, padding](const Tensor& src, const Tensor& tgt) {
        return dec->forward(tgt, src, causal, {}, {}, padding);
      };
    } else {
      nn::Transformer t(nn::TransformerOptions(d, h, n, n).dim_feedforward(ff));
      m = t.ptr();
      run = [t, causal, padding](const Tensor& src, const Tensor& tgt) {
        return t->forward(src, tgt, {}, causal, {}, padding, {}, padding);
      };
    }
    const auto params = m->named_parameters();
    ASSERT_EQ(params.size() + m->named_buffers().size(), c["params"].size());
    for (const auto& [name, want] : c["params"].items()) {
      const Tensor* p = params.find(name);
      ASSERT_NE(p, nullptr) << name;
      EXPECT_TRUE(same_bits(*p, want)) << name;
    }
    m->eval();
    NoGradGuard no_grad;
    const Tensor out = run(f32(c["src"], {5, 2, d}), f32(c["tgt"], {4, 2, d}));
    test::expect_close(out, c["out"], 1e-5);
  }
  // The copies are copies: changing one layer leaves the others.
  nn::TransformerEncoder e(nn::TransformerEncoderLayer(4, 2), 2);
  NoGradGuard no_grad;
  e->layers->at<nn::TransformerEncoderLayer>(0).linear1->weight.fill_(0.0);
  EXPECT_NE(
      e->layers->at<nn::TransformerEncoderLayer>(1)
          .linear1->weight.abs()
          .sum()
          .item<double>(),
      0.0);
  EXPECT_THROW(
      nn::TransformerEncoder(nn::TransformerEncoderLayer(4, 2), 0), ValueError);
  EXPECT_EQ(
      nn::TransformerImpl::generate_square_subsequent_mask(3)[0][1]
          .item<double>(),
      -std::numeric_limits<double>::infinity());
}

TEST(AttentionGolden, RmsNormModule) {
  nn::RMSNorm norm(nn::RMSNormOptions({4}).eps(1e-6));
  ASSERT_TRUE(norm->weight.defined());
  EXPECT_EQ(norm->weight.sum().item<float>(), 4.0f);
  const Tensor x = randn({3, 4});
  const Tensor want = mul(x, rsqrt(add(mean(mul(x, x), {1}, true), 1e-6)));
  EXPECT_EQ(fingerprint(norm->forward(x)), fingerprint(want));
  EXPECT_THROW(norm->forward(randn({3, 5})), ValueError);
}

} // namespace
} // namespace ditto
