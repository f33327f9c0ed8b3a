// Matrix products: the fma-chain definition bit for bit on every CPU
// capability and thread count, PyTorch's shape rules, split-K and its
// workspace check.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ditto/ditto.h"
#include "test_util.h"
#include "tests/cpu_caps.h"

using namespace ditto;

using ditto::test::same_bits;

namespace {

// The definition (Note [GEMM accumulation order]): each output one fma
// chain over k in order, from 0.
template <typename T>
Tensor chain_reference(const Tensor& a, const Tensor& b) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  Tensor ac = a.contiguous(), bc = b.contiguous();
  Tensor out = zeros({m, n}, a.dtype());
  const T* ap = ac.data_ptr<T>();
  const T* bp = bc.data_ptr<T>();
  T* o = out.data_ptr<T>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc = std::fma(ap[i * k + p], bp[p * n + j], acc);
      }
      o[i * n + j] = acc;
    }
  }
  return out;
}

} // namespace

class Linalg : public ::testing::Test {
 protected:
  void TearDown() override {
    set_num_threads(threads_);
    set_cpu_capability(cap_);
    use_deterministic_algorithms(false);
  }
  int threads_ = get_num_threads();
  CpuCapability cap_ = get_cpu_capability();
};

TEST_F(Linalg, EveryCapabilityAndThreadCountComputesTheChain) {
  Generator g;
  g.manual_seed(7);
  for (Dtype dt : {kFloat32, kFloat64}) {
    // Edge tiles in every direction, k across several panels and not a
    // multiple of the vector width, and every layout of the operands (the
    // packing transposes row-major A and column-major B).
    for (auto [m, k, n] :
         {std::tuple{1, 1, 1},
          {7, 300, 5},
          {97, 513, 259},
          {200, 64, 33},
          {13, 37, 70},
          {290, 40, 9}, // short last row and column slivers
          // Last row tiles of 4 and 2 rows of 6, 3 of 12 and 4 of 8 (the
          // short register tiles that store straight into C).
          {64, 40, 48},
          {62, 33, 40},
          {99, 20, 64},
          {600, 70, 300}}) { // on 1 thread, one task of 600 rows sharing a
                             // pack of B: 192 + 192 + 192 + 24
      for (int layout = 0; layout < 4; ++layout) {
        Tensor a = layout & 1 ? randn({k, m}, dt, g).t() : randn({m, k}, dt, g);
        Tensor b = layout & 2 ? randn({n, k}, dt, g).t() : randn({k, n}, dt, g);
        Tensor want = dt == kFloat32 ? chain_reference<float>(a, b)
                                     : chain_reference<double>(a, b);
        for (CpuCapability cap : test::testable_capabilities()) {
          set_cpu_capability(cap);
          for (int threads : test::test_thread_counts()) {
            set_num_threads(threads);
            EXPECT_TRUE(same_bits(mm(a, b), want))
                << dtype_name(dt) << " " << m << "x" << k << "x" << n
                << " layout " << layout << " " << cpu_capability_name(cap)
                << " " << threads;
          }
        }
      }
    }
  }
}

TEST_F(Linalg, ShapesFollowPyTorch) {
  Generator g;
  g.manual_seed(8);
  Tensor a = randn({2, 1, 4, 3}, kFloat64, g);
  Tensor b = randn({5, 3, 6}, kFloat64, g);
  Tensor c = matmul(a, b); // batch dims broadcast to [2, 5]
  EXPECT_EQ(c.sizes(), (Shape{2, 5, 4, 6}));
  EXPECT_TRUE(same_bits(
      c.select(0, 1).select(0, 3),
      mm(a.select(0, 1).select(0, 0), b.select(0, 3))));
  Tensor v = randn({3}, kFloat64, g);
  EXPECT_EQ(matmul(v, v).dim(), 0);
  EXPECT_EQ(matmul(a, v).sizes(), (Shape{2, 1, 4}));
  EXPECT_EQ(matmul(v, b).sizes(), (Shape{5, 6}));
  EXPECT_TRUE(same_bits(
      matmul(v, b).select(0, 2),
      mm(v.unsqueeze(0), b.select(0, 2)).squeeze(0)));
  Tensor x = randn({4, 3}, kFloat32, g), w = randn({6, 3}, kFloat32, g),
         bias = randn({6}, kFloat32, g);
  EXPECT_TRUE(same_bits(linear(x, w, bias), add(mm(x, w.t()), bias)));
  EXPECT_TRUE(same_bits(
      bmm(a.select(1, 0), b.narrow(0, 0, 2)),
      matmul(a.select(1, 0), b.narrow(0, 0, 2))));
  // addmm: beta * input + alpha * ab; beta = 0 ignores NaN in input.
  Tensor in = full({4, 6}, std::nan(""), kFloat32);
  EXPECT_TRUE(same_bits(addmm(in, x, w.t(), 0, 2), mul(mm(x, w.t()), 2)));
  EXPECT_TRUE(allclose(
      addmm(bias, x, w.t(), 0.5, 1), add(mm(x, w.t()), mul(bias, 0.5))));
  // Empty outputs, also where split-K would apply.
  {
    backends::gemm::set_workspace_config(":4096:8");
    DeterministicGuard guard(true);
    EXPECT_EQ(mm(zeros({0, 20000}), zeros({20000, 4})).sizes(), (Shape{0, 4}));
  }
  // k = 0: zeros.
  EXPECT_TRUE(equal(mm(zeros({2, 0}), zeros({0, 3})), zeros({2, 3})));
  EXPECT_THROW(mm(x, x), ValueError);
  EXPECT_THROW(mm(x, w.t().to(kFloat64)), TypeError);
  EXPECT_THROW(mm(x.to(kInt64), w.t().to(kInt64)), TypeError);
  EXPECT_THROW(matmul(a, randn({5, 4, 6}, kFloat64, g)), ValueError);
  EXPECT_THROW(linear(x, w, randn({5}, kFloat32, g)), ValueError);
}

