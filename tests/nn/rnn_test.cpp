// Recurrent layers, PackedSequence and ctc_loss against PyTorch 1.13
// (tests/nn/gen_rnn_golden.py wrote tests/nn/rnn_golden.json), gradcheck,
// bitwise reproducibility across threads and CPU capabilities, and bad
// input.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"
#include "tests/error_of.h"
#include "tests/nn/crc.h"

namespace ditto {
namespace {

namespace nn = ditto::nn;
namespace rnnu = ditto::nn::utils::rnn;
using nlohmann::json;
using nn::functional::Reduction;
using nn::functional::reduction_name;

const json& rnn_golden() {
  static const json j = [] {
    std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/rnn_golden.json");
    return json::parse(in);
  }();
  return j;
}

// The fixture records float32 bytes (crc_f32 converts), the generator's
// state as it is (test::rng_crc).
uint32_t crc_f32(const Tensor& t) {
  return test::crc_of(t.detach().to(kFloat32));
}

double num(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "inf") {
      return std::numeric_limits<double>::infinity();
    }
    if (s == "-inf") {
      return -std::numeric_limits<double>::infinity();
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  return v.get<double>();
}

std::vector<double> nums(const json& a) {
  std::vector<double> v;
  for (const json& x : a) {
    v.push_back(num(x));
  }
  return v;
}

Tensor from_json(const json& values, const json& shape, Dtype dt) {
  return tensor(nums(values), shape.get<Shape>()).to(dt);
}

// max |a - b| / max(|b|, floor * max|b|): relative to the value, with a
// floor for entries far below the tensor's scale. floor 1: relative to
// the tensor's largest value (float32, where entries near zero carry the
// rounding of their larger neighbours).
double rel_err(const Tensor& a, const Tensor& b, double floor = 1e-3) {
  Tensor x = a.detach().to(kFloat64).contiguous();
  Tensor y = b.detach().to(kFloat64).contiguous();
  EXPECT_EQ(x.sizes(), y.sizes());
  const double* p = x.data_ptr<double>();
  const double* q = y.data_ptr<double>();
  double scale = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    scale = std::max(scale, std::abs(q[i]));
  }
  double worst = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    if ((std::isinf(q[i]) && p[i] == q[i]) ||
        (std::isnan(q[i]) && std::isnan(p[i]))) {
      continue;
    }
    const double d = std::abs(p[i] - q[i]) /
        std::max({std::abs(q[i]), floor * scale, 1e-300});
    worst = std::max(worst, std::isnan(d) ? 1e300 : d);
  }
  return worst;
}

// Any of the six layers, built from the fixture's PyTorch kwargs.
struct AnyRnn {
  std::string kind;
  bool batch_first = false;
  std::unique_ptr<nn::RNNImpl> rnn;
  std::unique_ptr<nn::LSTMImpl> lstm;
  std::unique_ptr<nn::GRUImpl> gru;
  std::unique_ptr<nn::RNNCellImpl> rnn_cell;
  std::unique_ptr<nn::LSTMCellImpl> lstm_cell;
  std::unique_ptr<nn::GRUCellImpl> gru_cell;

  AnyRnn(const std::string& k, const json& kw) : kind(k) {
    const int64_t in = kw.at("input_size"), hid = kw.at("hidden_size");
    auto get = [&](const char* key, auto dflt) {
      return kw.contains(key) ? kw.at(key).get<decltype(dflt)>() : dflt;
    };
    batch_first = get("batch_first", false);
    const auto nl = get("nonlinearity", std::string("tanh")) == "relu"
        ? nn::RNNNonlinearity::ReLU
        : nn::RNNNonlinearity::Tanh;
    auto base = [&](auto o) {
      o.num_layers(get("num_layers", int64_t(1)))
          .bias(get("bias", true))
          .batch_first(batch_first)
          .dropout(get("dropout", 0.0))
          .bidirectional(get("bidirectional", false));
      return o;
    };
    const auto cell =
        nn::RNNCellOptions(in, hid).bias(get("bias", true)).nonlinearity(nl);
    if (k == "RNN") {
      rnn = std::make_unique<nn::RNNImpl>(
          base(nn::RNNOptions(in, hid)).nonlinearity(nl));
    } else if (k == "LSTM") {
      lstm = std::make_unique<nn::LSTMImpl>(
          base(nn::LSTMOptions(in, hid))
              .proj_size(get("proj_size", int64_t(0))));
    } else if (k == "GRU") {
      gru = std::make_unique<nn::GRUImpl>(base(nn::GRUOptions(in, hid)));
    } else if (k == "RNNCell") {
      rnn_cell = std::make_unique<nn::RNNCellImpl>(cell);
    } else if (k == "LSTMCell") {
      lstm_cell = std::make_unique<nn::LSTMCellImpl>(cell);
    } else {
      gru_cell = std::make_unique<nn::GRUCellImpl>(cell);
    }
  }

