// QR, the small SVD and svd_lowrank: against their definitions and against
// PyTorch's torch.svd_lowrank (svd_golden.json, made by gen_svd_golden.py).

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "test_util.h"

using namespace ditto;

using ditto::test::same_bits;

namespace {

Tensor golden_matrix(int64_t m, int64_t n) {
  Tensor a = zeros({m, n}, kFloat64);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      a.data_ptr<double>()[i * n + j] = double((7 * i + 13 * j) % 17 - 8) / 4;
    }
  }
  return a;
}

double max_abs(const Tensor& t) {
  return max(abs(t)).item<double>();
}

} // namespace

TEST(Decomp, QrAndSvdReconstruct) {
  Generator g;
  g.manual_seed(1);
  for (auto [m, n] : {std::pair{7, 3}, {40, 40}, {100, 6}}) {
    Tensor a = randn({m, n}, kFloat64, g);
    auto [q, r] = linalg::qr(a);
    EXPECT_LT(max_abs(sub(mm(q, r), a)), 1e-12);
    EXPECT_LT(max_abs(sub(mm(q.t(), q), eye(n, kFloat64))), 1e-12);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < i; ++k) {
        EXPECT_EQ(r.data_ptr<double>()[i * n + k], 0.0); // upper triangular
      }
    }
    for (Tensor x : {a, a.t()}) {
      linalg::SVD s = linalg::svd(x);
      Tensor rec = mm(mul(s.U, s.S), s.V.t());
      EXPECT_LT(max_abs(sub(rec, x)), 1e-11) << m << "x" << n;
      for (int64_t k = 1; k < s.S.numel(); ++k) {
        EXPECT_GE(s.S.data_ptr<double>()[k - 1], s.S.data_ptr<double>()[k]);
      }
    }
  }
  EXPECT_THROW(linalg::qr(zeros({2, 3}, kFloat64)), ValueError);
  EXPECT_THROW(linalg::svd(zeros({2, 3}, kInt64)), TypeError);
}

TEST(Decomp, SvdLowrankMatchesPyTorch) {
  std::ifstream f(DITTO_TEST_DATA_DIR "/ops/svd_golden.json");
  ASSERT_TRUE(f.good());
  nlohmann::json j = nlohmann::json::parse(f);
  for (const auto& c : j["cases"]) {
    const int64_t m = c["m"], n = c["n"], q = c["q"];
    manual_seed(c["seed"].get<uint64_t>());
    Tensor a = golden_matrix(m, n);
    linalg::SVD s = linalg::svd_lowrank(a, q, c["niter"]);
    ASSERT_EQ(s.S.numel(), q);
    EXPECT_EQ(s.U.sizes(), (Shape{m, q}));
    EXPECT_EQ(s.V.sizes(), (Shape{n, q}));
    for (int64_t k = 0; k < q; ++k) {
      const double want = c["S"][size_t(k)];
      EXPECT_NEAR(s.S.data_ptr<double>()[k], want, 1e-9 * want) << c.dump();
    }
    // The same random draws as PyTorch: the default generator ends in the
    // same state.
    EXPECT_EQ(rand({1}, kFloat64).item<double>(), c["after"].get<double>());
  }
}

TEST(Decomp, SvdLowrankSameSeedSameBitsNewDrawDifferent) {
  Generator g;
  g.manual_seed(4);
  Tensor low = mm(randn({60, 3}, kFloat64, g), randn({3, 45}, kFloat64, g));
  Generator a;
  a.manual_seed(9);
  linalg::SVD s1 = linalg::svd_lowrank(low, 5, 2, a);
  // Rank 3: the approximation is exact up to rounding.
  EXPECT_LT(max_abs(sub(mm(mul(s1.U, s1.S), s1.V.t()), low)), 1e-10);
  a.manual_seed(9);
  linalg::SVD s2 = linalg::svd_lowrank(low, 5, 2, a);
  EXPECT_TRUE(
      same_bits(s1.U, s2.U) && same_bits(s1.S, s2.S) && same_bits(s1.V, s2.V));
  linalg::SVD s3 = linalg::svd_lowrank(low, 5, 2, a); // no reseed
  EXPECT_FALSE(same_bits(s1.U, s3.U));
  EXPECT_THROW(linalg::svd_lowrank(low, 46), ValueError);
  EXPECT_THROW(linalg::svd_lowrank(low, 0), ValueError);
}
