#include <gtest/gtest.h>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

using namespace ditto;

namespace {

// The serial definition: for i in order, self[index[i]] += source[i].
Tensor index_add_reference(
    Tensor self,
    const Tensor& index,
    const Tensor& src) {
  Tensor out = self.clone();
  Tensor idx = index.to(kInt64);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    Tensor row = out.select(0, idx.data_ptr<int64_t>()[i]);
    row.copy_(add(row, src.select(0, i)));
  }
  return out;
}

} // namespace

class IndexOps : public ::testing::TestWithParam<int64_t> {
 protected:
  void TearDown() override {
    use_deterministic_algorithms(false);
    set_num_threads(saved_);
  }
  int saved_ = get_num_threads();
};

TEST_P(IndexOps, IndexAddDeterministicEqualsSerialForEveryThreadCount) {
  const int64_t dest_rows = GetParam(); // 3: heavy duplicates, 5000: few
  Generator g;
  g.manual_seed(1);
  Tensor src = randn({20000, 16}, kFloat32, g);
  Tensor index = randint(0, dest_rows, {20000}, kInt64, g);
  Tensor base = randn({dest_rows, 16}, kFloat32, g);
  Tensor expected = index_add_reference(base, index, src);
  use_deterministic_algorithms(true);
  for (int threads : test::test_thread_counts()) {
    set_num_threads(threads);
    Tensor t = base.clone();
    t.index_add_(0, index, src);
    EXPECT_TRUE(equal(t, expected)) << threads << " threads";
  }
  // The fast variant is correct up to rounding.
  use_deterministic_algorithms(false);
  set_num_threads(2);
  Tensor fast = base.clone();
  fast.index_add_(0, index, src);
  EXPECT_TRUE(allclose(fast, expected, 1e-4, 1e-3));
}

INSTANTIATE_TEST_SUITE_P(Contention, IndexOps, ::testing::Values(3, 5000));

TEST(IndexOps2, IndexAddAlongAnotherDimAndIntegers) {
  use_deterministic_algorithms(true);
  Tensor t = zeros({2, 4});
  Tensor src = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  t.index_add_(1, tensor<int64_t>({3, 0, 3}), src);
  EXPECT_TRUE(equal(t, tensor<float>({2, 0, 0, 4, 5, 0, 0, 10}, {2, 4})));
  Tensor i = zeros({3}, kInt64);
  i.index_add_(0, tensor<int32_t>({0, 0, 2}), tensor<int64_t>({5, 6, 7}));
  EXPECT_TRUE(equal(i, tensor<int64_t>({11, 0, 7})));
  use_deterministic_algorithms(false);
}

TEST(IndexOps2, IndexAddBadInputChangesNothing) {
  Tensor t = zeros({5, 2});
  Tensor src = ones({3, 2});
  try {
    t.index_add_(0, tensor<int64_t>({0, 7, 1}), src);
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_STREQ(
        e.what(),
        "[index_add_] index 7 is out of bounds for dimension 0 with size 5");
  }
  EXPECT_THROW(t.index_add_(0, tensor<int64_t>({0, -1, 1}), src), IndexError);
  EXPECT_THROW(t.index_add_(0, tensor<float>({0, 1, 1}), src), TypeError);
  EXPECT_THROW(t.index_add_(0, tensor<int64_t>({0, 1}), src), ValueError);
  EXPECT_THROW(
      t.index_add_(0, tensor<int64_t>({0, 1, 2}), ones({3, 3})), ValueError);
  EXPECT_THROW(
      t.index_add_(0, tensor<int64_t>({0, 1, 2}), ones({3, 2}, kFloat64)),
      TypeError);
  EXPECT_THROW(t.index_add_(2, tensor<int64_t>({0}), src), IndexError);
  EXPECT_EQ(sum(t).item<float>(), 0.0f);
}

TEST(IndexOps2, ScatterAddDeterministicEqualsSerial) {
  Generator g;
  g.manual_seed(2);
  Tensor src = randn({3000, 40}, kFloat32, g);
  Tensor index = randint(0, 7, {3000, 40}, kInt64, g);
  Tensor base = randn({7, 50}, kFloat32, g);
  // Serial definition, row-major over the index.
  Tensor expected = base.clone();
  float* e = expected.data_ptr<float>();
  const float* s = src.data_ptr<float>();
  const int64_t* ip = index.data_ptr<int64_t>();
  for (int64_t i = 0; i < 3000; ++i) {
    for (int64_t j = 0; j < 40; ++j) {
      e[ip[i * 40 + j] * 50 + j] += s[i * 40 + j];
    }
  }
  use_deterministic_algorithms(true);
  for (int threads : test::test_thread_counts()) {
    set_num_threads(threads);
    Tensor t = base.clone();
    t.scatter_add_(0, index, src);
    EXPECT_TRUE(equal(t, expected)) << threads << " threads";
  }
  use_deterministic_algorithms(false);
  Tensor fast = base.clone();
  fast.scatter_add_(0, index, src);
  EXPECT_TRUE(allclose(fast, expected, 1e-4, 1e-3));
  // Along dim 1, against PyTorch's documented example.
  Tensor z = zeros({3, 5});
  z.scatter_add_(1, tensor<int64_t>({0, 1, 2, 0}, {1, 4}), ones({2, 5}));
  EXPECT_TRUE(equal(z.select(0, 0), tensor<float>({2, 1, 1, 0, 0})));
  EXPECT_THROW(
      z.scatter_add_(1, tensor<int64_t>({5}, {1, 1}), ones({1, 1})),
      IndexError);
  EXPECT_THROW(
      z.scatter_add_(0, tensor<int64_t>({0, 0, 0, 0}, {4, 1}), ones({2, 5})),
      ValueError);
}

TEST(IndexOps2, GatherAndIndexSelect) {
  Tensor a = arange(0, 12, 1, kFloat32).view({3, 4});
  EXPECT_TRUE(equal(
      index_select(a, 0, tensor<int64_t>({2, 0, 2})),
      tensor<float>({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}, {3, 4})));
  EXPECT_TRUE(equal(
      index_select(a, 1, tensor<int32_t>({3, 1})),
      tensor<float>({3, 1, 7, 5, 11, 9}, {3, 2})));
  // torch.gather(t, 1, [[0, 0], [1, 0]]) on [[1, 2], [3, 4]] = [[1, 1], [4, 3]]
  Tensor t = tensor<int64_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(equal(
      gather(t, 1, tensor<int64_t>({0, 0, 1, 0}, {2, 2})),
      tensor<int64_t>({1, 1, 4, 3}, {2, 2})));
  EXPECT_TRUE(equal(
      gather(a, 0, tensor<int64_t>({2, 1, 0, 2}, {1, 4})),
      tensor<float>({8, 5, 2, 11}, {1, 4})));
  EXPECT_THROW(index_select(a, 0, tensor<int64_t>({3})), IndexError);
  EXPECT_THROW(gather(a, 0, tensor<int64_t>({0}, {1})), ValueError);
}

TEST(IndexOps2, AppearInTheRegistry) {
  auto ops = determinism::registered_ops();
  int found = 0;
  for (const auto& op : ops) {
    if (op.name == "index_add_" || op.name == "scatter_add_") {
      EXPECT_TRUE(op.has_deterministic_alternative);
      ++found;
    }
  }
  EXPECT_EQ(found, 2);
}