  nn::Module& module() {
    if (rnn)
      return *rnn;
    if (lstm)
      return *lstm;
    if (gru)
      return *gru;
    if (rnn_cell)
      return *rnn_cell;
    if (lstm_cell)
      return *lstm_cell;
    return *gru_cell;
  }

  // Outputs as PyTorch's test lists them: (output, h_n[, c_n]) for layers
  // (the output padded again for packed input), (h'[, c']) for cells.
  std::vector<Tensor> run(
      const Tensor& x,
      const std::vector<Tensor>& states,
      const std::vector<int64_t>& lengths) {
    const Tensor s0 = states.empty() ? Tensor() : states[0];
    std::optional<std::tuple<Tensor, Tensor>> hx;
    if (states.size() == 2) {
      hx = std::tuple<Tensor, Tensor>(states[0], states[1]);
    }
    if (rnn_cell)
      return {rnn_cell->forward(x, s0)};
    if (gru_cell)
      return {gru_cell->forward(x, s0)};
    if (lstm_cell) {
      auto [h, c] = lstm_cell->forward(x, hx);
      return {h, c};
    }
    if (lengths.empty()) {
      if (lstm) {
        auto [o, st] = lstm->forward(x, hx);
        return {o, std::get<0>(st), std::get<1>(st)};
      }
      auto [o, h] = rnn ? rnn->forward(x, s0) : gru->forward(x, s0);
      return {o, h};
    }
    auto packed = rnnu::pack_padded_sequence(x, lengths, batch_first, false);
    std::vector<Tensor> outs;
    if (lstm) {
      auto [o, st] = lstm->forward(packed, hx);
      outs = {
          std::get<0>(rnnu::pad_packed_sequence(o, batch_first)),
          std::get<0>(st),
          std::get<1>(st)};
    } else {
      auto [o, h] = rnn ? rnn->forward(packed, s0) : gru->forward(packed, s0);
      outs = {std::get<0>(rnnu::pad_packed_sequence(o, batch_first)), h};
    }
    return outs;
  }
};

Dtype dtype_of_name(const std::string& s) {
  return s == "float64" ? kFloat64 : kFloat32;
}

std::vector<int64_t> lengths_of(const json& c) {
  return c.at("lengths").is_null()
      ? std::vector<int64_t>{}
      : c.at("lengths").get<std::vector<int64_t>>();
}

// Targets 1 + (i mod (classes - 1)): never the blank 0.
Tensor remainder_targets(int64_t n, int64_t classes) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) {
    v.push_back(1 + (i * 7) % (classes - 1));
  }
  return tensor(v);
}

// A float32 tensor of the given sizes filled without drawing.
Tensor randn_no_draw(const Shape& s) {
  return zeros(s);
}

TEST(RnnGolden, DefaultInitIsPyTorchsBits) {
  for (const json& c : rnn_golden().at("init")) {
    manual_seed(c.at("seed").get<uint64_t>());
    AnyRnn m(c.at("kind"), c.at("kw"));
    auto params = m.module().named_parameters();
    ASSERT_EQ(params.size(), c.at("params").size()) << c.at("kind");
    for (size_t i = 0; i < params.size(); ++i) {
      const json& p = c.at("params")[i];
      EXPECT_EQ(params[i].first, p.at("name").get<std::string>());
      EXPECT_EQ(params[i].second.sizes(), p.at("shape").get<Shape>());
      EXPECT_EQ(crc_f32(params[i].second), p.at("crc").get<uint32_t>())
          << c.at("kind") << " " << params[i].first;
    }
    EXPECT_EQ(test::rng_crc(), c.at("rng_crc").get<uint32_t>()) << c.at("kind");
  }
}

