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
  // circular (LibTorch's torch::pad takes it too): numpy's pad(mode='wrap')
  EXPECT_TRUE(
      equal(pad(a, {1, 2}, "circular"), tensor<float>({3, 1, 2, 3, 1, 2})));
  EXPECT_TRUE(equal(
      pad(m, {2, 1, 1, 0}, "circular"),
      tensor<float>({2, 3, 2, 3, 2, 0, 1, 0, 1, 0, 2, 3, 2, 3, 2}, {3, 5})));
  Tensor w = m.clone().requires_grad_(true);
  pad(w, {2, 1, 1, 0}, "circular").sum().backward();
  // column 0 appears 3 times, column 1 twice; row 0 once, row 1 twice
  EXPECT_TRUE(equal(w.grad(), tensor<float>({3, 2, 6, 4}, {2, 2})));
  EXPECT_THROW(pad(a, {4, 0}, "circular"), ValueError);
  // torch: 'Padding mode "reflect" doesn't take in value argument'
  EXPECT_THROW(pad(a, {1, 1}, "reflect", 2.0), ValueError);
  EXPECT_NO_THROW(pad(a, {1, 1}, "reflect", 0.0));
  EXPECT_THROW(pad(a, {1, 1}, "wrap"), ValueError);
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

// PyTorch's three forms; the gradient of each element sums its copies in
// their order (index_add_'s serial order: PyTorch's CPU bits), for any
// thread count; bad counts are refused before anything is written.
TEST(ShapeOps, RepeatInterleave) {
  Tensor m = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(equal(
      repeat_interleave(m, 2),
      tensor<float>({1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6})));
  EXPECT_TRUE(equal(
      repeat_interleave(m, tensor<int64_t>({1, 0, 2}), 1),
      tensor<float>({1, 3, 3, 4, 6, 6}, {2, 3})));
  EXPECT_TRUE(equal(
      m.repeat_interleave(tensor<int64_t>({2}), 0),
      tensor<float>({1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, {4, 3})));
  EXPECT_TRUE(equal(
      repeat_interleave(tensor<int64_t>({2, 0, 3})),
      tensor<int64_t>({0, 0, 2, 2, 2})));
  EXPECT_EQ(repeat_interleave(full({}, 7.0), 3, 0, 3).sizes(), Shape{3});

  // Copies whose float sum depends on the order: 1e8 + 1 - 1e8 ...
  const std::vector<float> g = {1e8f, 1, -1e8f, 1, 0.5f, 3};
  const std::vector<int64_t> reps = {4, 0, 2};
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor x = zeros({3}, kFloat32).requires_grad_(true);
    Tensor y = repeat_interleave(x, tensor<int64_t>(reps), 0);
    y.backward(tensor<float>(g));
    std::vector<float> want(3, 0.0f);
    for (size_t k = 0, i = 0; i < 3; ++i) {
      for (int64_t c = 0; c < reps[i]; ++c) {
        want[i] += g[k++];
      }
    }
    EXPECT_TRUE(equal(x.grad(), tensor<float>(want))) << threads;
  }
  set_num_threads(2);

  Tensor before = m.clone();
  EXPECT_THROW(repeat_interleave(m, tensor<int64_t>({1, -1}), 0), ValueError);
  EXPECT_THROW(repeat_interleave(m, tensor<int64_t>({1, 1}), 1), ValueError);
  EXPECT_THROW(repeat_interleave(m, tensor<float>({1, 1}), 0), TypeError);
  EXPECT_THROW(repeat_interleave(m, 2, 0, 5), ValueError);
  EXPECT_THROW(repeat_interleave(m, 2, 2), IndexError);
  EXPECT_THROW(repeat_interleave(m, -1), ValueError);
  EXPECT_TRUE(equal(m, before));
}
