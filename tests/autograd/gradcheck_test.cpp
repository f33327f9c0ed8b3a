// Every differentiable op against central finite differences in float64:
// several shapes, broadcasting, non-contiguous and zero-size inputs.

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

// Values away from 0 (for log, div, pow, sqrt).
Tensor positive(const Shape& shape, uint64_t seed) {
  Generator g;
  g.manual_seed(seed);
  return rand(shape, kFloat64, g).add_(0.5).requires_grad_();
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

TEST(Gradcheck, BinaryOpsWithBroadcasting) {
  Tensor a = leaf({2, 3}, 1), b = leaf({3}, 2), c = leaf({2, 1}, 3);
  Tensor pa = positive({2, 3}, 4), pb = positive({1, 3}, 5);
  expect_gradcheck([](auto& in) { return add(in[0], in[1]); }, {a, b});
  expect_gradcheck([](auto& in) { return sub(in[0], in[1]); }, {a, c});
  expect_gradcheck([](auto& in) { return mul(in[0], in[1]); }, {a, c});
  expect_gradcheck([](auto& in) { return div(in[0], in[1]); }, {a, pb});
  expect_gradcheck([](auto& in) { return pow(in[0], in[1]); }, {pa, pb});
  expect_gradcheck([](auto& in) { return pow(in[0], 3); }, {a});
  expect_gradcheck([](auto& in) { return pow(in[0], 0.5); }, {pa});
  expect_gradcheck([](auto& in) { return maximum(in[0], in[1]); }, {a, b});
  expect_gradcheck([](auto& in) { return minimum(in[0], in[1]); }, {a, c});
  expect_gradcheck([](auto& in) { return 2.0 - in[0] / 3.0; }, {a});
  expect_gradcheck([](auto& in) { return 1.5 / in[0]; }, {pa});
}

TEST(Gradcheck, MixedDtypesGiveEachInputItsOwnDtype) {
  Tensor a = leaf({3}, 1);
  Tensor f = rand({3}).requires_grad_();
  Tensor y = mul(a, f); // float64
  y.sum().backward();
  EXPECT_EQ(f.grad().dtype(), kFloat32);
  EXPECT_EQ(a.grad().dtype(), kFloat64);
}

TEST(Gradcheck, UnaryOps) {
  Tensor a = leaf({2, 3}, 7), p = positive({4}, 8);
  for (auto f :
       {+[](const Tensor& t) { return neg(t); },
        +[](const Tensor& t) { return abs(t); },
        +[](const Tensor& t) { return exp(t); },
        +[](const Tensor& t) { return tanh(t); },
        +[](const Tensor& t) { return sigmoid(t); },
        +[](const Tensor& t) { return relu(t); }}) {
    expect_gradcheck([f](auto& in) { return f(in[0]); }, {a});
  }
  for (auto f :
       {+[](const Tensor& t) { return log(t); },
        +[](const Tensor& t) { return log1p(t); },
        +[](const Tensor& t) { return sqrt(t); }}) {
    expect_gradcheck([f](auto& in) { return f(in[0]); }, {p});
  }
  expect_gradcheck(
      [](auto& in) { return clamp(in[0], -0.3, 0.4); }, {leaf({6}, 9)});
  Tensor cond = gt(rand({2, 3}), 0.5);
  expect_gradcheck(
      [cond](auto& in) { return where(cond, in[0], in[1]); },
      {a, leaf({3}, 10)});
}

TEST(Gradcheck, Reductions) {
  Tensor a = leaf({2, 3, 4}, 11);
  expect_gradcheck([](auto& in) { return sum(in[0]); }, {a});
  expect_gradcheck([](auto& in) { return sum(in[0], {0, 2}); }, {a});
  expect_gradcheck([](auto& in) { return sum(in[0], {1}, true); }, {a});
  expect_gradcheck([](auto& in) { return mean(in[0]); }, {a});
  expect_gradcheck([](auto& in) { return mean(in[0], {-1}); }, {a});
  expect_gradcheck([](auto& in) { return prod(in[0]); }, {leaf({5}, 12)});
  expect_gradcheck([](auto& in) { return prod(in[0], 1); }, {a});
  expect_gradcheck([](auto& in) { return max(in[0]); }, {a});
  expect_gradcheck([](auto& in) { return min(in[0], 2).first; }, {a});
  expect_gradcheck([](auto& in) { return max(in[0], 0, true).first; }, {a});
  expect_gradcheck([](auto& in) { return sum_to_size(in[0], {3, 1}); }, {a});
}

TEST(Gradcheck, ProdWithZeros) {
  // One zero in a row: only it gets a gradient; two zeros: none.
  Tensor x = tensor<double>({2, 0, 3, 0, 0, 5}).view({2, 3}).requires_grad_();
  prod(x, 1).sum().backward();
  Tensor want = tensor<double>({0, 6, 0, 0, 0, 0}).view({2, 3});
  EXPECT_TRUE(equal(x.grad(), want)) << x.grad();
}

TEST(Gradcheck, ViewsAndShapes) {
  Tensor a = leaf({2, 3, 4}, 13);
  expect_gradcheck([](auto& in) { return in[0].view({6, 4}); }, {a});
  expect_gradcheck([](auto& in) { return in[0].reshape({4, -1}); }, {a});
  expect_gradcheck([](auto& in) { return in[0].permute({2, 0, 1}); }, {a});
  expect_gradcheck([](auto& in) { return in[0].transpose(0, 2); }, {a});
  expect_gradcheck([](auto& in) { return in[0].narrow(1, 1, 2); }, {a});
  expect_gradcheck([](auto& in) { return in[0].select(2, -1); }, {a});
  expect_gradcheck([](auto& in) { return in[0].slice(2, 0, 4, 2); }, {a});
  expect_gradcheck([](auto& in) { return in[0].unsqueeze(1); }, {a});
  expect_gradcheck([](auto& in) { return in[0].unsqueeze(0).squeeze(); }, {a});
  expect_gradcheck([](auto& in) { return in[0].expand({5, 2, 3, 4}); }, {a});
  expect_gradcheck([](auto& in) { return in[0].flatten(1); }, {a});
  expect_gradcheck(
      [](auto& in) {
        return in[0].as_strided({3, 3}, {1, 2}, 1);
      },
      {a});
  expect_gradcheck([](auto& in) { return flip(in[0], {0, 2}); }, {a});
  expect_gradcheck(
      [](auto& in) {
        return cat({in[0], in[1]}, 1);
      },
      {a, leaf({2, 1, 4}, 14)});
  expect_gradcheck(
      [](auto& in) {
        return stack({in[0], in[1]}, 1);
      },
      {a, leaf({2, 3, 4}, 15)});
  expect_gradcheck([](auto& in) { return pad(in[0], {1, 2, 0, 1}); }, {a});
  expect_gradcheck([](auto& in) { return pad(in[0], {-1, 1}); }, {a});
  expect_gradcheck(
      [](auto& in) {
        return pad(in[0], {2, 1, 1, 2}, "reflect");
      },
      {a});
  expect_gradcheck([](auto& in) { return sort(in[0], 1, true).first; }, {a});
  expect_gradcheck(
      [](auto& in) { return in[0].t().contiguous(); }, {leaf({3, 2}, 16)});
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

TEST(Gradcheck, IndexFamily) {
  Tensor a = leaf({5, 3}, 19);
  Tensor idx = tensor<int64_t>({4, 0, 4, 2});
  expect_gradcheck(
      [idx](auto& in) { return index_select(in[0], 0, idx); }, {a});
  Tensor gidx = tensor<int64_t>({0, 2, 1, 1, 0, 2}).view({2, 3});
  expect_gradcheck([gidx](auto& in) { return gather(in[0], 1, gidx); }, {a});
  expect_gradcheck(
      [](auto& in) {
        return take(in[0], tensor<int64_t>({14, 0, -1, 3}));
      },
      {a});
  Tensor mask = gt(rand({5, 3}), 0.4);
  expect_gradcheck(
      [mask](auto& in) { return masked_select(in[0], mask); }, {a});
  // In-place ops on a non-leaf: self's and source's gradients.
  Tensor src = leaf({4, 3}, 20);
  expect_gradcheck(
      [idx](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.index_add_(0, idx, in[1], 0.5);
      },
      {a, src});
  Tensor uniq = tensor<int64_t>({4, 0, 2});
  expect_gradcheck(
      [uniq](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.index_copy_(0, uniq, in[1]);
      },
      {a, leaf({3, 3}, 21)});
  expect_gradcheck(
      [gidx](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.scatter_add_(1, gidx, in[1]);
      },
      {a, leaf({2, 3}, 22)});
  // Unique per column: each src element lands once.
  Tensor sidx = tensor<int64_t>({0, 2, 1, 3, 4, 0}).view({2, 3});
  expect_gradcheck(
      [sidx](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.scatter_(0, sidx, in[1]);
      },
      {a, leaf({2, 3}, 23)});
  expect_gradcheck(
      [mask](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.masked_fill_(mask, 2.0);
      },
      {a});
  expect_gradcheck(
      [](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.put_(tensor<int64_t>({1, 7, 1}), in[1], true);
      },
      {a, leaf({3}, 24)});
  expect_gradcheck(
      [](auto& in) {
        Tensor t = mul(in[0], 1.0);
        return t.index_put_({tensor<int64_t>({0, 3})}, zeros({3}, kFloat64));
      },
      {a});
}

TEST(Gradcheck, AdvancedIndexAndScatterReduce) {
  Tensor a = leaf({4, 3, 2}, 50);
  expect_gradcheck(
      [](auto& in) {
        return in[0].index({tensor<int64_t>({3, 0, 3}), tensor<int64_t>({1})});
      },
      {a});
  expect_gradcheck(
      [](auto& in) {
        return in[0].index({Tensor(), gt(in[0].detach().sum({0, 2}), -9.0)});
      },
      {a});
  // src larger than the index: the rest of src gets no gradient.
  Tensor idx = tensor<int64_t>({1, 0, 2}).view({1, 3});
  expect_gradcheck(
      [idx](auto& in) {
        return zeros({3, 3}, kFloat64).scatter_add(0, idx, in[0]);
      },
      {leaf({2, 4}, 51)});
  Tensor ridx = tensor<int64_t>({0, 1, 0, 1, 1, 0}).view({3, 2});
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      autograd::GradcheckResult r = autograd::gradcheck(
          [&](const std::vector<Tensor>& in) {
            return in[0].scatter_reduce(0, ridx, in[1], reduce, include_self);
          },
          {leaf({2, 2}, 52), leaf({3, 2}, 53)});
      EXPECT_TRUE(r.ok) << reduce << " include_self " << include_self << ": "
                        << r.report;
    }
  }
}