// Loads the fixture's parameters, runs forward and backward of
// sum(out * w), and returns the worst relative errors (outputs, grads).
// floor: rel_err's (default: per element in float64, relative to each
// tensor's largest value in float32); with check, each parameter's
// gradient is also asserted.
std::pair<double, double> compare_forward(
    const json& c,
    double floor = 0,
    bool check = true) {
  const Dtype dt = dtype_of_name(c.at("dtype"));
  const double fl = floor > 0 ? floor : dt == kFloat64 ? 1e-3 : 1.0;
  AnyRnn m(c.at("kind"), c.at("kw"));
  m.module().to(dt);
  auto params = m.module().named_parameters();
  EXPECT_EQ(params.size(), c.at("params").size());
  {
    autograd::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      const json& p = c.at("params")[i];
      EXPECT_EQ(params[i].first, p.at("name").get<std::string>());
      params[i].second.copy_(from_json(p.at("values"), p.at("shape"), dt));
    }
  }
  Tensor x = from_json(c.at("x").at("values"), c.at("x").at("shape"), dt);
  x.requires_grad_(true);
  std::vector<Tensor> states;
  for (const json& s : c.at("states")) {
    states.push_back(from_json(s.at("values"), s.at("shape"), dt));
    states.back().requires_grad_(true);
  }
  std::vector<Tensor> outs = m.run(x, states, lengths_of(c));
  EXPECT_EQ(outs.size(), c.at("outs").size());
  double out_err = 0, grad_err = 0;
  Tensor loss;
  for (size_t i = 0; i < outs.size(); ++i) {
    const json& o = c.at("outs")[i];
    out_err = std::max(
        out_err,
        rel_err(outs[i], from_json(o.at("values"), o.at("shape"), dt), fl));
    const json& w = c.at("weights")[i];
    Tensor term =
        sum(mul(outs[i], from_json(w.at("values"), w.at("shape"), dt)));
    loss = loss.defined() ? add(loss, term) : term;
  }
  loss.backward();
  grad_err = rel_err(
      x.grad(), from_json(c.at("x").at("grad"), c.at("x").at("shape"), dt), fl);
  for (size_t i = 0; i < states.size(); ++i) {
    const json& s = c.at("states")[i];
    grad_err = std::max(
        grad_err,
        rel_err(
            states[i].grad(), from_json(s.at("grad"), s.at("shape"), dt), fl));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const json& p = c.at("params")[i];
    const double e = rel_err(
        params[i].second.grad(),
        from_json(p.at("grad"), p.at("shape"), dt),
        fl);
    if (check) {
      EXPECT_LT(e, dt == kFloat64 ? 1e-10 : 1e-5) << params[i].first;
    }
    grad_err = std::max(grad_err, e);
  }
  return {out_err, grad_err};
}

TEST(RnnGolden, OutputsAndGradientsMatchPyTorch) {
  double worst[2][2] = {{0, 0}, {0, 0}};
  double f32_elementwise[2] = {0, 0};
  for (const json& c : rnn_golden().at("forward")) {
    const bool f64 = c.at("dtype") == "float64";
    const double tol = f64 ? 1e-10 : 1e-5;
    auto [oe, ge] = compare_forward(c);
    EXPECT_LT(oe, tol) << c.at("kind") << " " << c.at("kw").dump() << " "
                       << c.at("dtype");
    EXPECT_LT(ge, tol) << c.at("kind") << " " << c.at("kw").dump() << " "
                       << c.at("dtype");
    worst[f64][0] = std::max(worst[f64][0], oe);
    worst[f64][1] = std::max(worst[f64][1], ge);
    if (!f64) {
      // Per element (floor 1e-3 of the largest value), reported only:
      // entries near zero carry their larger neighbours' rounding.
      auto [oe2, ge2] = compare_forward(c, 1e-3, false);
      f32_elementwise[0] = std::max(f32_elementwise[0], oe2);
      f32_elementwise[1] = std::max(f32_elementwise[1], ge2);
    }
  }
  std::cout << "[ rel err  ] float32 outputs " << worst[0][0] << " grads "
            << worst[0][1] << "; float64 outputs " << worst[1][0] << " grads "
            << worst[1][1] << "; float32 per element " << f32_elementwise[0]
            << " / " << f32_elementwise[1] << "\n";
}

// Inter-layer dropout draws as PyTorch's: the same masks (so the same
// output to rounding) and the same generator state afterwards.
TEST(RnnGolden, InterLayerDropoutDrawsAsPyTorch) {
  for (const json& c : rnn_golden().at("dropout")) {
    const bool bf = c.at("batch_first");
    manual_seed(11);
    nn::LSTM m(nn::LSTMOptions(3, 4)
                   .num_layers(3)
                   .dropout(0.4)
                   .bidirectional(true)
                   .batch_first(bf));
    Tensor x =
        tensor(nums(c.at("x")), c.at("x_shape").get<Shape>()).to(kFloat32);
    manual_seed(7);
    auto [o, st] = m->forward(x);
    Shape os = x.sizes();
    os[2] = 8;
    EXPECT_LT(rel_err(o, tensor(nums(c.at("out")), os)), 1e-5);
    EXPECT_LT(
        rel_err(std::get<0>(st), tensor(nums(c.at("h")), {6, bf ? 5 : 2, 4})),
        1e-5);
    EXPECT_EQ(test::rng_crc(), c.at("rng_crc").get<uint32_t>());
  }
}

