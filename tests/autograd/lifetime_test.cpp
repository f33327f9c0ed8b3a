// Graphs at the edges (issue 32): backward passes on several threads into
// one leaf (run under ThreadSanitizer by `make tsan`), and graphs of a
// million ops freed without recursion.

#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "ditto/ditto.h"

namespace ditto {
namespace {

// Two threads, each with its own graph over the shared leaf w, call
// backward at the same moment. Every contribution arrives, and the result
// is the documented one: with .grad undefined before, c1 + c2 in either
// order (IEEE addition is commutative), so the same bits every time
// (docs/autograd.md, "Threads").
TEST(AutogradThreads, ConcurrentBackwardIntoOneLeafLosesNothing) {
  manual_seed(0);
  Tensor w = randn({257}).requires_grad_();
  const Tensor c1 = randn({257}), c2 = randn({257});
  const uint64_t expected = fingerprint(c1 + c2);
  const int kTries = 10000;
  std::barrier sync(2);
  int wrong = 0;
  auto worker = [&](const Tensor& c) {
    for (int i = 0; i < kTries; ++i) {
      Tensor loss = (w * c).sum(); // this thread's graph
      sync.arrive_and_wait(); // both graphs built
      loss.backward();
      sync.arrive_and_wait(); // both done
      if (&c == &c1) {
        wrong += fingerprint(w.grad()) != expected;
        w.mutable_grad() = Tensor();
      }
      sync.arrive_and_wait(); // .grad reset before the next round
    }
  };
  std::thread other(worker, std::cref(c2));
  worker(c1);
  other.join();
  EXPECT_EQ(wrong, 0) << "of " << kTries << " tries";
}

// A chain of 10^6 ops, built and freed in constant stack (100,000 ops used
// to take 1.48M recursive frames and overflow). Views: the cheapest framed
// op that records a node (a million of them take about 3 s).
TEST(AutogradLifetime, AMillionOpChainIsFreedWithoutRecursion) {
  Tensor x = ones({1}).requires_grad_();
  {
    Tensor y = x;
    for (int i = 0; i < 1000000; ++i) {
      y = y.view({1});
    }
    EXPECT_EQ(y.grad_fn()->name(), "view_backward");
  } // the chain is freed here, no backward having run
  EXPECT_FALSE(x.grad().defined());
}

// The same after a backward, with ops whose closures save tensors (mul):
// closures are freed iteratively too.
TEST(AutogradLifetime, ADeepChainIsFreedAfterBackward) {
  for (bool run_backward : {false, true}) {
    Tensor x = ones({1}).requires_grad_();
    {
      Tensor y = x;
      for (int i = 0; i < 200000; ++i) {
        y = i % 2 ? y * 1.0 : y + 1.0;
      }
      if (run_backward) {
        y.sum().backward();
      }
    }
    if (run_backward) {
      EXPECT_EQ(x.grad().item<float>(), 1.0f);
    } else {
      EXPECT_FALSE(x.grad().defined());
    }
  }
}

// A deep chain that ends in a node kept elsewhere frees only what it owns.
TEST(AutogradLifetime, FreeingAChainKeepsNodesHeldElsewhere) {
  Tensor x = ones({2}).requires_grad_();
  Tensor mid = x * 2.0;
  std::shared_ptr<autograd::Node> held = mid.grad_fn();
  {
    Tensor y = mid;
    for (int i = 0; i < 100000; ++i) {
      y = y + 1.0;
    }
  }
  ASSERT_TRUE(held);
  EXPECT_EQ(held->name(), "mul_backward");
  mid.sum().backward();
  EXPECT_EQ(x.grad().sum().item<float>(), 4.0f);
}

} // namespace
} // namespace ditto
