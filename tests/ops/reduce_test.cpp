#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

using namespace ditto;

namespace {
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
}

TEST(Reduce, SumOverAllAndDims) {
  Tensor a = arange(0, 24, 1, kFloat32).view({2, 3, 4});
  EXPECT_EQ(sum(a).item<float>(), 276.0f);
  EXPECT_EQ(sum(a).dim(), 0);
  EXPECT_TRUE(equal(
      sum(a, {0}),
      add(arange(0, 12, 1, kFloat32), arange(12, 24, 1, kFloat32))
          .view({3, 4})));
  EXPECT_TRUE(equal(sum(a, {1, 2}), tensor<float>({66, 210})));
  EXPECT_EQ(sum(a, {-1}, true).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(sum(a, {0, 2}, true).sizes(), (Shape{1, 3, 1}));
  EXPECT_EQ(sum(a, {2, 0}).sizes(), (Shape{3}));
  EXPECT_THROW(sum(a, {3}), IndexError);
  EXPECT_THROW(sum(a, {1, -2}), ValueError);
}

TEST(Reduce, IntegerSumsGiveInt64) {
  Tensor i = tensor<int32_t>({INT32_MAX, INT32_MAX});
  Tensor s = sum(i);
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(s.item<int64_t>(), 2 * int64_t(INT32_MAX));
  EXPECT_EQ(sum(tensor<bool>({true, true, false})).item<int64_t>(), 2);
  EXPECT_EQ(sum(tensor<uint8_t>({200, 200})).item<int64_t>(), 400);
  EXPECT_EQ(prod(tensor<int64_t>({2, 3, 4})).item<int64_t>(), 24);
}

TEST(Reduce, EmptyReductions) {
  EXPECT_EQ(sum(zeros({0})).item<float>(), 0.0f);
  EXPECT_EQ(prod(zeros({0, 3}), 0).sizes(), (Shape{3}));
  EXPECT_EQ(prod(zeros({0, 3}), 0).data_ptr<float>()[2], 1.0f);
  EXPECT_TRUE(std::isnan(mean(zeros({0})).item<float>()));
  EXPECT_THROW(max(zeros({0})), IndexError);
  EXPECT_THROW(max(zeros({2, 0}), 1), IndexError);
  EXPECT_EQ(max(zeros({0, 2}), 1).first.sizes(), (Shape{0}));
}

TEST(Reduce, Mean) {
  Tensor a = arange(0, 6, 1, kFloat64).view({2, 3});
  EXPECT_EQ(mean(a).item<double>(), 2.5);
  EXPECT_TRUE(equal(mean(a, {1}), tensor<double>({1, 4})));
  EXPECT_THROW(mean(tensor<int64_t>({1, 2})), TypeError);
}

TEST(Reduce, MaxMinWithIndicesTiesTakeFirst) {
  Tensor a = tensor<float>({3, 1, 3, 0, 1, 0}, {2, 3});
  auto [v, i] = max(a, 1);
  EXPECT_TRUE(equal(v, tensor<float>({3, 1})));
  EXPECT_TRUE(equal(i, tensor<int64_t>({0, 1})));
  auto [mv, mi] = min(a, 1);
  EXPECT_TRUE(equal(mv, tensor<float>({1, 0})));
  EXPECT_TRUE(equal(mi, tensor<int64_t>({1, 0})));
  EXPECT_EQ(argmax(a).item<int64_t>(), 0);
  EXPECT_EQ(argmin(a).item<int64_t>(), 3);
  EXPECT_TRUE(equal(argmax(a, 0), tensor<int64_t>({0, 0, 0})));
  EXPECT_EQ(argmax(a, 0, true).sizes(), (Shape{1, 3}));
  EXPECT_EQ(max(a).item<float>(), 3.0f);
  EXPECT_EQ(min(a).item<float>(), 0.0f);
}

TEST(Reduce, NaNPropagatesAndWins) {
  Tensor a = tensor<float>({1, kNaNf, 5, kNaNf});
  EXPECT_TRUE(std::isnan(max(a).item<float>()));
  EXPECT_TRUE(std::isnan(min(a).item<float>()));
  EXPECT_EQ(argmax(a).item<int64_t>(), 1);
  EXPECT_EQ(argmin(a).item<int64_t>(), 1);
  EXPECT_TRUE(std::isnan(sum(a).item<float>()));
  // Across chunk boundaries too: the first NaN is in a later chunk.
  Tensor big = arange(0, 100000, 1, kFloat32);
  big.data_ptr<float>()[70000] = kNaNf;
  big.data_ptr<float>()[90000] = kNaNf;
  EXPECT_EQ(argmax(big).item<int64_t>(), 70000);
  EXPECT_EQ(argmin(big).item<int64_t>(), 70000);
}

TEST(Reduce, LargeSumIsAccurate) {
  // 10M ones summed in float: an ordered sequential sum would stall at 2^24.
  Tensor a = ones({10'000'000});
  EXPECT_EQ(sum(a).item<float>(), 1e7f);
  Tensor b = full({3'000'001}, 0.1, kFloat64);
  EXPECT_NEAR(sum(b).item<double>(), 300000.1, 1e-6);
}

TEST(Reduce, StridedInputs) {
  Tensor a = arange(0, 30000, 1, kFloat32).view({100, 300});
  Tensor t = a.t();
  EXPECT_TRUE(equal(sum(t, {1}), sum(a, {0})));
  EXPECT_TRUE(equal(max(t, 0).second, argmax(a, 1)));
  EXPECT_EQ(
      sum(a.slice(1, 0, 300, 7)).item<float>(),
      sum(a.slice(1, 0, 300, 7).contiguous()).item<float>());
}

namespace {

// The documented order (docs/numerics.md, "Parallel reductions"), written
// out serially: chunks of 16384, element i of a chunk into lane i % 16;
// a product keeps one running product per lane; a sum (Note [Blocked
// sums]) sums each lane's 16 elements of each block of 256 from 0 and adds
// a lane's block sums in a pairwise tree; lanes halved (j += j + 8, then
// 4, 2, 1), chunk partials combined as a pairwise tree (i += i + s for
// s = 1, 2, 4...).
template <typename T>
T documented_reduce(const std::vector<T>& x, bool prod) {
  const int64_t grain = 16384, block = 256;
  const int64_t n = int64_t(x.size());
  auto op = [prod](T a, T b) { return prod ? a * b : a + b; };
  auto tree = [&](std::vector<T>& p) {
    for (size_t s = 1; s < p.size(); s *= 2) {
      for (size_t i = 0; i + s < p.size(); i += 2 * s) {
        p[i] = op(p[i], p[i + s]);
      }
    }
  };
  std::vector<T> partial;
  for (int64_t b = 0; b < n; b += grain) {
    const int64_t e = std::min(n, b + grain);
    T lane[16];
    for (int j = 0; j < 16; ++j) {
      if (prod) {
        lane[j] = T(1);
        for (int64_t i = b + j; i < e; i += 16) {
          lane[j] = lane[j] * x[size_t(i)];
        }
        continue;
      }
      std::vector<T> blocks;
      for (int64_t k = b; k < e; k += block) {
        T acc = 0;
        for (int64_t i = k + j; i < std::min(e, k + block); i += 16) {
          acc = acc + x[size_t(i)];
        }
        blocks.push_back(acc);
      }
      tree(blocks);
      lane[j] = blocks[0];
    }
    for (int w = 8; w >= 1; w /= 2) {
      for (int j = 0; j < w; ++j) {
        lane[j] = op(lane[j], lane[j + w]);
      }
    }
    partial.push_back(lane[0]);
  }
  tree(partial);
  return partial.empty() ? (prod ? T(1) : T(0)) : partial[0];
}

template <typename T>
std::vector<T> spread_values(int64_t n, bool prod) {
  // Magnitudes over several decades and both signs: any other order of the
  // additions (or products) rounds differently.
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(s >> 11) * 0x1p-53;
    v[size_t(i)] = prod ? T(1.0 + (u - 0.5) * 1e-3)
                        : T((u - 0.5) * std::pow(10.0, double(i % 7) - 3));
  }
  return v;
}

template <typename T>
void expect_documented_order(Dtype dtype) {
  const std::vector<int64_t> sizes = {
      1, 17, 16384, 4 * 16384, 5 * 16384 + 7, 9 * 16384 + 12345};
  for (int64_t n : sizes) {
    for (bool prod : {false, true}) {
      std::vector<T> v = spread_values<T>(n, prod);
      const T want = documented_reduce(v, prod);
      Tensor x = tensor(v).to(dtype);
      // Contiguous, and gathered from a strided view of the same values.
      Tensor wide = zeros({n, 2}, dtype);
      wide.select(1, 1).copy_(x);
      for (const Tensor& in : {x, wide.select(1, 1)}) {
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          const T got = (prod ? ditto::prod(in) : sum(in)).item<T>();
          EXPECT_EQ(std::memcmp(&got, &want, sizeof(T)), 0)
              << (prod ? "prod" : "sum") << " of " << n << " " << dtype
              << (in.is_contiguous() ? " contiguous" : " strided") << ", "
              << threads << " threads: " << got << " vs " << want;
        }
      }
      // Several rows of that length, reduced over the last dim.
      if (n >= 16384 && n <= 5 * 16384 + 7) {
        Tensor rows = stack({x, x, x}, 0);
        Tensor got = prod ? ditto::prod(rows, 1) : sum(rows, {1});
        for (int64_t r = 0; r < 3; ++r) {
          const T g = got[r].item<T>();
          EXPECT_EQ(std::memcmp(&g, &want, sizeof(T)), 0)
              << "row " << r << " of " << n;
        }
      }
    }
  }
  set_num_threads(2);
}

} // namespace

