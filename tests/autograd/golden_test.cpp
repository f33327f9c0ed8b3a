// Gradients against PyTorch 1.13 for small float64 graphs (an MLP, a conv
// net, an index/scatter chain): tests/autograd/gen_autograd_golden.py wrote
// the inputs and PyTorch's gradients.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"

namespace ditto {
namespace {

struct Case {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::vector<double>> grads;
  double loss = 0;
};

Case load(const std::string& name) {
  std::ifstream in(
      std::string(DITTO_TEST_DATA_DIR) + "/autograd/autograd_golden.json");
  nlohmann::json j = nlohmann::json::parse(in);
  for (const auto& c : j["cases"]) {
    if (c["name"] != name) {
      continue;
    }
    Case out;
    out.loss = c["loss"].get<double>();
    for (const auto& [k, v] : c["tensors"].items()) {
      Shape shape = v["shape"].get<Shape>();
      if (v["dtype"] == "torch.float64") {
        out.tensors[k] =
            tensor(v["values"].get<std::vector<double>>()).view(shape);
      } else {
        out.tensors[k] =
            tensor(v["values"].get<std::vector<int64_t>>()).view(shape);
      }
    }
    for (const auto& [k, v] : c["grads"].items()) {
      out.grads[k] = v.get<std::vector<double>>();
      out.tensors[k].requires_grad_();
    }
    return out;
  }
  ADD_FAILURE() << "no case " << name;
  return {};
}

void expect_grads(const Case& c, const Tensor& loss) {
  EXPECT_NEAR(loss.item<double>(), c.loss, 1e-9 * std::fabs(c.loss) + 1e-12);
  for (const auto& [k, want] : c.grads) {
    Tensor g = c.tensors.at(k).grad();
    ASSERT_TRUE(g.defined()) << k;
    Tensor gc = g.contiguous();
    ASSERT_EQ(size_t(gc.numel()), want.size()) << k;
    const double* p = gc.data_ptr<double>();
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(p[i], want[i], 1e-6 * std::fabs(want[i]) + 1e-12)
          << k << "[" << i << "]";
    }
  }
}

TEST(AutogradGolden, Mlp) {
  Case c = load("mlp");
  auto& t = c.tensors;
  Tensor h = relu(linear(t["x"], t["w1"], t["b1"]));
  Tensor out = linear(h, t["w2"], t["b2"]);
  Tensor loss = (out.tanh() - t["target"]).pow(2).mean();
  loss.backward();
  expect_grads(c, loss);
}

TEST(AutogradGolden, ConvNet) {
  Case c = load("convnet");
  auto& t = c.tensors;
  Tensor y = conv2d(t["x"], t["cw"], t["cb"], {1, 1}, {1, 1}).relu();
  y = conv2d(y, t["cw2"], {}, {2, 2}, {0, 0});
  Tensor z = y.flatten(1).matmul(t["fw"].t()).sigmoid();
  Tensor loss = (z * z).mean() + z.max();
  loss.backward();
  expect_grads(c, loss);
}

TEST(AutogradGolden, IndexChain) {
  Case c = load("index_chain");
  auto& t = c.tensors;
  Tensor e = index_select(t["table"], 0, t["idx"]);
  Tensor g = gather(e, 1, t["gidx"]);
  Tensor s = zeros({5, 2}, kFloat64).scatter_add(0, t["sidx"], g);
  s = s.masked_fill(t["mask"].to(kBool), 0.5);
  Tensor u = (t["table"] * 1.0).index_add(0, t["aidx"], t["src"], 0.5);
  Tensor loss = (s * t["weights"]).sum() +
      take(t["table"], t["tidx"]).pow(2).sum() + u.exp().sum({1}).log().mean();
  loss.backward();
  expect_grads(c, loss);
}

// Every reduction of scatter_reduce with and without self (ties share the
// gradient, zeros in prod), advanced-index reads and index_put's values.
TEST(AutogradGolden, ScatterReduceAndIndex) {
  Case c = load("scatter_reduce_index");
  auto& t = c.tensors;
  DeterministicGuard det(true); // index_put_ with duplicates: last wins
  Tensor loss = zeros({}, kFloat64);
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      Tensor r =
          (t["base"] * 1.0)
              .scatter_reduce(0, t["ridx"], t["src2"], reduce, include_self);
      loss = loss + (r * t["weights2"]).sum();
    }
  }
  Tensor picked = t["cube"].index(
      {tensor<int64_t>({0, 2, 2}), Tensor(), tensor<int64_t>({1})});
  loss = loss + (picked * t["w3"]).sum();
  Tensor put = (t["cube"] * 1.0)
                   .index_put(
                       {tensor<int64_t>({0, 2, 0})},
                       t["vals"].unsqueeze(-1).expand({3, 3, 2}));
  loss = loss + put.pow(2).sum();
  loss.backward();
  expect_grads(c, loss);
}

TEST(AutogradGolden, EmbeddingBag) {
  Case c = load("embedding_bag");
  auto& t = c.tensors;
  Tensor loss =
      (embedding_bag(t["einput"], t["emb"], t["eoffsets"], "sum", t["psw"]) *
       t["ew"])
          .sum();
  loss = loss +
      (embedding_bag(
           t["einput"], t["emb"], t["eoffsets"], "mean", {}, false, 4) *
       t["ew"])
          .sum();
  loss = loss +
      (embedding_bag(t["einput"], t["emb"], t["eoffsets"], "max") * t["ew"])
          .sum();
  loss = loss + (embedding_bag(t["e2"], t["emb"], {}, "max") * t["ew2"]).sum();
  loss.backward();
  expect_grads(c, loss);
}

} // namespace
} // namespace ditto
