#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ditto/ditto.h"

using namespace ditto;

TEST(Factories, ZerosOnesFull) {
  EXPECT_EQ(sum(ones({3, 4})).item<float>(), 12.0f);
  EXPECT_EQ(sum(zeros({5}, kInt32)).item<int64_t>(), 0);
  Tensor f = full({2}, 7);
  EXPECT_EQ(f.dtype(), kInt64);
  EXPECT_EQ(full({2}, 0.5).dtype(), kFloat32);
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_TRUE(full({1}, 3, kFloat64).item_scalar().is_floating());
  EXPECT_EQ(zeros_like(f).dtype(), kInt64);
  EXPECT_EQ(ones_like(f, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(full_like(f, 9).data_ptr<int64_t>()[1], 9);
}

TEST(Factories, ArangeMatchesPyTorch) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_TRUE(equal(a, tensor<int64_t>({0, 1, 2, 3, 4})));
  Tensor b = arange(0.0, 1.0, 0.25);
  EXPECT_EQ(b.dtype(), kFloat32);
  EXPECT_TRUE(equal(b, tensor<float>({0, 0.25f, 0.5f, 0.75f})));
  EXPECT_EQ(arange(10, 0, -3).numel(), 4);
  // torch.arange(1, 2.5, 0.5) has 3 elements.
  EXPECT_EQ(arange(1, 2.5, 0.5).numel(), 3);
  EXPECT_THROW(arange(0, 5, 0), ValueError);
  EXPECT_THROW(arange(5, 0, 1), ValueError);
}

TEST(Factories, LinspaceEndpointsExact) {
  Tensor l = linspace(0, 1, 5);
  EXPECT_TRUE(equal(l, tensor<float>({0, 0.25f, 0.5f, 0.75f, 1})));
  Tensor m = linspace(-3.3, 7.7, 11, kFloat64);
  EXPECT_EQ(m.data_ptr<double>()[0], -3.3);
  EXPECT_EQ(m.data_ptr<double>()[10], 7.7);
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  EXPECT_THROW(linspace(0, 1, -1), ValueError);
}

TEST(Factories, Eye) {
  Tensor e = eye(2, 3, kInt32);
  EXPECT_TRUE(equal(e, tensor<int32_t>({1, 0, 0, 0, 1, 0}, {2, 3})));
  EXPECT_EQ(sum(eye(4)).item<float>(), 4.0f);
}

TEST(Factories, FromBlobDoesNotCopy) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(data, {2, 3}, kFloat32);
  data[4] = 50;
  EXPECT_EQ(t.data_ptr<float>()[4], 50.0f);
  t.fill_(0.0);
  EXPECT_EQ(data[0], 0.0f);
  bool deleted = false;
  {
    Tensor u = from_blob(data, {6}, kFloat32, [&](void*) { deleted = true; });
  }
  EXPECT_TRUE(deleted);
  Tensor s = from_blob(data, {2, 2}, {1, 2}, kFloat32);
  EXPECT_EQ(s.strides(), (Shape{1, 2}));
}

TEST(Factories, TensorCopiesAndChecksCount) {
  std::vector<double> v = {1, 2, 3, 4};
  Tensor t = tensor(v, {2, 2});
  v[0] = 100;
  EXPECT_EQ(t.data_ptr<double>()[0], 1.0);
  EXPECT_THROW(tensor<float>({1, 2, 3}, {2, 2}), ValueError);
  EXPECT_EQ(tensor<float>({1.5f}, Shape{}).dim(), 0);
}

TEST(Factories, EmptyIsFilledOnlyInDeterministicMode) {
  use_deterministic_algorithms(true);
  Tensor f = empty({3});
  Tensor i = empty({2}, kInt32);
  Tensor b = empty({2}, kBool);
  Tensor s = empty_strided({2, 2}, {1, 2}, kInt64);
  EXPECT_TRUE(std::isnan(f.data_ptr<float>()[2]));
  EXPECT_EQ(i.data_ptr<int32_t>()[1], std::numeric_limits<int32_t>::max());
  EXPECT_TRUE(b.data_ptr<bool>()[0]);
  EXPECT_EQ(s.contiguous().data_ptr<int64_t>()[3], INT64_MAX);
  determinism::set_fill_uninitialized_memory(false);
  Tensor g = empty({3});
  g.fill_(1.0); // not filled: just must be writable
  determinism::set_fill_uninitialized_memory(true);
  use_deterministic_algorithms(false);
  EXPECT_EQ(empty({4}).numel(), 4);
  EXPECT_EQ(empty_like(f).dtype(), kFloat32);
}
