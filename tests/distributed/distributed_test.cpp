// ditto::distributed's collectives under mpirun with 1, 2 and 4 processes
// (tests/CMakeLists.txt): each rank makes every rank's input from seeds, so
// it can check the result bit for bit against the sum in rank order.
#include <gtest/gtest.h>

#include <cstring>

#include "ditto/distributed/distributed.h"
#include "ditto/ditto.h"

namespace dist = ditto::distributed;
using namespace ditto;

namespace {

Tensor input_of(int r, const Shape& shape, Dtype dtype) {
  Generator g;
  g.manual_seed(1000 + uint64_t(r));
  if (is_floating(dtype)) {
    return randn(shape, dtype, g);
  }
  return randint(-50, 50, shape, dtype, g);
}

// ((x0 + x1) + x2) + ...
Tensor rank_order_sum(const Shape& shape, Dtype dtype) {
  Tensor acc = input_of(0, shape, dtype);
  for (int r = 1; r < dist::world_size(); ++r) {
    acc = add(acc, input_of(r, shape, dtype));
  }
  return acc;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    return false;
  }
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(
             x.raw_data(),
             y.raw_data(),
             size_t(x.numel()) * element_size(x.dtype())) == 0;
}

TEST(Distributed, RankAndWorld) {
  EXPECT_TRUE(dist::is_initialized());
  EXPECT_GE(dist::rank(), 0);
  EXPECT_LT(dist::rank(), dist::world_size());
  dist::barrier();
}

TEST(Distributed, AllReduceSumsInRankOrderOnAwkwardSizes) {
  for (Dtype dt : {kFloat32, kFloat64, kInt64, kInt32}) {
    for (const Shape& shape :
         {Shape{0}, Shape{1}, Shape{3}, Shape{7}, Shape{5, 3}, Shape{100003}}) {
      Tensor t = input_of(dist::rank(), shape, dt);
      dist::all_reduce(t);
      EXPECT_TRUE(same_bits(t, rank_order_sum(shape, dt)))
          << dtype_name(dt) << " " << shape_str(shape) << " " << dist::where();
    }
  }
}

TEST(Distributed, AllReduceKeepsAViewsLayout) {
  Tensor base = input_of(dist::rank(), {4, 6}, kFloat32);
  Tensor view = base.t(); // not contiguous: written back through the view
  dist::all_reduce(view);
  EXPECT_TRUE(same_bits(base, rank_order_sum({4, 6}, kFloat32)));
}

TEST(Distributed, AverageDividesTheRankOrderSum) {
  Tensor t = input_of(dist::rank(), {257}, kFloat64);
  dist::all_reduce(t, dist::ReduceOp::Avg);
  Tensor want =
      div(rank_order_sum({257}, kFloat64), double(dist::world_size()));
  EXPECT_TRUE(same_bits(t, want));
}

TEST(Distributed, BroadcastAndAllGather) {
  const int root = dist::world_size() - 1;
  Tensor t = input_of(dist::rank(), {9, 2}, kFloat32);
  dist::broadcast(t, root);
  EXPECT_TRUE(same_bits(t, input_of(root, {9, 2}, kFloat32)));
  std::vector<Tensor> all =
      dist::all_gather(input_of(dist::rank(), {5}, kInt64));
  ASSERT_EQ(int(all.size()), dist::world_size());
  for (int r = 0; r < dist::world_size(); ++r) {
    EXPECT_TRUE(same_bits(all[size_t(r)], input_of(r, {5}, kInt64)));
  }
}

TEST(Distributed, MismatchedShapesRaiseOnEveryRank) {
  if (dist::world_size() == 1) {
    GTEST_SKIP() << "needs two ranks (the 2- and 4-process runs check it)";
  }
  Tensor t = zeros({dist::rank() == 1 ? 4 : 3});
  try {
    dist::all_reduce(t);
    FAIL() << "no error on " << dist::where();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("rank 1: float32 {4}"), std::string::npos)
        << e.what();
  }
  Tensor u = zeros({2}, kFloat64);
  if (dist::rank() == 0) {
    u = zeros({2}, kFloat32);
  }
  EXPECT_THROW(dist::broadcast(u), ValueError);
  // The ranks are still in step: a collective after the errors works.
  Tensor ok = ones({3});
  dist::all_reduce(ok);
  EXPECT_EQ(ok.sum().item<double>(), 3.0 * dist::world_size());
}

TEST(Distributed, BadArgumentsRaiseBeforeAnythingIsSent) {
  Tensor b = zeros({2}, kBool);
  EXPECT_THROW(dist::all_reduce(b), TypeError);
  Tensor i = zeros({2}, kInt64);
  EXPECT_THROW(dist::all_reduce(i, dist::ReduceOp::Avg), TypeError);
  Tensor f = zeros({2});
  EXPECT_THROW(dist::broadcast(f, dist::world_size()), ValueError);
  EXPECT_THROW(dist::broadcast(f, -1), ValueError);
}

} // namespace

int main(int argc, char** argv) {
  dist::init();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
