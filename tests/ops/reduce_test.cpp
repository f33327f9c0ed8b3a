#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ditto/ditto.h"

using namespace ditto;

namespace {
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
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
  Tensor a = tensor<float>({1, kNaN, 5, kNaN});
  EXPECT_TRUE(std::isnan(max(a).item<float>()));
  EXPECT_TRUE(std::isnan(min(a).item<float>()));
  EXPECT_EQ(argmax(a).item<int64_t>(), 1);
  EXPECT_EQ(argmin(a).item<int64_t>(), 1);
  EXPECT_TRUE(std::isnan(sum(a).item<float>()));
  // Across chunk boundaries too: the first NaN is in a later chunk.
  Tensor big = arange(0, 100000, 1, kFloat32);
  big.data_ptr<float>()[70000] = kNaN;
  big.data_ptr<float>()[90000] = kNaN;
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
