// The contract, tested: every elementwise op and reduction gives the same
// bits with 1, 2, 3 and 8 threads (R2) and under every CPU capability this
// build and machine have (R5), on sizes that are not multiples of the chunk
// sizes. The reference is the scalar kernels on one thread.

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

struct Results {
  std::vector<uint64_t> prints;
  std::vector<std::string> names;
  void add(const char* name, const Tensor& t) {
    names.emplace_back(name);
    prints.push_back(fingerprint(t));
  }
};

Results run_everything(Dtype dtype) {
  Results r;
  const int64_t n = 3 * 16384 * 5 + 12345; // not a multiple of any grain
  Tensor x = varied(n, dtype, 20.0);
  Tensor y = varied(n, dtype, 3.0);
  Tensor pos = add(abs(y), 1e-3);
  Tensor m = x.narrow(0, 0, 317 * 811).view({317, 811});
  r.add("add", add(x, y));
  r.add("sub", sub(x, 0.75));
  r.add("mul", mul(x, y));
  r.add("div", div(x, pos));
  r.add("pow", pow(pos, y));
  r.add("exp", exp(x));
  r.add("log", log(pos));
  r.add("log1p", log1p(abs(x)));
  r.add("sqrt", sqrt(pos));
  r.add("tanh", tanh(x));
  r.add("sigmoid", sigmoid(x));
  r.add("relu", relu(x));
  r.add("neg", neg(x));
  r.add("clamp", clamp(x, -1.5, 2.5));
  r.add("where", where(gt(x, y), x, y));
  r.add("maximum", maximum(x, y));
  r.add("lt", lt(x, y));
  r.add("broadcast", add(m, m.select(0, 3)));
  r.add("strided", exp(m.t()));
  r.add("sum", sum(x));
  Tensor yf = is_floating(dtype) ? y : y.to(kFloat32); // mean needs floats
  r.add("mean", mean(yf));
  r.add("prod", prod(add(mul(y, 0.01), 1.0)));
  r.add("sum_dim0", sum(m, {0}));
  r.add("sum_dim1", sum(m, {1}));
  // Several rows, each longer than a reduction chunk.
  Tensor long_rows = x.narrow(0, 0, 3 * 40000).view({3, 40000});
  r.add("sum_long_rows", sum(long_rows, {1}));
  r.add("argmax_long_rows", argmax(long_rows, 1));
  r.add("mean_dims", mean(m.view({317, 811, 1}).to(yf.dtype()), {0, 2}, true));
  r.add("max", max(x));
  r.add("argmin_dim", argmin(m, 1));
  r.add("max_dim_values", max(m, 0).first);
  r.add("max_dim_indices", max(m, 0).second);
  r.add("sort", sort(m, 1).first);
  r.add("cat", cat({m, m.slice(0, 0, 10)}));
  r.add("flip", flip(m, {0, 1}));
  r.add("pad", pad(m, {3, 2, 1, 1}, "reflect"));
  r.add("copy", m.t().contiguous());
  r.add("to_int", mul(x, 1000.0).to(kInt32));
  r.add("int_sum", sum(mul(x, 1000.0).to(kInt64)));
  if (is_floating(dtype)) {
    // Products with edge tiles, transposed operands and batches.
    Tensor a = x.narrow(0, 0, 197 * 333).view({197, 333});
    Tensor b = y.narrow(0, 0, 333 * 301).view({333, 301});
    r.add("mm", mm(a, b));
    r.add("mm_transposed", mm(b.t(), a.t()));
    r.add(
        "matmul_batched",
        matmul(
            x.narrow(0, 0, 3 * 37 * 53).view({3, 37, 53}),
            y.narrow(0, 0, 53 * 29).view({53, 29})));
  }
  return r;
}

class Reproducibility
    : public ::testing::TestWithParam<std::tuple<Dtype, CpuCapability>> {
 protected:
  void TearDown() override {
    set_num_threads(saved_threads_);
    set_cpu_capability(saved_cap_);
  }
  int saved_threads_ = get_num_threads();
  CpuCapability saved_cap_ = get_cpu_capability();
};

} // namespace

// Every op's fingerprint under the capability of the test's parameter and
// 1, 2, 3 and 8 threads equals the scalar single-thread one. Capabilities
// the CPU lacks are skipped with the reason.
TEST_P(Reproducibility, SameBitsForEveryThreadCountAndCapability) {
  const auto [dtype, cap] = GetParam();
  if (!cpu_capability_supported(cap)) {
    GTEST_SKIP() << "capability " << cpu_capability_name(cap)
                 << ": this CPU does not support it";
  }
  set_cpu_capability(CpuCapability::Scalar);
  set_num_threads(1);
  Results ref = run_everything(dtype);
  // `make cross-build-check`, `make cpu-check` and `make cross-arch-check`
  // compare these between builds, emulated CPUs and architectures.
  const char* dir = std::getenv("DITTO_FINGERPRINT_DIR");
  if (dir != nullptr && cap == CpuCapability::Scalar) {
    std::ofstream out(
        std::string(dir) + "/" + std::string(dtype_name(dtype)) + ".txt");
    for (size_t i = 0; i < ref.prints.size(); ++i) {
      out << ref.names[i] << " " << std::hex << ref.prints[i] << "\n";
    }
    ASSERT_TRUE(out.good());
  }
  set_cpu_capability(cap);
  for (int threads : {1, 2, 3, 8}) {
    set_num_threads(threads);
    Results got = run_everything(dtype);
    ASSERT_EQ(got.prints.size(), ref.prints.size());
    for (size_t i = 0; i < ref.prints.size(); ++i) {
      EXPECT_EQ(got.prints[i], ref.prints[i])
          << ref.names[i] << " differs with " << cpu_capability_name(cap)
          << " and " << threads << " threads";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes,
    Reproducibility,
    ::testing::Combine(
        ::testing::Values(kFloat32, kFloat64, kInt64, kInt32, kUInt8),
        ::testing::ValuesIn(compiled_cpu_capabilities())),
    [](const auto& info) {
      return std::string(dtype_name(std::get<0>(info.param))) + "_" +
          std::string(cpu_capability_name(std::get<1>(info.param)));
    });

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
// same bits under every CPU capability.
TEST(Reproducibility, TranscendentalsSameBitsOverDenseSweep) {
  const int64_t n = (int64_t(1) << 32) / 1021;
  std::vector<uint32_t> bits(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    bits[size_t(i)] = uint32_t(i * 1021);
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