// With .generator(g) the inter-layer masks come from g: the default
// generator is untouched, and g replays the same masks.
TEST(RnnDropout, GivenGeneratorDrawsTheMasks) {
  manual_seed(3);
  Generator g;
  g.manual_seed(9);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).dropout(0.5).generator(g));
  Tensor x = randn({6, 2, 3});
  const Tensor before = default_generator().get_state();
  auto [o1, h1] = gru->forward(x);
  EXPECT_TRUE(equal(default_generator().get_state(), before));
  g.manual_seed(9);
  auto [o2, h2] = gru->forward(x);
  EXPECT_TRUE(equal(o1, o2));
  auto [o3, h3] = gru->forward(x); // new masks
  EXPECT_FALSE(equal(o1, o3));
  gru->eval();
  const Tensor gs = g.get_state();
  gru->forward(x);
  EXPECT_TRUE(equal(g.get_state(), gs)) << "eval() draws nothing";
}

// A frozen W_hh: the other weights still get their gradients.
TEST(RnnGrad, FrozenRecurrentWeight) {
  manual_seed(5);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  lstm->named_parameters()[1].second.requires_grad_(false); // weight_hh_l0
  Tensor x = randn({5, 2, 3});
  auto [o, st] = lstm->forward(x);
  sum(o).backward();
  for (auto& [name, p] : lstm->named_parameters()) {
    EXPECT_EQ(p.grad().defined(), name != "weight_hh_l0") << name;
  }
}

TEST(CtcGolden, LossAndGradientMatchPyTorch) {
  double worst_loss = 0, worst_grad = 0;
  for (const json& c : rnn_golden().at("ctc")) {
    const int64_t T = c.at("T"), N = c.at("N"), C = c.at("C");
    Tensor lp0 = tensor(nums(c.at("log_probs")), {T, N, C});
    const auto il = c.at("input_lengths").get<std::vector<int64_t>>();
    const auto tl = c.at("target_lengths").get<std::vector<int64_t>>();
    const std::string red = c.at("reduction");
    const Reduction r = red == "none" ? Reduction::None
        : red == "sum"                ? Reduction::Sum
                                      : Reduction::Mean;
    Tensor padded = tensor(
        c.at("padded").get<std::vector<int64_t>>(),
        {N, c.at("S").get<int64_t>()});
    Tensor flat = tensor(c.at("flat").get<std::vector<int64_t>>());
    for (const Tensor& targets : {padded, flat}) {
      Tensor lp = lp0.clone().requires_grad_(true);
      Tensor loss = nn::functional::ctc_loss(
          lp, targets, il, tl, c.at("blank"), r, c.at("zero_infinity"));
      Tensor want = tensor(nums(c.at("loss")), loss.sizes());
      const double le = rel_err(loss, want);
      EXPECT_LT(le, 1e-12) << red << " " << c.at("zero_infinity");
      Tensor w = tensor(nums(c.at("w")), loss.sizes());
      sum(mul(loss, w)).backward();
      Tensor gwant = tensor(nums(c.at("grad")), {T, N, C});
      // NaN where PyTorch has NaN (an inf loss without zero_infinity).
      Tensor g = lp.grad();
      const double ge = rel_err(g, gwant);
      EXPECT_LT(ge, 1e-6) << red << " " << c.at("zero_infinity");
      worst_loss = std::max(worst_loss, le);
      worst_grad = std::max(worst_grad, ge);
    }
  }
  std::cout << "[ rel err  ] ctc float64 loss " << worst_loss << " grad "
            << worst_grad << "\n";
}

// ---- gradcheck (float64, small sizes)

// Central differences of the scalar loss(module) for every parameter
// element against the gradient backward leaves in .grad.
void check_param_grads(
    nn::Module& m,
    const std::function<Tensor()>& loss_fn,
    const std::string& what) {
  m.zero_grad();
  loss_fn().backward();
  for (auto& [name, p] : m.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << what << " " << name;
    Tensor g = p.grad().contiguous();
    double* pp = p.data_ptr<double>();
    const double* gp = g.data_ptr<double>();
    for (int64_t j = 0; j < p.numel(); ++j) {
      const double saved = pp[j];
      double lo, hi;
      {
        autograd::NoGradGuard ng;
        pp[j] = saved + 1e-6;
        hi = loss_fn().item<double>();
        pp[j] = saved - 1e-6;
        lo = loss_fn().item<double>();
        pp[j] = saved;
      }
      const double num = (hi - lo) / 2e-6;
      EXPECT_NEAR(gp[j], num, 1e-5 + 1e-3 * std::abs(num))
          << what << " " << name << "[" << j << "]";
    }
  }
}

