// The contract beyond one op's samples (those are the op suite's,
// tests/ops/op_suite_test.cpp): user threads, the caller's floating-point
// mode, and a dense sweep of bit patterns through the transcendentals.

#include <gtest/gtest.h>

#include <cfenv>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <tuple>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

using namespace ditto;

namespace {

// Varied values (including negatives, tiny and large magnitudes) from a
// fixed integer recurrence; no random-number generator needed.
Tensor varied(int64_t n, Dtype dtype, double scale) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = double(s >> 11) / double(1ull << 53); // [0, 1)
    x = (u - 0.5) * scale;
  }
  return tensor(v).to(dtype);
}

} // namespace

TEST(Reproducibility, ConcurrentUserThreadsGetTheSameBits) {
  set_num_threads(2);
  Tensor x = varied(200001, kFloat32, 10.0);
  const uint64_t expected = fingerprint(sum(exp(x)));
  std::vector<uint64_t> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k) {
        got[size_t(t)] = fingerprint(sum(exp(x)));
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  for (uint64_t g : got) {
    EXPECT_EQ(g, expected);
  }
}

TEST(Reproducibility, TheCallersFloatingPointModeDoesNotMatter) {
  Tensor x = varied(100003, kFloat32, 1e-36); // many subnormal products
  const uint64_t expected = fingerprint(mul(x, 1e-3));
  const uint64_t expected_sum = fingerprint(sum(x));
  std::fesetround(FE_UPWARD);
  uint64_t got = fingerprint(mul(x, 1e-3));
  uint64_t got_sum = fingerprint(sum(x));
  std::fesetround(FE_TONEAREST);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(got_sum, expected_sum);
#if defined(__x86_64__)
  unsigned csr = __builtin_ia32_stmxcsr();
  __builtin_ia32_ldmxcsr(csr | 0x8040); // flush-to-zero + denormals-are-zero
  got = fingerprint(mul(x, 1e-3));
  __builtin_ia32_ldmxcsr(csr);
  EXPECT_EQ(got, expected);
#endif
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

// A dense sweep of float bit patterns (every 1021st: normals, subnormals,
// infinities and NaNs) and of doubles through every transcendental op: the
// same bits under every CPU capability. Every 7147th where the suite is
// thinned (test::test_thinned()).
TEST(Reproducibility, TranscendentalsSameBitsOverDenseSweep) {
  const int64_t stride = test::test_thinned() ? 1021 * 7 : 1021;
  const int64_t n = (int64_t(1) << 32) / stride;
  std::vector<uint32_t> bits(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    bits[size_t(i)] = uint32_t(i * stride);
  }
  Tensor xf = from_blob(bits.data(), {n}, kFloat32);
  Tensor xd = mul(xf.to(kFloat64), 1.0000001); // doubles off the float grid
  Tensor yf = flip(xf, {0});
  CpuCapability saved = get_cpu_capability();
  std::vector<uint64_t> ref;
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    std::vector<uint64_t> got;
    for (const Tensor& x : {xf, xd}) {
      got.push_back(fingerprint(exp(x)));
      got.push_back(fingerprint(log(x)));
      got.push_back(fingerprint(log1p(x)));
      got.push_back(fingerprint(tanh(x)));
      got.push_back(fingerprint(sigmoid(x)));
      got.push_back(fingerprint(sqrt(x)));
    }
    got.push_back(fingerprint(pow(xf, yf)));
    if (ref.empty()) {
      ref = got;
    }
    EXPECT_EQ(got, ref) << cpu_capability_name(cap);
  }
  set_cpu_capability(saved);
}