// Issue 32, defect 8: a weight-gradient-shaped product (64 x 64 over
// k = 20,000) works in deterministic mode with no workspace configured (ctest
// runs each test in its own process, so none is set here), with the same
// bits for 1, 2 and 3 threads, forward and through a linear layer's
// backward.
TEST_F(Linalg, DeterministicModeNeedsNoWorkspaceConfiguration) {
  Generator g;
  g.manual_seed(4);
  const int64_t k = 20000;
  Tensor x = randn({k, 64}, kFloat32, g), dy = randn({k, 64}, kFloat32, g);
  DeterministicGuard guard(true);
  std::vector<uint64_t> fps;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor w = randn({64, 64}, kFloat32, g).requires_grad_();
    Tensor y = linear(x, w);
    y.backward(dy); // dW = dy^T x: a [64, 64] output over k = 20,000
    fps.push_back(fingerprint(w.grad()));
    EXPECT_TRUE(same_bits(w.grad(), mm(dy.t(), x))) << threads;
  }
  EXPECT_EQ(fps[0], fps[1]);
  EXPECT_EQ(fps[0], fps[2]);
}

// A [16, 20000] x [20000, 16] product splits k in 5 chunks of 4096.
TEST_F(Linalg, SplitKDeterministicVariantForAnyWorkspace) {
  Generator g;
  g.manual_seed(9);
  const int64_t k = 20000;
  Tensor a = randn({16, k}, kFloat32, g), b = randn({k, 16}, kFloat32, g);
  // The definition: chunk chains added in chunk order.
  Tensor want;
  for (int64_t k0 = 0; k0 < k; k0 += 4096) {
    const int64_t len = std::min<int64_t>(4096, k - k0);
    Tensor part =
        chain_reference<float>(a.narrow(1, k0, len), b.narrow(0, k0, len));
    want = want.defined() ? add(want, part) : part;
  }
  backends::gemm::set_workspace_config(":4096:8");
  use_deterministic_algorithms(true);
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    for (int threads : test::test_thread_counts()) {
      set_num_threads(threads);
      EXPECT_TRUE(same_bits(mm(a, b), want)) << threads;
    }
  }
  // Any workspace, a tiny one included (one partial at a time), gives the
  // same bits in the mode, with no alert and no warning (issue 32, defect
  // 8: the mode used to require exactly :4096:8 or :16:8).
  std::vector<std::string> warned;
  determinism::set_warning_handler(
      [&](std::string_view op, std::string_view) { warned.emplace_back(op); });
  for (const char* config : {":1:1", ":16:8", ":4096:8:16:8", ":0:0"}) {
    backends::gemm::set_workspace_config(config);
    for (bool warn_only : {false, true}) {
      use_deterministic_algorithms(true, warn_only);
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        EXPECT_TRUE(same_bits(mm(a, b), want)) << config << " " << threads;
      }
    }
  }
  determinism::set_warning_handler({});
  EXPECT_TRUE(warned.empty());
  // The fast variant (mode off) is within rounding of it.
  use_deterministic_algorithms(false);
  set_num_threads(2);
  EXPECT_TRUE(allclose(mm(a, b), want, 1e-4, 1e-3));
  // Bad syntax: ValueError, configuration unchanged.
  EXPECT_THROW(backends::gemm::set_workspace_config("4096:8"), ValueError);
  EXPECT_THROW(backends::gemm::set_workspace_config(":4096:"), ValueError);
  for (const char* bad :
       {"",
        ":",
        "::8",
        ":4096",
        ":4096:8:",
        ":4096:8:16",
        ":a:8",
        ":4096:8 ",
        ":-1:8",
        ":1234567890:1"}) {
    EXPECT_THROW(backends::gemm::set_workspace_config(bad), ValueError) << bad;
  }
  backends::gemm::set_workspace_config(":4096:8:16:8");
  EXPECT_EQ(backends::gemm::workspace_config(), ":4096:8:16:8");
  backends::gemm::set_workspace_config(":1:1");
  EXPECT_EQ(backends::gemm::workspace_config(), ":1:1");
  EXPECT_EQ(backends::gemm::workspace_bytes(), 1024);
  backends::gemm::set_workspace_config(":16:8");
  EXPECT_EQ(backends::gemm::workspace_bytes(), 16 * 1024 * 8);
}

