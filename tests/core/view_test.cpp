#include <gtest/gtest.h>

#include "ditto/ditto.h"

using namespace ditto;

namespace {
Tensor iota(const Shape& shape) {
  return arange(0, checked_numel(shape, "test"), 1, kFloat32).view(shape);
}
} // namespace

TEST(Views, ViewSharesStorageAndWritesShowInBase) {
  Tensor a = iota({2, 6});
  Tensor v = a.view({3, 4});
  EXPECT_EQ(v.sizes(), (Shape{3, 4}));
  v.select(0, 1).fill_(-1.0);
  EXPECT_EQ(a.data_ptr<float>()[4], -1.0f);
  EXPECT_EQ(a.data_ptr<float>()[7], -1.0f);
  EXPECT_EQ(a.data_ptr<float>()[8], 8.0f);
  EXPECT_EQ(a.view({-1}).sizes(), (Shape{12}));
  EXPECT_EQ(a.view({4, -1}).sizes(), (Shape{4, 3}));
  EXPECT_THROW(a.view({5, -1}), ValueError);
  EXPECT_THROW(a.view({-1, -1}), ValueError);
}

TEST(Views, ViewOfIncompatibleStridesFailsReshapeCopies) {
  Tensor a = iota({3, 4});
  Tensor t = a.t();
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_THROW(t.view({12}), ValueError);
  Tensor r = t.reshape({12});
  EXPECT_TRUE(equal(r, tensor<float>({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11})));
  // reshape of a contiguous tensor is a view.
  Tensor r2 = a.reshape({2, 6});
  r2.fill_(0.0);
  EXPECT_EQ(a.data_ptr<float>()[11], 0.0f);
  // A view across dims of a transposed 3-d tensor that is still possible.
  Tensor b = iota({2, 3, 4}).permute({1, 0, 2});
  EXPECT_NO_THROW(b.view({3, 2, 2, 2}));
}

TEST(Views, PermuteTransposeT) {
  Tensor a = iota({2, 3, 4});
  Tensor p = a.permute({2, 0, 1});
  EXPECT_EQ(p.sizes(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Shape{1, 12, 4}));
  EXPECT_THROW(a.permute({0, 0, 1}), ValueError);
  EXPECT_THROW(a.permute({0, 1}), ValueError);
  EXPECT_EQ(a.transpose(0, -1).sizes(), (Shape{4, 3, 2}));
  EXPECT_THROW(a.t(), ValueError);
  EXPECT_EQ(iota({5}).t().sizes(), (Shape{5}));
  EXPECT_EQ(p.contiguous().data_ptr<float>()[1], 4.0f);
  EXPECT_EQ(p.contiguous().data_ptr<float>()[3], 12.0f);
}

TEST(Views, NarrowSliceSelect) {
  Tensor a = iota({4, 5});
  Tensor n = a.narrow(1, 1, 3);
  EXPECT_EQ(n.sizes(), (Shape{4, 3}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_THROW(a.narrow(1, 3, 3), IndexError);
  Tensor s = a.slice(1, 0, 5, 2);
  EXPECT_EQ(s.sizes(), (Shape{4, 3}));
  EXPECT_EQ(s.strides(), (Shape{5, 2}));
  EXPECT_TRUE(equal(s.select(0, 1), tensor<float>({5, 7, 9})));
  EXPECT_EQ(a.slice(0, -2).sizes(), (Shape{2, 5}));
  EXPECT_EQ(a.slice(0, 10, 20).sizes(), (Shape{0, 5}));
  EXPECT_THROW(a.slice(0, 0, 4, 0), ValueError);
  EXPECT_EQ(a.select(1, -1).sizes(), (Shape{4}));
  EXPECT_EQ(a.select(1, -1).data_ptr<float>()[0], 4.0f);
  EXPECT_THROW(a.select(2, 0), IndexError);
  EXPECT_THROW(a.select(0, -5), IndexError);
}

TEST(Views, UnsqueezeSqueezeFlatten) {
  Tensor a = iota({2, 1, 3});
  EXPECT_EQ(a.squeeze().sizes(), (Shape{2, 3}));
  EXPECT_EQ(a.squeeze(1).sizes(), (Shape{2, 3}));
  EXPECT_EQ(a.squeeze(0).sizes(), (Shape{2, 1, 3}));
  EXPECT_EQ(a.unsqueeze(0).sizes(), (Shape{1, 2, 1, 3}));
  EXPECT_EQ(a.unsqueeze(-1).sizes(), (Shape{2, 1, 3, 1}));
  EXPECT_THROW(a.unsqueeze(5), IndexError);
  EXPECT_EQ(a.flatten().sizes(), (Shape{6}));
  EXPECT_EQ(iota({2, 3, 4, 5}).flatten(1, 2).sizes(), (Shape{2, 12, 5}));
  EXPECT_EQ(full({}, 1.0).flatten().sizes(), (Shape{1}));
}

TEST(Views, ExpandBroadcastsWithZeroStride) {
  Tensor a = tensor<float>({1, 2, 3});
  Tensor e = a.expand({2, 3});
  EXPECT_EQ(e.strides(), (Shape{0, 1}));
  EXPECT_TRUE(equal(e.contiguous(), tensor<float>({1, 2, 3, 1, 2, 3}, {2, 3})));
  EXPECT_EQ(a.view({3, 1}).expand({-1, 4}).sizes(), (Shape{3, 4}));
  EXPECT_THROW(a.expand({2, 4}), ValueError);
  EXPECT_THROW(a.expand({3}).expand({2}), ValueError);
}

TEST(Views, AsStridedChecksBounds) {
  Tensor a = iota({6});
  Tensor w = a.as_strided({2, 2}, {1, 2}, 1);
  EXPECT_TRUE(equal(w.contiguous(), tensor<float>({1, 3, 2, 4}, {2, 2})));
  EXPECT_THROW(a.as_strided({3, 3}, {3, 1}, 0), ValueError);
}

TEST(Views, ZeroDimTensors) {
  Tensor s = full({}, 4.0);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.unsqueeze(0).sizes(), (Shape{1}));
  EXPECT_EQ(s.reshape({1, 1}).sizes(), (Shape{1, 1}));
  EXPECT_THROW(s.select(0, 0), IndexError);
}