// Bits, not closeness: the result is the documented order's, on every
// capability and thread count, for runs of chunks a kernel takes together
// (Note [Interleaved chunks]) and ones it takes alone.
TEST(Reduce, SumAndProdFollowTheDocumentedOrder) {
  const CpuCapability saved = get_cpu_capability();
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    SCOPED_TRACE(std::string(cpu_capability_name(cap)));
    expect_documented_order<float>(kFloat32);
    expect_documented_order<double>(kFloat64);
  }
  set_cpu_capability(saved);
}

namespace {

// tests/ops/gen_sum_accuracy_golden.py's values: element i is k_i *
// 2^scales[i % scales.size()], k_i the top 24 bits of an LCG's state.
std::vector<float> accuracy_values(
    int64_t n,
    const std::vector<int>& scales,
    uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[size_t(i)] =
        std::ldexp(float(s >> 40), scales[size_t(i) % scales.size()]);
  }
  return v;
}

} // namespace

// Note [Blocked sums]: float32 sum is at least as accurate as PyTorch
// 1.13's cascade sum on data of one and of two magnitudes (its results and
// the exact sums in tests/ops/sum_accuracy_golden.json), on every
// capability. Until 2026-12-03 one running sum per lane over 1,024
// elements was 10 to 40 times less accurate on such data.
TEST(Reduce, SumIsAtLeastAsAccurateAsPyTorchs) {
  std::ifstream in(
      std::string(DITTO_TEST_DATA_DIR) + "/ops/sum_accuracy_golden.json");
  const nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_EQ(cases.size(), 4u);
  const CpuCapability saved = get_cpu_capability();
  for (const auto& c : cases) {
    const std::vector<float> v = accuracy_values(
        c["n"].get<int64_t>(),
        c["scales"].get<std::vector<int>>(),
        c["seed"].get<uint64_t>());
    const double exact = c["exact"].get<double>();
    const double torch_error = std::abs(c["torch"].get<double>() - exact);
    // Our own check of the values: their exact sum, to double's rounding.
    double check = 0;
    for (float f : v) {
      check += double(f);
    }
    ASSERT_NEAR(check, exact, 1e-9 * std::abs(exact)) << c["name"];
    Tensor x = tensor(v);
    for (CpuCapability cap : test::testable_capabilities()) {
      set_cpu_capability(cap);
      const double got = double(sum(x).item<float>());
      const double error = std::abs(got - exact);
      EXPECT_LE(error, torch_error)
          << c["name"] << " " << cpu_capability_name(cap) << ": ditto " << got
          << " torch " << c["torch"].get<double>() << " exact " << exact;
    }
  }
  set_cpu_capability(saved);
}
