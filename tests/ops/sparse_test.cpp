// Sparse COO tensors against PyTorch 1.13 (sparse_golden.json, made by
// gen_sparse_golden.py): the constructor's checks, coalesce, to_dense,
// to_sparse, dense + sparse, sparse.mm / addmm / bmm and their gradients,
// nn::Embedding(sparse) with SGD and SparseAdam, printing; and the
// contract: the deterministic products give the same bits at 1, 2 and 3
// threads, and bad input is refused with nothing changed.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "ditto/ops/sparse.h"
#include "test_util.h"

using namespace ditto;
using ditto::test::same_bits;
using nlohmann::json;

namespace {

const json& golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/ops/sparse_golden.json");
    return json::parse(in);
  }();
  return j;
}

double decode(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") {
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (s == "-0") {
      return -0.0;
    }
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

Tensor from_json(const json& j) {
  const std::string dt = j["dtype"];
  const Dtype dtype = dt == "float32" ? kFloat32
      : dt == "float64"               ? kFloat64
      : dt == "int64"                 ? kInt64
      : dt == "int32"                 ? kInt32
                                      : kBool;
  Shape shape = j["shape"].get<Shape>();
  Tensor t = zeros(shape, kFloat64);
  double* p = t.data_ptr<double>();
  int64_t k = 0;
  for (const json& v : j["values"]) {
    p[k++] = decode(v);
  }
  return t.to(dtype);
}

std::vector<const json*> cases_of(const std::string& op) {
  std::vector<const json*> out;
  for (const json& c : golden()["cases"]) {
    if (c["op"] == op) {
      out.push_back(&c);
    }
  }
  EXPECT_FALSE(out.empty()) << op;
  return out;
}

// Same values within a few ulps of the dtype.
void expect_close(
    const Tensor& got,
    const Tensor& want,
    const std::string& at) {
  ASSERT_EQ(got.sizes(), want.sizes()) << at;
  const double tol = got.dtype() == kFloat32 ? 2e-6 : 1e-14;
  const Tensor diff = sub(got.to(kFloat64), want.to(kFloat64)).abs();
  const Tensor scale = add(want.to(kFloat64).abs(), 1.0);
  EXPECT_LE(div(diff, scale).max().item<double>(), tol) << at;
}

Tensor sparse_of(const json& c, bool requires_grad = false) {
  Tensor v = from_json(c["values"]);
  if (requires_grad) {
    v.requires_grad_();
  }
  return sparse_coo_tensor(from_json(c["indices"]), v, c["size"].get<Shape>());
}

TEST(Sparse, CoalesceAndToDenseArePyTorchsBits) {
  for (const json* c : cases_of("coalesce")) {
    for (int threads : {1, 3}) {
      set_num_threads(threads);
      Tensor s = sparse_of(*c);
      EXPECT_FALSE(s.is_coalesced());
      Tensor k = s.coalesce();
      EXPECT_TRUE(k.is_coalesced());
      const std::string at = (*c)["name"];
      EXPECT_TRUE(same_bits(k.indices(), from_json((*c)["out_indices"]))) << at;
      EXPECT_TRUE(same_bits(k.values(), from_json((*c)["out_values"])))
          << at << k.values() << from_json((*c)["out_values"]);
      EXPECT_TRUE(same_bits(s.to_dense(), from_json((*c)["dense"]))) << at;
      // Summed in sorted order instead of stored order: within an ulp.
      expect_close(k.to_dense(), from_json((*c)["dense"]), at);
    }
  }
  set_num_threads(1);
}

TEST(Sparse, ToSparseKeepsNaNAndDropsBothZeros) {
  for (const json* c : cases_of("to_sparse")) {
    const Tensor d = from_json((*c)["dense"]);
    Tensor s = d.to_sparse((*c)["sparse_dim"].get<int64_t>());
    const std::string at = (*c)["name"];
    EXPECT_TRUE(s.is_coalesced());
    EXPECT_TRUE(same_bits(s.indices(), from_json((*c)["out_indices"]))) << at;
    EXPECT_TRUE(same_bits(s.values(), from_json((*c)["out_values"]))) << at;
    EXPECT_TRUE(same_bits(s.to_dense(), d.masked_fill(eq(d, 0.0), 0.0))) << at;
  }
}

TEST(Sparse, DensePlusSparseIsPyTorchsBits) {
  for (const json* c : cases_of("add")) {
    Tensor out = add(
        from_json((*c)["dense"]), sparse_of(*c), (*c)["alpha"].get<double>());
    EXPECT_TRUE(same_bits(out, from_json((*c)["out"]))) << (*c)["name"];
    // In place, as an optimizer step writes it.
    Tensor d = from_json((*c)["dense"]);
    d.add_(sparse_of(*c), (*c)["alpha"].get<double>());
    EXPECT_TRUE(same_bits(d, out));
  }
}

// The product, the values' and the dense operand's gradients of one case.
struct Product {
  Tensor out, grad_values, grad_dense, grad_input;
};

Product run_product(const json& c) {
  Tensor v = from_json(c["values"]);
  const bool sparse_grad = c.contains("grad_values");
  v.requires_grad_(sparse_grad);
  Tensor dense = from_json(c["dense"]).requires_grad_();
  Tensor s =
      sparse_coo_tensor(from_json(c["indices"]), v, c["size"].get<Shape>());
  Tensor input;
  Tensor out;
  if (c["op"] == "mm") {
    out = sparse::mm(c["coalesce"].get<bool>() ? s.coalesce() : s, dense);
  } else if (c["op"] == "addmm") {
    input = from_json(c["input"]).requires_grad_();
    out = sparse::addmm(
        input, s, dense, c["beta"].get<double>(), c["alpha"].get<double>());
  } else {
    out = bmm(s, dense);
  }
  out.backward(from_json(c["grad"]));
  return {
      out.detach(),
      sparse_grad ? v.grad() : Tensor(),
      dense.grad(),
      input.defined() ? input.grad() : Tensor()};
}

TEST(Sparse, ProductsAndGradientsMatchPyTorch) {
  DeterministicGuard det(true);
  for (const char* op : {"mm", "addmm", "bmm"}) {
    for (const json* c : cases_of(op)) {
      const std::string at = (*c)["name"];
      set_num_threads(1);
      const Product one = run_product(*c);
      // The products are PyTorch's bits (one fma per entry and element, in
      // stored order); the gradients, whose sums PyTorch runs through a
      // transposed sparse tensor or a dense product, are within an ulp or
      // two.
      EXPECT_TRUE(same_bits(one.out, from_json((*c)["out"]))) << at;
      expect_close(one.grad_dense, from_json((*c)["grad_dense"]), at + " gd");
      if (one.grad_values.defined()) {
        expect_close(
            one.grad_values, from_json((*c)["grad_values"]), at + " gv");
      }
      if (one.grad_input.defined()) {
        expect_close(one.grad_input, from_json((*c)["grad_input"]), at + " gi");
      }
      // The deterministic variant: the same bits at every thread count.
      for (int threads : {2, 3}) {
        set_num_threads(threads);
        const Product p = run_product(*c);
        EXPECT_TRUE(same_bits(p.out, one.out)) << at << threads;
        EXPECT_TRUE(same_bits(p.grad_dense, one.grad_dense)) << at << threads;
        if (one.grad_values.defined()) {
          EXPECT_TRUE(same_bits(p.grad_values, one.grad_values)) << at;
        }
      }
    }
  }
  set_num_threads(1);
}

// The deterministic product is the serial loop of Note [Sparse products]:
// for each entry in stored order, out[r] = fma(alpha * v, dense[c], out[r]).
TEST(Sparse, DeterministicProductIsTheSerialLoop) {
  DeterministicGuard det(true);
  const int64_t rows = 300, inner = 200, m = 33, nnz = 6000;
  Tensor idx = stack({randint(0, rows, {nnz}), randint(0, inner, {nnz})});
  Tensor v = randn({nnz});
  Tensor d = randn({inner, m});
  Tensor want = zeros({rows, m});
  const int64_t* ip = idx.data_ptr<int64_t>();
  float* w = want.data_ptr<float>();
  for (int64_t e = 0; e < nnz; ++e) {
    const float c = 1.0f * v.data_ptr<float>()[e];
    for (int64_t j = 0; j < m; ++j) {
      float& o = w[ip[e] * m + j];
      o = std::fma(c, d.data_ptr<float>()[ip[nnz + e] * m + j], o);
    }
  }
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor s = sparse_coo_tensor(idx, v, {rows, inner});
    EXPECT_TRUE(same_bits(mm(s, d), want)) << threads;
  }
  set_num_threads(1);
}

