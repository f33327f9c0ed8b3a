// The engine's contract: bit-equal gradients for any thread count and
// capability, the policy recorded on nodes, PyTorch's errors, graph
// lifetime, grad vs backward, grad mode, anomaly detection.

#include <gtest/gtest.h>

#include <string>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

namespace ditto {
namespace {

// A Tensor's message contains `part`.
template <typename E, typename F>
void expect_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

struct Grads {
  uint64_t w, b, table;
};

// The issue's example: an MLP-like graph and an index_select chain.
Grads example_grads() {
  manual_seed(0);
  Tensor w = randn({784, 10}).requires_grad_();
  Tensor b = zeros({10}).requires_grad_();
  Tensor x = randn({64, 784});
  Tensor loss = (matmul(x, w) + b).sigmoid().pow(2).mean();
  loss.backward();
  Tensor table = randn({1000, 16}).requires_grad_();
  Tensor idx = randint(0, 1000, {4096});
  Tensor e;
  {
    DeterministicGuard det(true);
    e = index_select(table, 0, idx);
  }
  e.sum().backward();
  return {
      fingerprint(w.grad()), fingerprint(b.grad()), fingerprint(table.grad())};
}

TEST(Autograd, IssueExampleRuns) {
  manual_seed(0);
  Tensor w = randn({784, 10}).requires_grad_();
  Tensor b = zeros({10}).requires_grad_();
  Tensor x = randn({64, 784});
  Tensor loss = (matmul(x, w) + b).sigmoid().pow(2).mean();
  EXPECT_TRUE(loss.requires_grad());
  EXPECT_EQ(loss.grad_fn()->name(), "MeanBackward0");
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().sizes(), w.sizes());
  EXPECT_EQ(b.grad().sizes(), b.sizes());
  Tensor table = randn({1000, 16}).requires_grad_();
  Tensor idx = randint(0, 1000, {4096});
  Tensor e;
  {
    DeterministicGuard det(true);
    e = index_select(table, 0, idx);
  }
  e.sum().backward({}, /*retain_graph=*/true);
  auto g = autograd::grad({e.pow(2).sum()}, {table});
  ASSERT_EQ(g.size(), 1u);
  // d/dtable sum(e^2) = 2 * index_add(e): row r gets 2 * count(r) * table[r].
  Tensor counts = bincount(idx, {}, 1000).to(kFloat32).unsqueeze(1);
  EXPECT_TRUE(allclose(g[0], table.detach() * counts * 2.0, 1e-5, 1e-6));
  // table.grad (from e.sum()) is the count of each row.
  EXPECT_TRUE(equal(table.grad(), counts.expand({1000, 16})));
}

TEST(Autograd, SameBitsForEveryThreadCountAndCapability) {
  const int threads_before = get_num_threads();
  const CpuCapability capability_before = get_cpu_capability();
  set_num_threads(1);
  const Grads want = example_grads();
  for (int t : {1, 2, 3, 8}) {
    for (CpuCapability c : test::testable_capabilities()) {
      set_num_threads(t);
      set_cpu_capability(c);
      Grads got = example_grads();
      EXPECT_EQ(got.w, want.w) << t << " threads, " << cpu_capability_name(c);
      EXPECT_EQ(got.b, want.b) << t << " threads, " << cpu_capability_name(c);
      EXPECT_EQ(got.table, want.table)
          << t << " threads, " << cpu_capability_name(c);
    }
  }
  set_cpu_capability(capability_before);
  set_num_threads(threads_before);
}

// conv2d's weight gradient with the nondeterministic "fast" algorithm
// forced: under the deterministic mode (error) it raises; the backward
// obeys the mode recorded with the forward, not the one in force when
// backward() runs. Both ways.
TEST(Autograd, NodesRunUnderThePolicyTheirForwardSaw) {
  Tensor x = randn({2, 3, 6, 6});
  Tensor w = randn({4, 3, 3, 3}).requires_grad_();
  backends::conv::force_algorithm("backward_weight", "fast");
  Tensor recorded_det;
  {
    DeterministicGuard det(true);
    recorded_det = conv2d(x, w).sum();
  }
  EXPECT_TRUE(
      recorded_det.grad_fn()->next_functions()[0].node->policy().deterministic);
  expect_error<NondeterministicError>(
      [&] { recorded_det.backward(); }, "conv2d_backward_weight (fast)");
  Tensor recorded_free = conv2d(x, w).sum();
  {
    DeterministicGuard det(true);
    EXPECT_NO_THROW(recorded_free.backward());
  }
  backends::conv::force_algorithm("backward_weight", "");
  EXPECT_TRUE(w.grad().defined());
  EXPECT_FALSE(are_deterministic_algorithms_enabled());
}

// PyTorch 1.13's messages: a saved output names its producer, a saved
// input its current grad_fn, a leaf nothing.
TEST(Autograd, VersionCounterCatchesInPlaceChangesOfSavedTensors) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y = exp(x); // saves its output
  Tensor z = y.sum();
  y.add_(1.0);
  expect_error<ValueError>(
      [&] { z.backward(); },
      "one of the variables needed for gradient computation has been "
      "modified by an inplace operation: [torch.FloatTensor [3]], which is "
      "output 0 of ExpBackward0, is at version 1; expected version 0 "
      "instead");
  Tensor h = mul(x, 2.0);
  Tensor sq = (h * h).sum(); // saves h as an input
  h.add_(1.0);
  expect_error<ValueError>(
      [&] { sq.backward(); },
      "[torch.FloatTensor [3]], which is output 0 of AddBackward1, is at "
      "version 1; expected version 0 instead");
  Tensor w = randn({3}).requires_grad_();
  Tensor p = (x * w).sum();
  {
    autograd::NoGradGuard no_grad;
    x.add_(1.0);
  }
  expect_error<ValueError>(
      [&] { p.backward(); }, "[torch.FloatTensor [3]] is at version ");
}