struct GradcheckCase {
  const char* kind;
  json kw;
  std::vector<int64_t> lengths; // empty: padded
  bool with_state;
};

TEST(RnnGradcheck, EveryLayerPaddedPackedBidirectionalProj) {
  const std::vector<GradcheckCase> cases = {
      {"LSTM",
       {{"input_size", 2},
        {"hidden_size", 3},
        {"num_layers", 2},
        {"bidirectional", true},
        {"proj_size", 2}},
       {3, 1, 2},
       true},
      {"LSTM",
       {{"input_size", 2}, {"hidden_size", 3}, {"batch_first", true}},
       {},
       true},
      {"GRU",
       {{"input_size", 2}, {"hidden_size", 3}, {"bidirectional", true}},
       {2, 3},
       true},
      {"GRU",
       {{"input_size", 2}, {"hidden_size", 2}, {"num_layers", 2}},
       {},
       false},
      {"RNN",
       {{"input_size", 2}, {"hidden_size", 3}, {"bidirectional", true}},
       {1, 3},
       true},
      {"RNN",
       {{"input_size", 2}, {"hidden_size", 3}, {"nonlinearity", "relu"}},
       {},
       true},
      {"RNNCell", {{"input_size", 2}, {"hidden_size", 3}}, {}, true},
      {"LSTMCell", {{"input_size", 2}, {"hidden_size", 3}}, {}, true},
      {"GRUCell", {{"input_size", 2}, {"hidden_size", 3}}, {}, true},
  };
  for (const GradcheckCase& c : cases) {
    manual_seed(3);
    AnyRnn m(c.kind, c.kw);
    m.module().to(kFloat64);
    const std::string kind = c.kind;
    const bool cell = kind.find("Cell") != std::string::npos;
    const int64_t B = 2 + (c.lengths.size() > 2), T = 3;
    const int64_t in = c.kw.at("input_size"), H = c.kw.at("hidden_size");
    const int64_t P = c.kw.value("proj_size", int64_t(0));
    const int64_t LD = c.kw.value("num_layers", int64_t(1)) *
        (c.kw.value("bidirectional", false) ? 2 : 1);
    Tensor x = cell     ? randn({B, in}, kFloat64)
        : m.batch_first ? randn({B, T, in}, kFloat64)
                        : randn({T, B, in}, kFloat64);
    std::vector<Tensor> inputs{x.requires_grad_(true)};
    if (c.with_state) {
      inputs.push_back(
          (cell ? randn({B, H}, kFloat64) : randn({LD, B, P ? P : H}, kFloat64))
              .requires_grad_(true));
      if (kind == "LSTM" || kind == "LSTMCell") {
        inputs.push_back(
            (cell ? randn({B, H}, kFloat64) : randn({LD, B, H}, kFloat64))
                .requires_grad_(true));
      }
    }
    // All outputs in one vector, so gradcheck covers h_n and c_n too.
    auto fn = [&](const std::vector<Tensor>& in) {
      std::vector<Tensor> states(in.begin() + 1, in.end());
      std::vector<Tensor> outs = m.run(in[0], states, c.lengths);
      std::vector<Tensor> flat;
      for (const Tensor& o : outs) {
        flat.push_back(o.reshape({-1}));
      }
      return cat(flat, 0);
    };
    auto r = autograd::gradcheck(fn, inputs);
    EXPECT_TRUE(r.ok) << kind << " " << c.kw.dump() << ": " << r.report;
    Tensor w = randn({fn(inputs).numel()}, kFloat64);
    check_param_grads(
        m.module(),
        [&] { return sum(mul(fn(inputs), w)); },
        kind + " " + c.kw.dump());
  }
}

TEST(CtcGradcheck, PaddedAndConcatenatedTargets) {
  // Through log_softmax, as PyTorch's own gradcheck of ctc_loss: the
  // gradient formula assumes log_probs are log-softmax outputs (its
  // exp(log_probs) term is the softmax's share).
  manual_seed(4);
  Tensor logits = randn({7, 3, 5}, kFloat64).requires_grad_(true);
  Tensor padded = tensor<int64_t>({1, 2, 2, 3, 0, 0, 4, 1, 0}, {3, 3});
  Tensor flat = tensor<int64_t>({1, 2, 2, 3, 4, 1});
  for (const Tensor& t : {padded, flat}) {
    for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean}) {
      auto res = autograd::gradcheck(
          [&](const std::vector<Tensor>& in) {
            return nn::functional::ctc_loss(
                log_softmax(in[0], 2),
                t,
                std::vector<int64_t>{7, 6, 4},
                {3, 1, 2},
                0,
                r);
          },
          {logits});
      EXPECT_TRUE(res.ok) << reduction_name(r) << ": " << res.report;
    }
  }
}