// Note [GEMM blocking from the caches]: the blocking decides where values
// wait, never the chain. Forced blockings, including ones no cache gives
// (a panel of 64 values of k, blocks of one register tile, odd widths),
// compute the definition's bits on every capability (at the fewest and the
// most threads), and a convolution's three directions (the implicit GEMM,
// B's rows read in place or packed) give the bits of the derived blocking.
TEST_F(Linalg, EveryBlockingComputesTheSameChain) {
  struct Forced {
    int64_t kc, mc, nc;
  };
  const Forced blockings[] = {
      {0, 0, 0}, // the caches' own
      {64, 24, 128},
      {257, 1000, 160},
      {1000, 3000, 4096},
      {1, 1, 1}, // one value of k per panel, one register tile per block
  };
  // Threads never enter the chain (the test above runs every count): the
  // fewest and the most; under the sanitizers the most only (an uneven
  // split reaches every edge; the release suite runs both).
  const std::vector<int> counts = test::test_thread_counts();
  std::vector<int> thread_counts = {counts.front(), counts.back()};
  if (test::test_sanitized()) {
    thread_counts = {counts.back()};
  }
  Generator g;
  g.manual_seed(11);
  struct Case {
    Tensor a, b, want;
  };
  std::vector<Case> cases;
  for (Dtype dt : {kFloat32, kFloat64}) {
    for (auto [m, k, n] :
         {std::tuple{97, 513, 259}, {64, 40, 48}, {300, 200, 350}}) {
      for (int layout : {0, 3}) {
        Tensor a = layout & 1 ? randn({k, m}, dt, g).t() : randn({m, k}, dt, g);
        Tensor b = layout & 2 ? randn({n, k}, dt, g).t() : randn({k, n}, dt, g);
        Tensor want = dt == kFloat32 ? chain_reference<float>(a, b)
                                     : chain_reference<double>(a, b);
        cases.push_back({a, b, want});
      }
    }
  }
  Tensor x = randn({4, 8, 14, 14}, kFloat32, g).requires_grad_(true);
  Tensor w = randn({16, 8, 3, 3}, kFloat32, g).requires_grad_(true);
  auto conv_parts = [&] {
    x.mutable_grad() = Tensor();
    w.mutable_grad() = Tensor();
    Tensor y = conv2d(x, w, {}, {1, 1}, {1, 1});
    y.sum().backward();
    return std::vector<Tensor>{y.detach(), x.grad(), w.grad()};
  };
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    backends::gemm::set_blocking(0, 0, 0);
    const std::vector<Tensor> conv_want = conv_parts();
    for (const Forced& f : blockings) {
      backends::gemm::set_blocking(f.kc, f.mc, f.nc);
      const backends::gemm::Blocking in_force = backends::gemm::blocking();
      if (f.kc > 0) {
        EXPECT_EQ(in_force.kc, f.kc);
        EXPECT_EQ(in_force.mc, f.mc);
        EXPECT_EQ(in_force.nc, f.nc);
      }
      for (int threads : thread_counts) {
        set_num_threads(threads);
        for (const Case& c : cases) {
          EXPECT_TRUE(same_bits(mm(c.a, c.b), c.want))
              << cpu_capability_name(cap) << " kc " << f.kc << " mc " << f.mc
              << " nc " << f.nc << " threads " << threads << " "
              << dtype_name(c.a.dtype()) << " " << shape_str(c.a.sizes())
              << " @ " << shape_str(c.b.sizes());
        }
        const std::vector<Tensor> got = conv_parts();
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_TRUE(same_bits(got[i], conv_want[i]))
              << "conv2d part " << i << " " << cpu_capability_name(cap)
              << " kc " << f.kc << " threads " << threads;
        }
      }
    }
  }
  backends::gemm::set_blocking(0, 0, 0);
}