TEST(Autograd, InPlaceOnALeafThatRequiresGradRaises) {
  Tensor x = randn({3}).requires_grad_();
  Tensor before = x.detach().clone();
  expect_error<ValueError>(
      [&] { x.add_(1.0); },
      "a leaf Variable that requires grad is being used in an in-place "
      "operation.");
  EXPECT_TRUE(equal(x.detach(), before)); // nothing written
  {
    autograd::NoGradGuard no_grad; // allowed (an optimizer step)
    x.add_(1.0);
  }
  EXPECT_TRUE(equal(x.detach(), before + 1.0));
}

TEST(Autograd, InPlaceOnANonLeafRebasesItsHistory) {
  Tensor x = randn({4}).requires_grad_();
  Tensor y = mul(x, 2.0);
  y.mul_(3.0);
  y.add_(x);
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  y.sum().backward();
  EXPECT_TRUE(allclose(x.grad(), full({4}, 7.0)));
}

TEST(Autograd, FreedGraphRaisesOnSecondBackward) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y = exp(x).sum();
  y.backward();
  // RuntimeError in Python, as torch's (ditto::Error, not ValueError).
  expect_error<Error>(
      [&] { y.backward(); },
      "Trying to backward through the graph a second time");
  try {
    y.backward();
  } catch (const ValueError&) {
    ADD_FAILURE()
        << "a ValueError (Python ValueError, not torch's RuntimeError)";
  } catch (const Error&) {
  }
}

TEST(Autograd, RetainGraphAllowsASecondBackwardAndGradsAccumulate) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y = exp(x).sum();
  y.backward({}, true);
  Tensor first = x.grad().clone();
  y.backward();
  EXPECT_TRUE(allclose(x.grad(), first * 2.0));
}

TEST(Autograd, GradDoesNotTouchDotGradAndMatchesBackward) {
  Tensor x = randn({5}).requires_grad_();
  Tensor w = randn({5}).requires_grad_();
  Tensor y = (x * w).tanh().sum();
  auto g = autograd::grad({y}, {x, w}, {}, true);
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  y.backward();
  EXPECT_EQ(fingerprint(g[0]), fingerprint(x.grad()));
  EXPECT_EQ(fingerprint(g[1]), fingerprint(w.grad()));
}

TEST(Autograd, GradOfANonLeafAndUnusedInputs) {
  Tensor x = randn({3}).requires_grad_();
  Tensor h = mul(x, 3.0);
  Tensor y = (h * h).sum();
  auto g = autograd::grad({y}, {h}, {}, true);
  EXPECT_TRUE(allclose(g[0], h.detach() * 2.0));
  Tensor unused = randn({2}).requires_grad_();
  expect_error<ValueError>(
      [&] { autograd::grad({y}, {unused}, {}, true); },
      "appears to not have been used in the graph");
  auto r = autograd::grad({y}, {unused}, {}, true, false, true);
  EXPECT_FALSE(r[0].defined());
}

TEST(Autograd, NoGradGuardRecordsNothing) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y;
  {
    autograd::NoGradGuard no_grad;
    y = exp(x);
    {
      autograd::EnableGradGuard enable;
      EXPECT_TRUE(exp(x).requires_grad());
    }
  }
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  // Error (Python's RuntimeError, as torch's), not a ValueError.
  try {
    y.sum().backward();
    ADD_FAILURE() << "backward of a tensor without grad ran";
  } catch (const ValueError&) {
    ADD_FAILURE() << "a ValueError: torch raises RuntimeError";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("does not require grad"), std::string::npos);
  }
}

TEST(Autograd, ImplicitGradientOnlyForScalars) {
  Tensor x = randn({3}).requires_grad_();
  expect_error<ValueError>(
      [&] { exp(x).backward(); },
      "grad can be implicitly created only for scalar outputs");
  exp(x).backward(ones({3}));
  EXPECT_TRUE(allclose(x.grad(), exp(x.detach())));
}

