// gradcheck itself, and the gradients that need more than one op's samples.
// Every op's gradcheck (broadcasting, non-contiguous, zero-size inputs) is
// the op suite's, over the records (tests/ops/op_suite_test.cpp).

#include <gtest/gtest.h>

#include "ditto/ditto.h"

namespace ditto {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor leaf(const Shape& shape, uint64_t seed, double lo = -1.0) {
  Generator g;
  g.manual_seed(seed);
  return rand(shape, kFloat64, g).mul_(1.0 - lo).add_(lo).requires_grad_();
}

void expect_gradcheck(const Fn& fn, const std::vector<Tensor>& inputs) {
  autograd::GradcheckResult r = autograd::gradcheck(fn, inputs);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(Gradcheck, CanFail) {
  // A deliberately wrong backward must be caught: detach part of the graph
  // so the analytical gradient misses a term.
  Tensor x = leaf({3}, 1);
  autograd::GradcheckResult r = autograd::gradcheck(
      [](const std::vector<Tensor>& in) { return mul(in[0], in[0].detach()); },
      {x});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("Jacobian mismatch"), std::string::npos);
}

TEST(Gradcheck, MixedDtypesGiveEachInputItsOwnDtype) {
  Tensor a = leaf({3}, 1);
  Tensor f = rand({3}).requires_grad_();
  Tensor y = mul(a, f); // float64
  y.sum().backward();
  EXPECT_EQ(f.grad().dtype(), kFloat32);
  EXPECT_EQ(a.grad().dtype(), kFloat64);
}

TEST(Gradcheck, ProdWithZeros) {
  // One zero in a row: only it gets a gradient; two zeros: none.
  Tensor x = tensor<double>({2, 0, 3, 0, 0, 5}).view({2, 3}).requires_grad_();
  prod(x, 1).sum().backward();
  Tensor want = tensor<double>({0, 6, 0, 0, 0, 0}).view({2, 3});
  EXPECT_TRUE(equal(x.grad(), want)) << x.grad();
}

TEST(Gradcheck, NonContiguousAndZeroSizeInputs) {
  Tensor a = leaf({4, 3}, 17);
  expect_gradcheck([](auto& in) { return mul(in[0].t(), in[0].t()); }, {a});
  expect_gradcheck([](auto& in) { return exp(in[0].slice(0, 0, 4, 2)); }, {a});
  Tensor empty = leaf({0, 3}, 18);
  Tensor s = sum(mul(empty, 2.0));
  s.backward();
  EXPECT_EQ(empty.grad().sizes(), Shape({0, 3}));
}

TEST(Gradcheck, DropoutUsesTheSavedMask) {
  Tensor x = leaf({64}, 47);
  Generator g;
  g.manual_seed(3);
  Tensor y = dropout(x, 0.5, true, g);
  y.sum().backward();
  // Where an element was dropped its gradient is 0; else 1 / (1 - p).
  Tensor kept = ne(y, 0.0);
  EXPECT_TRUE(equal(x.grad(), where(kept, full({64}, 2.0, kFloat64), 0.0)));
}

} // namespace
} // namespace ditto