// ---- reproducibility: the same bits for 1/2/3/8 threads, every CPU
// capability, and two runs.

uint64_t lstm_training_fingerprint() {
  manual_seed(21);
  nn::LSTM lstm(nn::LSTMOptions(6, 40)
                    .num_layers(2)
                    .dropout(0.3)
                    .bidirectional(true)
                    .batch_first(true));
  nn::GRU gru(nn::GRUOptions(6, 24).num_layers(2));
  Tensor x = randn({37, 9, 6});
  std::vector<int64_t> lengths{9, 4, 7, 9, 1, 3, 8, 2, 5, 6, 9, 9, 2,
                               4, 7, 1, 3, 5, 8, 9, 9, 9, 2, 6, 3, 7,
                               5, 4, 8, 1, 9, 2, 3, 4, 5, 6, 7};
  auto packed = rnnu::pack_padded_sequence(x, lengths, true, false);
  auto [po, st] = lstm->forward(packed);
  auto [go, gh] = gru->forward(x.transpose(0, 1).contiguous());
  Tensor loss =
      add(add(sum(mul(po.data(), po.data())), sum(std::get<1>(st))),
          sum(mul(go, go)));
  // CTC on the GRU's output as log-probabilities over 24 classes.
  Tensor lp = log_softmax(go, 2);
  std::vector<int64_t> il(37, 9), tl(37, 3);
  Tensor targets = remainder_targets(37 * 3, 24);
  loss = add(loss, nn::functional::ctc_loss(lp, targets, il, tl));
  loss.backward();
  std::vector<Tensor> all{loss.detach().reshape({1})};
  for (const Tensor& p : lstm->parameters()) {
    all.push_back(p.grad().reshape({-1}));
  }
  for (const Tensor& p : gru->parameters()) {
    all.push_back(p.grad().reshape({-1}));
  }
  return fingerprint(cat(all, 0));
}

TEST(RnnReproducibility, SameBitsForAnyThreadCountCapabilityAndRun) {
  set_num_threads(1);
  const uint64_t ref = lstm_training_fingerprint();
  EXPECT_EQ(lstm_training_fingerprint(), ref) << "second run";
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    for (int threads : test::test_thread_counts()) {
      set_num_threads(threads);
      EXPECT_EQ(lstm_training_fingerprint(), ref)
          << threads << " threads, " << cpu_capability_name(cap);
    }
  }
  set_cpu_capability(supported_cpu_capabilities().back());
  set_num_threads(2);
}

// ---- PackedSequence semantics (reference/pytorch-training-checks/
// check_rnn.py)