TEST(Autograd, LeafMetadata) {
  Tensor x = randn({2, 2});
  EXPECT_FALSE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  x.requires_grad_();
  Tensor y = x.t();
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.grad_fn()->name(), "TBackward0");
  ASSERT_EQ(y.grad_fn()->next_functions().size(), 1u);
  EXPECT_EQ(
      y.grad_fn()->next_functions()[0].node->name(),
      "torch::autograd::AccumulateGrad");
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_THROW(randint(0, 3, {2}).requires_grad_(), ValueError);
  expect_error<ValueError>(
      [&] { y.requires_grad_(false); },
      "you can only change requires_grad flags of leaf variables");
}

TEST(Autograd, RetainGradKeepsANonLeafsGradient) {
  Tensor x = randn({3}).requires_grad_();
  Tensor h = mul(x, 2.0);
  h.retain_grad();
  Tensor m = mul(x, 5.0); // no retain_grad
  (h * h + m).sum().backward();
  EXPECT_TRUE(allclose(h.grad(), h.detach() * 2.0));
  EXPECT_FALSE(m.grad().defined());
}

TEST(Autograd, GradientsSumInAFixedOrderOverManyUses) {
  // x feeds many consumers: its gradient is their sum in recorded order,
  // the same bits on every run and thread count.
  auto run = [](int threads) {
    set_num_threads(threads);
    manual_seed(5);
    Tensor x = randn({100000}).requires_grad_();
    Tensor acc = zeros({100000});
    for (int i = 0; i < 20; ++i) {
      acc = acc + x * (0.1 * i) + pow(x, double(i % 3)) * 0.3;
    }
    acc.sum().backward();
    return fingerprint(x.grad());
  };
  const int before = get_num_threads();
  const uint64_t want = run(1);
  EXPECT_EQ(run(1), want);
  EXPECT_EQ(run(2), want);
  EXPECT_EQ(run(3), want);
  set_num_threads(before);
}

TEST(Autograd, AnomalyDetectionNamesTheNode) {
  Tensor x = tensor<float>({0.0f, 1.0f}).requires_grad_();
  // sqrt's backward divides the incoming 0 by 2 * sqrt(0): 0 / 0 = NaN.
  Tensor z = (sqrt(x) * 0.0).sum();
  autograd::DetectAnomalyGuard anomaly;
  expect_error<ValueError>(
      [&] { z.backward(); },
      "Function 'SqrtBackward0' returned nan values in its 0th output (the "
      "backward of the forward op 'sqrt')");
}

TEST(Autograd, MissingDerivativeRaisesInsteadOfLosingTheGradient) {
  Tensor a = randn({5, 3}).requires_grad_();
  Tensor q = std::get<0>(linalg::qr(mul(a, 2.0)));
  EXPECT_TRUE(q.requires_grad());
  expect_error<ValueError>(
      [&] { q.sum().backward(); },
      "the derivative for 'linalg::qr' is not implemented");
}

TEST(Autograd, TraceSeesBackwardOps) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y = exp(x).sum();
  std::vector<std::string> forward, backward;
  trace::set_hook([&](const trace::Event& e) {
    (e.phase == trace::Phase::kBackward ? backward : forward)
        .emplace_back(e.op);
  });
  y.backward();
  trace::set_hook({});
  EXPECT_TRUE(forward.empty());
  // The implicit gradient of the loss (Tensor::new_ones, a declared op
  // traced under its name), then the nodes in reverse order.
  ASSERT_EQ(backward.size(), 3u);
  EXPECT_EQ(backward[0], "new_ones");
  EXPECT_EQ(backward[1], "sum_backward");
  EXPECT_EQ(backward[2], "exp_backward");
}

TEST(Autograd, StaleViewAndInPlaceOnViewRaise) {
  Tensor x = randn({4}).requires_grad_();
  Tensor h = mul(x, 1.0);
  Tensor v = h.narrow(0, 0, 2);
  expect_error<ValueError>(
      [&] { v.mul_(2.0); },
      "an in-place operation on a view of a tensor that requires grad");
  h.add_(1.0);
  expect_error<ValueError>(
      [&] { exp(v); }, "used after its base was modified in place");
}

// autograd::queue_callback (what DistributedDataParallel uses): the
// callback runs once, after backward wrote every leaf's grad, in queue
// order; a backward that raises drops it; grad() does not run it.
TEST(Autograd, QueuedCallbacksRunOnceAtTheEndOfTheNextBackward) {
  Tensor w = ones({3}).requires_grad_();
  std::vector<std::string> seen;
  autograd::queue_callback([&] {
    seen.push_back(w.grad().defined() ? "first, grad written" : "first");
  });
  autograd::queue_callback([&] { seen.push_back("second"); });
  autograd::grad({mul(w, w).sum()}, {w});
  EXPECT_TRUE(seen.empty());
  mul(w, w).sum().backward();
  EXPECT_EQ(seen, (std::vector<std::string>{"first, grad written", "second"}));
  mul(w, w).sum().backward();
  EXPECT_EQ(seen.size(), 2u); // once
  autograd::queue_callback([&] { seen.push_back("dropped"); });
  Tensor bad = ones({2}).requires_grad_();
  EXPECT_THROW(mul(bad, bad).backward(), ValueError); // not one element
  mul(w, w).sum().backward();
  EXPECT_EQ(seen.size(), 2u);
}

} // namespace
} // namespace ditto
