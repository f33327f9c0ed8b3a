// Recurrent layers, PackedSequence and ctc_loss against PyTorch 1.13
// (tests/nn/gen_rnn_golden.py wrote tests/nn/rnn_golden.json), gradcheck,
// bitwise reproducibility across threads and CPU capabilities, and bad
// input.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

namespace ditto {
namespace {

namespace nn = ditto::nn;
namespace rnnu = ditto::nn::utils::rnn;
using nlohmann::json;

const json& golden() {
  static const json j = [] {
    std::ifstream in(std::string(DITTO_TEST_DATA_DIR) + "/nn/rnn_golden.json");
    return json::parse(in);
  }();
  return j;
}

uint32_t crc32(const void* data, size_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) {
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      }
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  }
  return c ^ 0xFFFFFFFFu;
}

uint32_t crc_of(const Tensor& t) {
  Tensor c = t.detach().to(kFloat32).contiguous();
  return crc32(c.raw_data(), size_t(c.numel()) * c.element_size());
}

uint32_t crc_of_bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  return crc32(c.raw_data(), size_t(c.numel()) * c.element_size());
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
  std::unique_ptr<nn::RNN> rnn;
  std::unique_ptr<nn::LSTM> lstm;
  std::unique_ptr<nn::GRU> gru;
  std::unique_ptr<nn::RNNCell> rnn_cell;
  std::unique_ptr<nn::LSTMCell> lstm_cell;
  std::unique_ptr<nn::GRUCell> gru_cell;

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
      rnn = std::make_unique<nn::RNN>(
          base(nn::RNNOptions(in, hid)).nonlinearity(nl));
    } else if (k == "LSTM") {
      lstm = std::make_unique<nn::LSTM>(
          base(nn::LSTMOptions(in, hid))
              .proj_size(get("proj_size", int64_t(0))));
    } else if (k == "GRU") {
      gru = std::make_unique<nn::GRU>(base(nn::GRUOptions(in, hid)));
    } else if (k == "RNNCell") {
      rnn_cell = std::make_unique<nn::RNNCell>(cell);
    } else if (k == "LSTMCell") {
      lstm_cell = std::make_unique<nn::LSTMCell>(cell);
    } else {
      gru_cell = std::make_unique<nn::GRUCell>(cell);
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

TEST(RnnGolden, DefaultInitIsPyTorchsBits) {
  for (const json& c : golden().at("init")) {
    manual_seed(c.at("seed").get<uint64_t>());
    AnyRnn m(c.at("kind"), c.at("kw"));
    auto params = m.module().named_parameters();
    ASSERT_EQ(params.size(), c.at("params").size()) << c.at("kind");
    for (size_t i = 0; i < params.size(); ++i) {
      const json& p = c.at("params")[i];
      EXPECT_EQ(params[i].first, p.at("name").get<std::string>());
      EXPECT_EQ(params[i].second.sizes(), p.at("shape").get<Shape>());
      EXPECT_EQ(crc_of(params[i].second), p.at("crc").get<uint32_t>())
          << c.at("kind") << " " << params[i].first;
    }
    Tensor s = default_generator().get_state();
    EXPECT_EQ(crc_of_bytes(s), c.at("rng_crc").get<uint32_t>()) << c.at("kind");
  }
}

// Loads the fixture's parameters, runs forward and backward of
// sum(out * w), and returns the worst relative errors (outputs, grads).
std::pair<double, double> compare_forward(const json& c) {
  const Dtype dt = dtype_of_name(c.at("dtype"));
  const double fl = dt == kFloat64 ? 1e-3 : 1.0;
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
    EXPECT_LT(e, dt == kFloat64 ? 1e-10 : 1e-5) << params[i].first;
    grad_err = std::max(grad_err, e);
  }
  return {out_err, grad_err};
}

TEST(RnnGolden, OutputsAndGradientsMatchPyTorch) {
  double worst[2][2] = {{0, 0}, {0, 0}};
  for (const json& c : golden().at("forward")) {
    const bool f64 = c.at("dtype") == "float64";
    const double tol = f64 ? 1e-10 : 1e-5;
    auto [oe, ge] = compare_forward(c);
    EXPECT_LT(oe, tol) << c.at("kind") << " " << c.at("kw").dump() << " "
                       << c.at("dtype");
    EXPECT_LT(ge, tol) << c.at("kind") << " " << c.at("kw").dump() << " "
                       << c.at("dtype");
    worst[f64][0] = std::max(worst[f64][0], oe);
    worst[f64][1] = std::max(worst[f64][1], ge);
  }
  std::cout << "[ rel err  ] float32 outputs " << worst[0][0] << " grads "
            << worst[0][1] << "; float64 outputs " << worst[1][0] << " grads "
            << worst[1][1] << "\n";
}

// Inter-layer dropout draws as PyTorch's: the same masks (so the same
// output to rounding) and the same generator state afterwards.
TEST(RnnGolden, InterLayerDropoutDrawsAsPyTorch) {
  for (const json& c : golden().at("dropout")) {
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
    auto [o, st] = m.forward(x);
    Shape os = x.sizes();
    os[2] = 8;
    EXPECT_LT(rel_err(o, tensor(nums(c.at("out")), os)), 1e-5);
    EXPECT_LT(
        rel_err(std::get<0>(st), tensor(nums(c.at("h")), {6, bf ? 5 : 2, 4})),
        1e-5);
    Tensor s = default_generator().get_state();
    EXPECT_EQ(crc_of_bytes(s), c.at("rng_crc").get<uint32_t>());
  }
}

TEST(CtcGolden, LossAndGradientMatchPyTorch) {
  double worst_loss = 0, worst_grad = 0;
  for (const json& c : golden().at("ctc")) {
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

} // namespace
} // namespace ditto
