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
        std::string(e.what()).find("rank 1: all_reduce sum float32 {4}"),
        std::string::npos)
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

// Issue 61 item 3 (Note [Collectives agree first]): a bad argument on one
// rank, a root or reduce op that differs, or another collective on some rank
// raises on every rank before data moves, and the ranks stay in step.
TEST(Distributed, ARankAloneWithBadArgumentsRaisesOnEveryRank) {
  if (dist::world_size() == 1) {
    GTEST_SKIP() << "needs two ranks (the 2- and 4-process runs check it)";
  }
  Tensor t = dist::rank() == 1 ? zeros({3}, kBool) : zeros({3});
  if (dist::rank() == 1) {
    EXPECT_THROW(dist::all_reduce(t), TypeError);
  } else {
    try {
      dist::all_reduce(t);
      FAIL() << "no error on " << dist::where();
    } catch (const ValueError& e) {
      EXPECT_NE(
          std::string(e.what()).find("rank(s) 1 refused"), std::string::npos)
          << e.what();
    }
  }
  Tensor f = zeros({2});
  const int root = dist::rank() == 1 ? 1 : 0;
  try {
    dist::broadcast(f, root);
    FAIL() << "different roots accepted on " << dist::where();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("rank 1: broadcast root 1 float32 {2}"),
        std::string::npos)
        << e.what();
  }
  Tensor g = ones({2});
  try {
    if (dist::rank() == 1) {
      dist::all_gather(g);
    } else {
      dist::all_reduce(g, dist::ReduceOp::Avg);
    }
    FAIL() << "different collectives accepted on " << dist::where();
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("rank 0: all_reduce avg float32 {2}"),
        std::string::npos)
        << e.what();
    EXPECT_NE(
        std::string(e.what()).find("rank 1: all_gather float32 {2}"),
        std::string::npos)
        << e.what();
  }
  // Still in step, and nothing was sent: g and f are as they were.
  EXPECT_EQ(g.sum().item<double>(), 2.0);
  Tensor ok = ones({3});
  dist::all_reduce(ok);
  EXPECT_EQ(ok.sum().item<double>(), 3.0 * dist::world_size());
  dist::barrier();
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

TEST(Distributed, ReduceScatterSumsEachRanksShareInRankOrder) {
  const int p = dist::world_size();
  for (const Shape& shape : {Shape{0}, Shape{1}, Shape{5, 3}, Shape{1001}}) {
    // Rank r's inputs[q] is input_of(r * 16 + q); rank q gets the rank-order
    // sum over r of those.
    std::vector<Tensor> inputs;
    for (int q = 0; q < p; ++q) {
      inputs.push_back(input_of(dist::rank() * 16 + q, shape, kFloat32));
    }
    Tensor out = zeros(shape);
    dist::reduce_scatter(out, inputs);
    Tensor want = input_of(dist::rank(), shape, kFloat32);
    for (int r = 1; r < p; ++r) {
      want = add(want, input_of(r * 16 + dist::rank(), shape, kFloat32));
    }
    EXPECT_TRUE(same_bits(out, want))
        << shape_str(shape) << " " << dist::where();
  }
  Tensor out = zeros({2});
  const std::vector<Tensor> too_many(size_t(p) + 1, zeros({2}));
  EXPECT_THROW(dist::reduce_scatter(out, too_many), ValueError);
  const std::vector<Tensor> wrong_shape(size_t(p), zeros({3}));
  EXPECT_THROW(dist::reduce_scatter(out, wrong_shape), ValueError);
}

// Micro-batch j's values: a float32 vector, a float64 matrix and an empty
// tensor.
std::vector<Tensor> values_of(int64_t j) {
  return {
      input_of(int(j), {7}, kFloat32),
      input_of(int(j) + 100, {3, 2}, kFloat64),
      zeros({0})};
}

