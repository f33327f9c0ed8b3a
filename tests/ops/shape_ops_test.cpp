#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ditto/ditto.h"

using namespace ditto;

TEST(ShapeOps, Cat) {
  Tensor a = tensor<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = tensor<float>({5, 6}, {1, 2});
  EXPECT_TRUE(equal(cat({a, b}), tensor<float>({1, 2, 3, 4, 5, 6}, {3, 2})));
  EXPECT_TRUE(
      equal(cat({a, a}, 1), tensor<float>({1, 2, 1, 2, 3, 4, 3, 4}, {2, 4})));
  EXPECT_THROW(cat({a, b}, 1), ValueError);
  EXPECT_THROW(cat({}), ValueError);
  // Empty 1-d tensors are skipped; dtypes promote.
  Tensor c = cat({zeros({0}), tensor<int32_t>({7, 8}).view({1, 2}), b});
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(c.sizes(), (Shape{2, 2}));
}

TEST(ShapeOps, Stack) {
  Tensor a = tensor<int64_t>({1, 2});
  Tensor b = tensor<int64_t>({3, 4});
  EXPECT_TRUE(equal(stack({a, b}), tensor<int64_t>({1, 2, 3, 4}, {2, 2})));
  EXPECT_TRUE(equal(stack({a, b}, 1), tensor<int64_t>({1, 3, 2, 4}, {2, 2})));
  EXPECT_THROW(stack({a, tensor<int64_t>({1})}), ValueError);
}

TEST(ShapeOps, Flip) {
  Tensor a = arange(0, 6, 1, kFloat32).view({2, 3});
  EXPECT_TRUE(equal(flip(a, {1}), tensor<float>({2, 1, 0, 5, 4, 3}, {2, 3})));
  EXPECT_TRUE(
      equal(flip(a, {0, 1}), tensor<float>({5, 4, 3, 2, 1, 0}, {2, 3})));
  EXPECT_TRUE(
      equal(flip(a.t(), {0}), tensor<float>({2, 5, 1, 4, 0, 3}, {3, 2})));
  EXPECT_THROW(flip(a, {0, 0}), ValueError);
}

TEST(ShapeOps, PadConstantAndReflect) {
  Tensor a = tensor<float>({1, 2, 3});
  EXPECT_TRUE(equal(pad(a, {2, 1}), tensor<float>({0, 0, 1, 2, 3, 0})));
  EXPECT_TRUE(
      equal(pad(a, {2, 1}, "reflect"), tensor<float>({3, 2, 1, 2, 3, 2})));
  EXPECT_TRUE(equal(pad(a, {-1, 1}, "constant", 9), tensor<float>({2, 3, 9})));
  Tensor m = arange(0, 4, 1, kFloat32).view({2, 2});
  // torch.nn.functional.pad(m, (1, 0, 0, 1), value=-1)
  EXPECT_TRUE(equal(
      pad(m, {1, 0, 0, 1}, "constant", -1),
      tensor<float>({-1, 0, 1, -1, 2, 3, -1, -1, -1}, {3, 3})));
  // torch.nn.functional.pad(m.view(1,2,2), (1,1,1,1), mode='reflect')
  EXPECT_TRUE(equal(
      pad(m.view({1, 2, 2}), {1, 1, 1, 1}, "reflect"),
      tensor<float>(
          {3, 2, 3, 2, 1, 0, 1, 0, 3, 2, 3, 2, 1, 0, 1, 0}, {1, 4, 4})));
  EXPECT_THROW(pad(a, {3, 0}, "reflect"), ValueError);
  EXPECT_THROW(pad(a, {1}), ValueError);
  EXPECT_THROW(pad(a, {1, 1}, "circular"), ValueError);
}

TEST(ShapeOps, SortIsStableWithNaNLast) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = tensor<float>({3, 1, nan, 1, 2});
  auto [v, i] = sort(a);
  EXPECT_TRUE(equal(i, tensor<int64_t>({1, 3, 4, 0, 2})));
  EXPECT_TRUE(std::isnan(v.data_ptr<float>()[4]));
  auto [dv, di] = sort(a, 0, true);
  EXPECT_TRUE(equal(di, tensor<int64_t>({2, 0, 4, 1, 3})));
  Tensor m = tensor<int32_t>({3, 1, 2, 0, 0, 5}, {2, 3});
  auto [mv, mi] = sort(m, 0);
  EXPECT_TRUE(equal(mv, tensor<int32_t>({0, 0, 2, 3, 1, 5}, {2, 3})));
  EXPECT_TRUE(equal(mi, tensor<int64_t>({1, 1, 0, 0, 0, 1}, {2, 3})));
}

TEST(ShapeOps, EqualAndAllclose) {
  Tensor a = tensor<float>({1, 2});
  EXPECT_TRUE(equal(a, tensor<float>({1, 2})));
  EXPECT_FALSE(equal(a, tensor<double>({1, 2})));
  EXPECT_FALSE(equal(a, tensor<float>({1, 2}, {2, 1})));
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(equal(tensor<float>({nan}), tensor<float>({nan})));
  EXPECT_TRUE(allclose(a, tensor<float>({1.000001f, 2})));
  EXPECT_FALSE(allclose(a, tensor<float>({1.1f, 2})));
  EXPECT_TRUE(
      allclose(tensor<float>({nan}), tensor<float>({nan}), 1e-5, 1e-8, true));
  EXPECT_FALSE(allclose(tensor<float>({nan}), tensor<float>({nan})));
}