TEST(Sparse, EmbeddingTrainsAsPyTorchWithSgdAndSparseAdam) {
  for (const json* c : cases_of("embedding")) {
    nn::Embedding emb(nn::EmbeddingOptions(12, 4).sparse(true));
    {
      autograd::NoGradGuard no_grad;
      emb->weight.copy_(from_json((*c)["weight"]));
    }
    std::unique_ptr<optim::Optimizer> opt;
    if ((*c)["optimizer"] == "SGD") {
      opt = std::make_unique<optim::SGD>(emb->parameters(), 0.1);
    } else {
      opt = std::make_unique<optim::SparseAdam>(
          emb->parameters(), optim::SparseAdamOptions(0.01));
    }
    for (size_t step = 0; step < (*c)["batches"].size(); ++step) {
      opt->zero_grad();
      Tensor out = emb->forward(from_json((*c)["batches"][step]));
      mul(out, from_json((*c)["targets"][step])).sum().backward();
      ASSERT_TRUE(emb->weight.grad().is_sparse());
      opt->step();
      EXPECT_TRUE(same_bits(emb->weight, from_json((*c)["weights"][step])))
          << (*c)["name"] << " step " << step;
    }
    const Tensor want = sparse_coo_tensor(
        from_json((*c)["last_grad_indices"]),
        from_json((*c)["last_grad_values"]),
        {12, 4});
    EXPECT_TRUE(same_bits(emb->weight.grad().to_dense(), want.to_dense()));
  }
}

