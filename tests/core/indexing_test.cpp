// LibTorch's x.index({...}) / index_put_ (ditto/core/indexing.h): what
// Python's x[...] reads and writes, on a tensor whose values are their
// positions, and the refusals.

#include <gtest/gtest.h>

#include <limits>

#include "ditto/ditto.h"
#include "tests/error_of.h"

using namespace ditto;
using namespace ditto::indexing;
using ditto::test::error_of;

namespace {

std::vector<int64_t> values(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<int64_t>(
      c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

Tensor positions() {
  return arange(24).reshape({2, 3, 4});
}

TEST(Indexing, BasicIndicesAreViews) {
  Tensor x = positions();
  EXPECT_EQ(x.index({1, 2, 3}).item<int64_t>(), 23);
  EXPECT_EQ(x.index({-1, -1, -1}).item<int64_t>(), 23);
  Tensor col = x.index({Slice(), 1});
  EXPECT_EQ(col.sizes(), (IntList{2, 4}));
  EXPECT_EQ(values(col), (std::vector<int64_t>{4, 5, 6, 7, 16, 17, 18, 19}));
  // x[..., ::2], x[1:, -2:], x[:, 1:3:2], x[0, 5:] (empty), x[None, 0].
  EXPECT_EQ(values(x.index({"...", Slice(None, None, 2)})).front(), 0);
  EXPECT_EQ(
      x.index({Ellipsis, Slice(None, None, 2)}).sizes(), (IntList{2, 3, 2}));
  EXPECT_EQ(
      values(x.index({Slice(1, None), Slice(-2, None), 0})),
      (std::vector<int64_t>{16, 20}));
  EXPECT_EQ(values(x.index({0, Slice(1, 3, 2), 1})), (std::vector<int64_t>{5}));
  EXPECT_EQ(x.index({0, Slice(5, None)}).sizes(), (IntList{0, 4}));
  EXPECT_EQ(x.index({None, 0}).sizes(), (IntList{1, 3, 4}));
  EXPECT_EQ(x.index({0, None, Ellipsis, None}).sizes(), (IntList{1, 3, 4, 1}));
  // Views: a write through one shows in x.
  Tensor v = x.index({1, Slice(), 0});
  v.fill_(-1);
  EXPECT_EQ(x.index({1, 2, 0}).item<int64_t>(), -1);
  // x[...] and x[()] are new views of the same storage.
  Tensor all = x.index({"..."});
  EXPECT_FALSE(all.is_same(x));
  EXPECT_EQ(all.data_ptr<int64_t>(), x.data_ptr<int64_t>());
  EXPECT_EQ(x.index({}).sizes(), x.sizes());
}

TEST(Indexing, AdvancedIndicesAndBooleans) {
  Tensor x = positions();
  // x[[1, 0], 2] and x[:, [0, 2], [1, 3]].
  EXPECT_EQ(
      values(x.index({tensor({1, 0}), 2})),
      (std::vector<int64_t>{20, 21, 22, 23, 8, 9, 10, 11}));
  EXPECT_EQ(
      values(x.index({Slice(), tensor({0, 2}), tensor({1, 3})})),
      (std::vector<int64_t>{1, 11, 13, 23}));
  // A mask over two dims; x[0, 0][x[0, 0] > 1].
  Tensor row = x.index({0, 0});
  EXPECT_EQ(values(row.index({row > 1})), (std::vector<int64_t>{2, 3}));
  Tensor m = x.index({0}) > 9;
  EXPECT_EQ(values(x.index({0}).index({m})), (std::vector<int64_t>{10, 11}));
  // x[True] adds a dim, x[False] an empty one; an undefined tensor is ':'.
  EXPECT_EQ(x.index({true}).sizes(), (IntList{1, 2, 3, 4}));
  EXPECT_EQ(x.index({false}).sizes(), (IntList{0, 2, 3, 4}));
  EXPECT_EQ(
      values(x.index({Tensor(), tensor({2})})), values(x.index({Slice(), 2})));
  // Gradients flow through the index.
  Tensor w = ones({3, 4}, dtype(kFloat32).requires_grad(true));
  w.index({tensor({0, 0, 2}), Slice(1, 3)}).sum().backward();
  Tensor g = w.grad();
  EXPECT_EQ(g.index({0, 1}).item<float>(), 2.0f);
  EXPECT_EQ(g.index({2, 2}).item<float>(), 1.0f);
  EXPECT_EQ(g.index({1, 1}).item<float>(), 0.0f);
}

TEST(Indexing, IndexPutWritesWhatIndexReads) {
  Tensor y = zeros({3, 4}, kInt64);
  y.index_put_({Slice(), 0}, 1);
  y.index_put_({1}, full({4}, 2, kInt64));
  y.index_put_({tensor({0, 2}), Slice(1, 3)}, 5);
  y.index_put_({"...", -1}, tensor<int64_t>({7, 8, 9}));
  EXPECT_EQ(
      values(y), (std::vector<int64_t>{1, 5, 5, 7, 2, 2, 2, 8, 1, 5, 5, 9}));
  y.index_put_({y > 4}, 0);
  EXPECT_EQ(values(y).back(), 0);
  EXPECT_EQ(y.sum().item<int64_t>(), 8);
  // The vector form with accumulate is still there.
  y.index_put_({tensor({0, 0})}, ones({2, 4}, kInt64), true);
  EXPECT_EQ(values(y.index({0})), (std::vector<int64_t>{3, 2, 2, 2}));
}

// Slices at the ends of int64: clamped to the dim, never overflowing.
TEST(Indexing, HostileSliceBounds) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t small = std::numeric_limits<int64_t>::min();
  Tensor x = arange(5);
  EXPECT_EQ(values(x.index({Slice(1, None, big)})), (std::vector<int64_t>{1}));
  EXPECT_EQ(
      values(x.index({Slice(small, big, 2)})), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(x.index({Slice(big, small)}).numel(), 0);
  EXPECT_EQ(x.index({Slice(big - 1, big)}).numel(), 0);
  EXPECT_EQ(
      values(x.index({Slice(-big, 2, big - 1)})), (std::vector<int64_t>{0}));
  EXPECT_THROW(x.index({big}), IndexError);
  EXPECT_THROW(x.index({small}), IndexError);
  Tensor y = zeros({5}, kInt64);
  y.index_put_({Slice(4, None, big)}, 7);
  EXPECT_EQ(values(y), (std::vector<int64_t>{0, 0, 0, 0, 7}));
}

TEST(Indexing, RefusalsNameTheProblemAndChangeNothing) {
  Tensor x = positions();
  EXPECT_NE(
      error_of<IndexError>([&] {
        x.index({0, 0, 0, 0});
      }).find("too many indices for tensor of dimension 3"),
      std::string::npos);
  EXPECT_NE(
      error_of<IndexError>([&] {
        x.index({"...", 0, Ellipsis});
      }).find("single ellipsis"),
      std::string::npos);
  EXPECT_NE(
      error_of<ValueError>([&] {
        x.index({Slice(0, 2, 0)});
      }).find("step must be greater than zero"),
      std::string::npos);
  EXPECT_NE(
      error_of<ValueError>([] { TensorIndex i(".."); }).find("\"..\""),
      std::string::npos);
  EXPECT_THROW(x.index({2}), IndexError);
  Tensor before = x.clone();
  EXPECT_ANY_THROW(x.index_put_({Slice(), 7}, 1));
  EXPECT_ANY_THROW(x.index_put_({0}, ones({5}, kInt64)));
  EXPECT_TRUE(equal(x, before));
  std::ostringstream s;
  s << Slice(1, None, 2) << " " << TensorIndex("...") << " " << TensorIndex(3);
  EXPECT_EQ(s.str(), "1:None:2 ... 3");
}

} // namespace