TEST(Distributed, MicroBatchSumHasOneProcesssBitsForAnyWorldSizeAndK) {
  const int p = dist::world_size();
  for (int64_t k = p; k <= 9; ++k) {
    train::MicroBatchSum one(k); // this process alone, all k micro-batches
    for (int64_t j = 0; j < k; ++j) {
      one.add(j, values_of(j));
    }
    std::vector<Tensor> want = one.reduce();
    train::MicroBatchSum sum(k, dist::process_group());
    for (int64_t j = sum.begin(); j < sum.end(); ++j) {
      sum.add(j, values_of(j));
    }
    std::vector<Tensor> got = sum.reduce();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(same_bits(got[i], want[i]))
          << "k " << k << " value " << i << " " << dist::where();
    }
  }
  EXPECT_THROW(train::MicroBatchSum(p - 1, dist::process_group()), ValueError);
}

// BatchNorm's running statistics under micro-batches: whichever rank runs
// each micro-batch, every rank ends the step with the statistics of one
// process running the k micro-batches in order, without deferral.
TEST(Distributed, BatchNormRunningStatsAreReplayedInMicroBatchOrder) {
  const int64_t k = 5;
  auto micro = [](int64_t j) {
    return input_of(int(300 + j), {6, 3}, kFloat32);
  };
  nn::BatchNorm1d sequential(3), replayed(3);
  for (int64_t step = 0; step < 2; ++step) {
    for (int64_t j = 0; j < k; ++j) {
      sequential->forward(micro(step * k + j));
    }
    train::MicroBatchSum sum(k, dist::process_group());
    const Tensor before = replayed->running_mean.clone();
    for (int64_t j = sum.begin(); j < sum.end(); ++j) {
      Tensor y = replayed->forward(micro(step * k + j));
      // Deferred: the buffers change only when the step is reduced.
      EXPECT_TRUE(same_bits(replayed->running_mean, before));
      sum.add(j, {y.sum()});
    }
    sum.reduce();
    EXPECT_TRUE(same_bits(replayed->running_mean, sequential->running_mean))
        << "step " << step << " " << dist::where();
    EXPECT_TRUE(same_bits(replayed->running_var, sequential->running_var))
        << "step " << step << " " << dist::where();
  }
}

// DDP on a linear model: rank r trains on batch r of each step; after
// backward every rank holds the tree average over the ranks, which each
// rank also computes alone from every rank's batch.
struct Net : nn::Module {
  Net() : Module("Net") {}
  nn::Linear fc = register_module("fc", nn::Linear(5, 3));
  Tensor forward(const Tensor& x) {
    return fc->forward(x);
  }
};

Tensor batch_of(int64_t step, int64_t r) {
  return input_of(int(500 + step * 64 + r), {4, 5}, kFloat32);
}

Tensor loss_of(const Tensor& y) {
  return mul(y, y).sum();
}

TEST(Distributed, DataParallelBroadcastsAndAveragesInTheTree) {
  const int p = dist::world_size();
  manual_seed(uint64_t(40 + dist::rank())); // each rank starts elsewhere
  auto net = std::make_shared<Net>();
  manual_seed(40);
  Net reference; // rank 0's start
  dist::DistributedDataParallel ddp(net);
  ASSERT_TRUE(same_bits(net->fc->weight, reference.fc->weight));
  ASSERT_TRUE(same_bits(net->fc->bias, reference.fc->bias));
  for (int64_t step = 0; step < 3; ++step) {
    // Step 1 accumulates an extra local batch first, under no_sync.
    if (step == 1) {
      auto guard = ddp.no_sync();
      loss_of(ddp(batch_of(step + 100, dist::rank()))).backward();
    }
    loss_of(ddp(batch_of(step, dist::rank()))).backward();
    train::MicroBatchSum sum(p);
    for (int r = 0; r < p; ++r) {
      if (step == 1) {
        loss_of(reference.forward(batch_of(step + 100, r))).backward();
      }
      loss_of(reference.forward(batch_of(step, r))).backward();
      sum.add(r, train::take_gradients(reference.parameters()));
    }
    std::vector<Tensor> total = sum.reduce();
    std::vector<Tensor> params = net->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(same_bits(params[i].grad(), div(total[i], double(p))))
          << "step " << step << " parameter " << i << " " << dist::where();
      params[i].mutable_grad() = Tensor();
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  dist::init();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