TEST(Gradcheck, MatrixProducts) {
  Tensor a = leaf({3, 4}, 25), b = leaf({4, 2}, 26);
  expect_gradcheck([](auto& in) { return mm(in[0], in[1]); }, {a, b});
  expect_gradcheck(
      [](auto& in) { return bmm(in[0], in[1]); },
      {leaf({2, 3, 4}, 27), leaf({2, 4, 2}, 28)});
  // matmul's broadcasting cases: 1-d x 1-d, 1-d x 2-d, 2-d x 1-d, batched
  // with broadcast batch dims.
  expect_gradcheck(
      [](auto& in) { return matmul(in[0], in[1]); },
      {leaf({4}, 29), leaf({4}, 30)});
  expect_gradcheck(
      [](auto& in) { return matmul(in[0], in[1]); }, {leaf({4}, 31), b});
  expect_gradcheck(
      [](auto& in) { return matmul(in[0], in[1]); }, {a, leaf({4}, 32)});
  expect_gradcheck(
      [](auto& in) { return matmul(in[0], in[1]); },
      {leaf({2, 1, 3, 4}, 33), leaf({3, 4, 2}, 34)});
  expect_gradcheck(
      [](auto& in) { return matmul(in[0], in[1]); },
      {leaf({2, 3, 4}, 35), leaf({4}, 36)});
  expect_gradcheck(
      [](auto& in) { return addmm(in[0], in[1], in[2], 0.5, 2.0); },
      {leaf({2}, 37), a, b});
  expect_gradcheck(
      [](auto& in) { return linear(in[0], in[1], in[2]); },
      {leaf({5, 4}, 38), leaf({3, 4}, 39), leaf({3}, 40)});
}

TEST(Gradcheck, Convolutions) {
  Tensor x = leaf({2, 4, 5, 6}, 41), w = leaf({6, 2, 3, 2}, 42),
         b = leaf({6}, 43);
  expect_gradcheck(
      [](auto& in) {
        return conv2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 2}, 2);
      },
      {x, w, b});
  expect_gradcheck(
      [](auto& in) { return conv1d(in[0], in[1], in[2], {1}, {1}, {1}, 1); },
      {leaf({2, 3, 7}, 44), leaf({4, 3, 3}, 45), leaf({4}, 46)});
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