TEST_F(Linalg, BlockingIsDerivedFromTheCaches) {
  using backends::gemm::CpuCaches;
  // Zen 3 (32 KiB L1d, 512 KiB L2), AVX2's float32 tile of 6 x 16: a
  // sliver of B of 512 x 16 floats fills L1 (32 KiB), a block of A of
  // 48 x 512 is at most a quarter of L2, B's panel of 512 x 1024 at most
  // four times L2 (it waits in L3).
  CpuCaches zen3;
  zen3.l1d = 32 << 10;
  zen3.l2 = 512 << 10;
  zen3.l3 = 4 << 20;
  backends::gemm::Blocking b =
      backends::gemm::derive_blocking(zen3, 6, 16, kFloat32);
  EXPECT_EQ(b.kc, 512);
  EXPECT_EQ(b.mc, 48);
  EXPECT_EQ(b.nc, 1024);
  // Zen 5 (48 KiB L1d, 1 MiB L2), AVX-512's float32 tile of 12 x 32.
  CpuCaches zen5 = zen3;
  zen5.l1d = 48 << 10;
  zen5.l2 = 1 << 20;
  b = backends::gemm::derive_blocking(zen5, 12, 32, kFloat32);
  EXPECT_EQ(b.kc, 384);
  EXPECT_EQ(b.mc, 168);
  EXPECT_EQ(b.nc, 2688);
  EXPECT_EQ(b.mr, 12);
  EXPECT_EQ(b.nr, 32);
  // float64 on the same tile shape: half as many values fit.
  const backends::gemm::Blocking b64 =
      backends::gemm::derive_blocking(zen5, 8, 16, kFloat64);
  EXPECT_EQ(b64.kc, 384);
  EXPECT_EQ(b64.mc, 72);
  EXPECT_EQ(b64.nc, 1280);
  // Bigger caches never give smaller blocks.
  CpuCaches big = zen5;
  big.l1d = 64 << 10;
  big.l2 = 2 << 20;
  const backends::gemm::Blocking bb =
      backends::gemm::derive_blocking(big, 12, 32, kFloat32);
  EXPECT_GE(bb.kc, b.kc);
  EXPECT_GE(bb.kc * bb.mc, b.kc * b.mc);
  // The machine's own: within the clamps, every block a whole number of
  // register tiles' rows and columns.
  for (Dtype dt : {kFloat32, kFloat64}) {
    const backends::gemm::Blocking own = backends::gemm::blocking(dt);
    EXPECT_GT(own.mr, 0);
    EXPECT_GT(own.nr, 0);
    EXPECT_EQ(own.mc % 24, 0);
    EXPECT_EQ(own.nc % own.nr, 0);
    EXPECT_GE(own.kc, 64);
  }
  EXPECT_GT(backends::gemm::cpu_caches().l1d, 0);
  EXPECT_FALSE(backends::gemm::cpu_caches().source.empty());
}

TEST_F(Linalg, BadBlockingIsRefusedAndChangesNothing) {
  backends::gemm::set_blocking(128, 48, 256);
  for (auto [kc, mc, nc] :
       {std::tuple<int64_t, int64_t, int64_t>{-1, 0, 0},
        {0, -5, 0},
        {0, 0, 65537},
        {int64_t(1) << 40, 0, 0}}) {
    try {
      backends::gemm::set_blocking(kc, mc, nc);
      ADD_FAILURE() << "accepted " << kc << " " << mc << " " << nc;
    } catch (const ValueError& e) {
      EXPECT_NE(
          std::string(e.what()).find("backends::gemm::set_blocking"),
          std::string::npos)
          << e.what();
    }
    const backends::gemm::Blocking b = backends::gemm::blocking();
    EXPECT_EQ(b.kc, 128);
    EXPECT_EQ(b.mc, 48);
    EXPECT_EQ(b.nc, 256);
  }
  backends::gemm::CpuCaches tiny;
  tiny.l1d = 512;
  tiny.l2 = 1 << 20;
  EXPECT_THROW(
      backends::gemm::derive_blocking(tiny, 12, 32, kFloat32), ValueError);
  tiny.l1d = 32 << 10;
  EXPECT_THROW(
      backends::gemm::derive_blocking(tiny, 0, 32, kFloat32), ValueError);
  EXPECT_THROW(
      backends::gemm::derive_blocking(tiny, 12, 32, kInt32), TypeError);
  backends::gemm::CpuCaches huge = tiny;
  huge.l2 = INT64_MAX; // would overflow the model's arithmetic
  EXPECT_THROW(
      backends::gemm::derive_blocking(huge, 12, 32, kFloat32), ValueError);
  huge.l2 = int64_t(1) << 40; // the largest taken: the clamps hold
  const backends::gemm::Blocking big_l2 =
      backends::gemm::derive_blocking(huge, 12, 32, kFloat32);
  EXPECT_LE(big_l2.mc, 3072);
  EXPECT_LE(big_l2.nc, 8192);
  EXPECT_THROW(
      backends::gemm::blocking(kInt64), TypeError); // float32 or float64 only
  backends::gemm::set_blocking(0, 0, 0);
}

