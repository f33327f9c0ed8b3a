// Backward passes on several threads into one leaf (issue 32, defect 4):
// part of test_parallel, so that `make tsan` runs it under ThreadSanitizer.

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

} // namespace
} // namespace ditto