TEST(PackedSequence, PyTorchsSortedIndicesBatchSizesAndData) {
  Tensor seqs = arange(1.0, 13.0).reshape({3, 4, 1});
  try {
    rnnu::pack_padded_sequence(seqs, std::vector<int64_t>{2, 4, 3}, true);
    ADD_FAILURE() << "unsorted lengths accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "`lengths` array must be sorted in decreasing order when "
            "`enforce_sorted` is True."),
        std::string::npos)
        << e.what();
  }
  auto pk = rnnu::pack_padded_sequence(
      seqs, std::vector<int64_t>{2, 4, 3}, true, false);
  auto ints = [](const Tensor& t) {
    Tensor c = t.to(kInt64).contiguous();
    const int64_t* p = c.data_ptr<int64_t>();
    return std::vector<int64_t>(p, p + c.numel());
  };
  EXPECT_EQ(ints(pk.sorted_indices()), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(ints(pk.unsorted_indices()), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(ints(pk.batch_sizes()), (std::vector<int64_t>{3, 3, 2, 1}));
  EXPECT_EQ(pk.batch_sizes().dtype(), kInt64);
  EXPECT_EQ(
      ints(pk.data().reshape({-1})),
      (std::vector<int64_t>{5, 9, 1, 6, 10, 2, 7, 11, 8}));
  auto [pad, lens] = rnnu::pad_packed_sequence(pk, true, -1.0, 5);
  EXPECT_EQ(pad.sizes(), (Shape{3, 5, 1}));
  EXPECT_EQ(
      ints(pad.select(0, 0).reshape({-1})),
      (std::vector<int64_t>{1, 2, -1, -1, -1}));
  EXPECT_EQ(ints(lens), (std::vector<int64_t>{2, 4, 3}));
  auto pk2 = rnnu::pack_padded_sequence(
      index_select(seqs, 0, tensor<int64_t>({1, 2, 0})),
      std::vector<int64_t>{4, 3, 2},
      true);
  EXPECT_FALSE(pk2.sorted_indices().defined());
  EXPECT_FALSE(pk2.unsorted_indices().defined());
  auto ties = rnnu::pack_padded_sequence(
      zeros({4, 3, 1}), std::vector<int64_t>{2, 3, 2, 3}, true, false);
  EXPECT_EQ(ints(ties.sorted_indices()), (std::vector<int64_t>{1, 3, 0, 2}));
  auto ps = rnnu::pack_sequence(
      {seqs.select(0, 0).narrow(0, 0, 2),
       seqs.select(0, 1),
       seqs.select(0, 2).narrow(0, 0, 3)},
      false);
  EXPECT_TRUE(equal(ps.data(), pk.data()));
  Tensor padded_seq = rnnu::pad_sequence(
      {seqs.select(0, 0).narrow(0, 0, 2), seqs.select(0, 1)}, true, 7.0);
  EXPECT_EQ(padded_seq.sizes(), (Shape{2, 4, 1}));
  EXPECT_EQ(
      ints(padded_seq.select(0, 0).reshape({-1})),
      (std::vector<int64_t>{1, 2, 7, 7}));

  // h_n of a packed batch: each sequence's state at its own last step, in
  // the original order.
  manual_seed(0);
  nn::LSTM l1(1, 2);
  l1->to(kFloat64);
  Tensor s64 = seqs.to(kFloat64);
  std::vector<int64_t> lengths{2, 4, 3};
  auto [po, st] =
      l1->forward(rnnu::pack_padded_sequence(s64, lengths, true, false));
  for (int64_t b = 0; b < 3; ++b) {
    auto [o, st1] = l1->forward(
        s64.narrow(0, b, 1).narrow(1, 0, lengths[b]).transpose(0, 1));
    EXPECT_LT(
        (std::get<0>(st).select(1, b) - std::get<0>(st1).select(1, 0))
            .abs()
            .max()
            .item<double>(),
        1e-12);
    EXPECT_LT(
        (std::get<1>(st).select(1, b) - std::get<1>(st1).select(1, 0))
            .abs()
            .max()
            .item<double>(),
        1e-12);
  }
}

// ---- bad input: errors that name the layer and the value, and change
// nothing (parameters, generator).

using test::error_of;

TEST(RnnBadInput, ClearErrorsAndNothingChanged) {
  manual_seed(1);
  nn::LSTM lstm(nn::LSTMOptions(4, 3).num_layers(2).dropout(0.5));
  uint64_t before = fingerprint(cat(
      {lstm->parameters()[0].reshape({-1}),
       lstm->parameters()[5].reshape({-1})}));
  Tensor gen_before = default_generator().get_state();
  std::string msg = error_of([&] { lstm->forward(randn_no_draw({5, 2, 5})); });
  EXPECT_NE(msg.find("[LSTM]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Expected 4, got 5"), std::string::npos) << msg;
  msg = error_of([&] {
    lstm->forward(
        zeros({5, 2, 4}),
        std::tuple<Tensor, Tensor>(zeros({1, 2, 3}), zeros({2, 2, 3})));
  });
  EXPECT_NE(msg.find("[LSTM]"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("Expected hidden[0] size {2, 2, 3}, got {1, 2, 3}"),
      std::string::npos)
      << msg;
  // Only the LSTM's forwards above ran since gen_before.
  EXPECT_TRUE(equal(default_generator().get_state(), gen_before))
      << "a rejected forward drew dropout masks";
  msg = error_of([&] { nn::GRU(3, 2)->forward(zeros({5, 2, 4})); });
  EXPECT_NE(
      msg.find("[GRU] input.size(-1) must be equal to input_size. "
               "Expected 3, got 4"),
      std::string::npos)
      << msg;
  msg = error_of([&] {
    rnnu::pack_padded_sequence(
        zeros({4, 3, 2}), std::vector<int64_t>{4, 5, 2}, false, false);
  });
  EXPECT_NE(
      msg.find("[pack_padded_sequence] length 5 of sample 1 is longer "
               "than the sequence (4 steps)"),
      std::string::npos)
      << msg;
  msg = error_of([&] {
    rnnu::pack_padded_sequence(
        zeros({4, 3, 2}), std::vector<int64_t>{2, 4, 1}, false, true);
  });
  EXPECT_NE(msg.find("(lengths[0] = 2 < lengths[1] = 4)"), std::string::npos)
      << msg;
  msg = error_of([&] { nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)); });
  EXPECT_NE(
      msg.find("proj_size has to be smaller than hidden_size"),
      std::string::npos)
      << msg;
  msg = error_of([&] { nn::LSTMCell(3, 2)->forward(zeros({2, 4})); });
  EXPECT_NE(
      msg.find("[LSTMCell] input has inconsistent input_size: got 4 "
               "expected 3"),
      std::string::npos)
      << msg;
  EXPECT_EQ(
      fingerprint(cat(
          {lstm->parameters()[0].reshape({-1}),
           lstm->parameters()[5].reshape({-1})})),
      before);
}