// Note [Gradients in their operand's layout]: the gradient of a transposed
// operand (linear's weight.t()) has that operand's strides, and the same
// bits as the product taken the plain way.
TEST(LinalgGrad, TransposedOperandKeepsItsLayoutAndBits) {
  manual_seed(3);
  for (bool use_mm : {true, false}) {
    Tensor x = randn({7, 5}).requires_grad_();
    Tensor w = randn({4, 5}).requires_grad_();
    Tensor wt = w.t(); // [5, 4], column-major
    Tensor xt = randn({5, 7}).t().requires_grad_(); // a column-major leaf
    Tensor v = randn({5, 4});
    Tensor y = use_mm ? mm(x, wt) : matmul(x, wt);
    Tensor z = use_mm ? mm(xt, v) : matmul(xt, v);
    Tensor go = randn({7, 4});
    auto g = autograd::grad({y, z}, {wt, xt, x}, {go, go});
    EXPECT_EQ(g[0].strides(), wt.strides());
    EXPECT_EQ(g[1].strides(), xt.strides());
    EXPECT_TRUE(g[2].is_contiguous());
    // The plain products, element for element the same chains.
    EXPECT_TRUE(equal(g[0], mm(x.detach().t(), go)));
    EXPECT_TRUE(equal(g[1], mm(go, v.t())));
    EXPECT_TRUE(equal(g[2], mm(go, wt.detach().t())));
    // Through t(), the weight's gradient is contiguous.
    Tensor loss = (use_mm ? mm(x, w.t()) : matmul(x, w.t())).sum();
    loss.backward();
    EXPECT_TRUE(w.grad().is_contiguous());
  }
}

// Note [matmul folds a batch into rows]: [B, T, K] times [K, N] is one
// product of [B*T, K] rows, forward and backward, as PyTorch's matmul
// folds it; nn.Linear on a 3-d input is that product.
TEST_F(Linalg, BatchTimesMatrixIsOneFoldedProduct) {
  manual_seed(3);
  for (Dtype dt : {kFloat32, kFloat64}) {
    Tensor x = randn({4, 5, 7}, dt).requires_grad_();
    Tensor w = randn({7, 3}, dt).requires_grad_();
    Tensor g = randn({4, 5, 3}, dt);
    Tensor y = matmul(x, w);
    y.backward(g);
    Tensor x2 = x.detach().reshape({20, 7}).requires_grad_();
    Tensor w2 = w.detach().requires_grad_();
    Tensor y2 = mm(x2, w2);
    y2.backward(g.reshape({20, 3}));
    EXPECT_TRUE(same_bits(y, y2.reshape({4, 5, 3})));
    EXPECT_TRUE(same_bits(x.grad(), x2.grad().reshape({4, 5, 7})));
    EXPECT_TRUE(same_bits(w.grad(), w2.grad()));
    // A vector on the right, and a non-contiguous batch.
    Tensor v = randn({7}, dt);
    EXPECT_TRUE(same_bits(
        matmul(x.detach(), v),
        mm(x.detach().reshape({20, 7}), v.view({7, 1})).view({4, 5})));
    Tensor xt = randn({5, 4, 7}, dt).transpose(0, 1);
    EXPECT_TRUE(same_bits(
        matmul(xt, w.detach()),
        mm(xt.contiguous().view({20, 7}), w.detach()).view({4, 5, 3})));
    // Linear's weight gradient on [B, T, K] is the folded product's.
    Tensor wl = randn({3, 7}, dt).requires_grad_();
    nn::functional::linear(x.detach(), wl).backward(g);
    EXPECT_TRUE(same_bits(
        wl.grad(), mm(g.reshape({20, 3}).t(), x.detach().reshape({20, 7}))));
  }
  // The error still names both shapes.
  try {
    matmul(zeros({2, 3, 4}), zeros({5, 6}));
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("{2, 3, 4}"), std::string::npos)
        << e.what();
  }
}