// maximize climbs: the same step as descending the negated loss.
TEST(Sparse, SparseAdamMaximizeIsTheNegatedLoss) {
  Tensor idx = tensor<int64_t>({1, 3, 1, 0});
  std::vector<Tensor> weights;
  for (bool maximize : {false, true}) {
    manual_seed(3);
    nn::Embedding emb(nn::EmbeddingOptions(5, 3).sparse(true));
    optim::SparseAdam opt(
        emb->parameters(), optim::SparseAdamOptions(0.1).maximize(maximize));
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      Tensor loss = emb->forward(idx).sum();
      (maximize ? loss : neg(loss)).backward();
      opt.step();
    }
    weights.push_back(emb->weight.detach());
  }
  EXPECT_TRUE(same_bits(weights[0], weights[1]));
}

TEST(Sparse, PrintsAsPyTorch) {
  for (const json& r : golden()["reprs"]) {
    Tensor s = sparse_coo_tensor(
        from_json(r["indices"]),
        from_json(r["values"]),
        r["size"].get<Shape>());
    EXPECT_EQ(s.to_string(), r["repr"].get<std::string>());
  }
}

TEST(Sparse, OpsWithoutASparseFormRefuseIt) {
  Tensor s = sparse_coo_tensor(
      tensor<int64_t>({0, 1}).reshape({1, 2}), tensor({1.0f, 2.0f}), {3});
  try {
    (void)exp(s);
    FAIL() << "exp took a sparse tensor";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[exp]"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("to_dense"), std::string::npos);
  }
  EXPECT_THROW((void)s.data_ptr<float>(), TypeError);
  EXPECT_THROW((void)s.strides(), TypeError);
  EXPECT_THROW((void)add(s, zeros({3})), TypeError);
  EXPECT_THROW(
      io::save_safetensors(
          ::testing::TempDir() + "/sparse.safetensors", StateDict({{"s", s}})),
      TypeError);
  // An uncoalesced tensor's indices() and values() say what to do.
  Tensor u = sparse_coo_tensor(
      tensor<int64_t>({1, 1}).reshape({1, 2}), tensor({1.0f, 2.0f}), {3});
  EXPECT_THROW((void)u.indices(), ValueError);
  EXPECT_TRUE(same_bits(u.coalesce().values(), tensor({3.0f})));
}

TEST(Sparse, ZeroAndSparseSumsKeepEveryEntry) {
  Tensor a = sparse_coo_tensor(
      tensor<int64_t>({0, 2}).reshape({1, 2}), tensor({1.0, 2.0}), {3});
  Tensor b = sparse_coo_tensor(
      tensor<int64_t>({2}).reshape({1, 1}), tensor({5.0}), {3});
  Tensor sum = add(a, b, 2);
  EXPECT_EQ(sum._nnz(), 3);
  EXPECT_TRUE(same_bits(sum.to_dense(), tensor({1.0, 0.0, 12.0})));
  a.add_(b);
  EXPECT_TRUE(same_bits(a.to_dense(), tensor({1.0, 0.0, 7.0})));
  a.zero_();
  EXPECT_EQ(a._nnz(), 0);
  EXPECT_TRUE(same_bits(a.to_dense(), zeros({3}, kFloat32)));
}

TEST(Sparse, AnEntryStoredTwiceGetsItsPositionsGradientEachTime) {
  // to_dense sums the duplicates, so each copy's gradient is the position's.
  Tensor v = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor s =
      sparse_coo_tensor(tensor<int64_t>({1, 1, 0}).reshape({1, 3}), v, {2});
  mul(s.to_dense(), tensor({10.0, 100.0})).sum().backward();
  EXPECT_TRUE(same_bits(v.grad(), tensor({100.0, 100.0, 10.0})));
}

} // namespace