TEST(RnnRepr, PyTorchsPrintedFormAndDropoutWarning) {
  std::vector<std::string> warnings;
  determinism::set_warning_handler(
      [&](std::string_view, std::string_view m) { warnings.emplace_back(m); });
  nn::LSTM a(
      nn::LSTMOptions(4, 6).num_layers(2).bidirectional(true).dropout(0.1));
  EXPECT_EQ(
      a->repr(), "LSTM(4, 6, num_layers=2, dropout=0.1, bidirectional=True)");
  EXPECT_TRUE(warnings.empty());
  nn::GRU g(nn::GRUOptions(3, 5).dropout(0.5).batch_first(true));
  determinism::set_warning_handler({});
  EXPECT_EQ(g->repr(), "GRU(3, 5, batch_first=True, dropout=0.5)");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(
      warnings[0],
      "dropout option adds dropout after all but last recurrent layer, so "
      "non-zero dropout expects num_layers greater than 1, but got "
      "dropout=0.5 and num_layers=1");
  // PyTorch 1.13 does not print an RNN's nonlinearity (a cell's it does).
  EXPECT_EQ(
      nn::RNN(nn::RNNOptions(2, 3).nonlinearity(nn::RNNNonlinearity::ReLU))
          ->repr(),
      "RNN(2, 3)");
  EXPECT_EQ(
      nn::LSTM(nn::LSTMOptions(5, 7).proj_size(3))->repr(),
      "LSTM(5, 7, proj_size=3)");
  EXPECT_EQ(
      nn::GRUCell(nn::GRUCellOptions(4, 3).bias(false))->repr(),
      "GRUCell(4, 3, bias=False)");
}

TEST(CtcBadInput, PyTorchsErrorTexts) {
  Tensor lp = zeros({6, 4, 5}, kFloat64);
  Tensor targets =
      tensor<int64_t>({1, 2, 2, 0, 3, 0, 0, 0, 1, 1, 1, 1, 4, 4, 0, 0}, {4, 4});
  std::vector<int64_t> il{6, 5, 4, 3}, tl{3, 1, 4, 0};
  auto f = [&](std::vector<int64_t> i, std::vector<int64_t> t, int64_t blank) {
    return error_of(
        [&] { nn::functional::ctc_loss(lp, targets, i, t, blank); });
  };
  EXPECT_EQ(
      f({7, 5, 4, 3}, tl, 0),
      "[ctc_loss] Expected input_lengths to have value at most 6, but got "
      "value 7 (while checking arguments for ctc_loss_cpu)");
  EXPECT_EQ(
      f(il, {5, 1, 4, 0}, 0),
      "[ctc_loss] Expected tensor to have size at least 5 at dimension 1, "
      "but got size 4 for argument #2 'targets' (while checking arguments "
      "for ctc_loss_cpu)");
  EXPECT_EQ(
      f({6, 5, 4}, tl, 0),
      "[ctc_loss] input_lengths must be of size batch_size");
  EXPECT_EQ(f(il, tl, 5), "[ctc_loss] blank must be in label range");
  // A target longer than its input cannot be aligned: an error naming it
  // (PyTorch returns inf), and zero with zero_infinity, as PyTorch.
  EXPECT_EQ(
      f({2, 5, 4, 3}, tl, 0),
      "[ctc_loss] target 0 has 3 labels but its input only 2 frames: no "
      "alignment exists (the loss would be inf; pass zero_infinity=true to "
      "count such samples as zero)");
  Tensor loss = nn::functional::ctc_loss(
      lp,
      targets,
      std::vector<int64_t>{2, 5, 4, 3},
      tl,
      0,
      Reduction::None,
      /*zero_infinity=*/true);
  EXPECT_EQ(loss.select(0, 0).item<double>(), 0.0);
}

} // namespace
} // namespace ditto
