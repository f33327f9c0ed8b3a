// Graphs at the edges (issue 32): graphs of a million ops freed without
// recursion. (Backward passes on several threads into one leaf are in
// tests/parallel/concurrent_backward_test.cpp, which `make tsan` runs.)

#include <gtest/gtest.h>

#include "ditto/ditto.h"

namespace ditto {
namespace {

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
    EXPECT_EQ(y.grad_fn()->name(), "ViewBackward0");
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
      for (int i = 0; i < 100000; ++i) {
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
    for (int i = 0; i < 20000; ++i) {
      y = y + 1.0;
    }
  }
  ASSERT_TRUE(held);
  EXPECT_EQ(held->name(), "MulBackward1");
  mid.sum().backward();
  EXPECT_EQ(x.grad().sum().item<float>(), 4.0f);
}

} // namespace
} // namespace ditto
