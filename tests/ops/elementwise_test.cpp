#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ditto/ditto.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/cpu_kernels.h"
#include "test_util.h"

using namespace ditto;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
#include "golden.inc"

Tensor ones_of(Dtype d, bool zero_dim) {
  return zero_dim ? ones({}, d) : ones({3}, d);
}
} // namespace

TEST(Promotion, TensorTensorMatchesPyTorch) {
  for (const auto& c : kTensorTensorCases) {
    EXPECT_EQ(result_type(ones_of(c.a, c.a0), ones_of(c.b, c.b0)), c.r)
        << c.a << (c.a0 ? " 0-d" : "") << " with " << c.b
        << (c.b0 ? " 0-d" : "");
    // The op itself computes in that dtype (comparisons aside).
    if (c.r != kBool) {
      EXPECT_EQ(mul(ones_of(c.a, c.a0), ones_of(c.b, c.b0)).dtype(), c.r);
    }
  }
}

TEST(Promotion, TensorScalarMatchesPyTorch) {
  for (const auto& c : kTensorScalarCases) {
    EXPECT_EQ(result_type(ones_of(c.a, c.a0), c.b), c.r)
        << c.a << " with " << c.b;
  }
}

TEST(Elementwise, UnaryValuesMatchPyTorch) {
  const size_t n = std::size(kUnaryInputs);
  std::vector<float> in(kUnaryInputs, kUnaryInputs + n);
  Tensor x = tensor(in);
  struct Case {
    const char* name;
    Tensor (*fn)(const Tensor&);
    const double* expected;
  };
  Case cases[] = {
      {"exp", &ditto::exp, kUnary_exp},
      {"log", &ditto::log, kUnary_log},
      {"log1p", &ditto::log1p, kUnary_log1p},
      {"sqrt", &ditto::sqrt, kUnary_sqrt},
      {"tanh", &ditto::tanh, kUnary_tanh},
      {"sigmoid", &ditto::sigmoid, kUnary_sigmoid},
      {"relu", &ditto::relu, kUnary_relu},
      {"abs", &ditto::abs, kUnary_abs}};
  for (const Case& c : cases) {
    Tensor y = c.fn(x);
    ASSERT_EQ(y.dtype(), kFloat32);
    const float* p = y.data_ptr<float>();
    for (size_t i = 0; i < n; ++i) {
      double e = c.expected[i];
      double got = p[i];
      if (std::isnan(e)) {
        EXPECT_TRUE(std::isnan(got)) << c.name << "(" << in[i] << ")";
      } else if (e == 0.0) {
        // PyTorch flushes sigmoid(-100) to 0 where ditto keeps the
        // subnormal 3.8e-44.
        EXPECT_LE(std::abs(got), 1e-37) << c.name << "(" << in[i] << ")";
        EXPECT_EQ(std::signbit(got), std::signbit(e))
            << c.name << "(" << in[i] << ")";
      } else if (std::isinf(e)) {
        EXPECT_EQ(got, e) << c.name << "(" << in[i] << ")";
        EXPECT_EQ(std::signbit(got), std::signbit(e))
            << c.name << "(" << in[i] << ")";
      } else {
        EXPECT_NEAR(got, e, std::abs(e) * 4e-7 + 1e-38)
            << c.name << "(" << in[i] << ")";
      }
    }
  }
}

TEST(Elementwise, IntegerInputsGiveFloat32ForFloatingOps) {
  Tensor i = tensor<int32_t>({1, 4, 9});
  EXPECT_EQ(sqrt(i).dtype(), kFloat32);
  EXPECT_TRUE(equal(sqrt(i), tensor<float>({1, 2, 3})));
  EXPECT_EQ(exp(tensor<bool>({true})).dtype(), kFloat32);
  EXPECT_EQ(div(i, tensor<int32_t>({2, 2, 2})).dtype(), kFloat32);
  EXPECT_TRUE(equal(div(i, 2), tensor<float>({0.5f, 2, 4.5f})));
  EXPECT_EQ(abs(tensor<int64_t>({-3})).item<int64_t>(), 3);
  EXPECT_EQ(neg(i).dtype(), kInt32);
}

TEST(Elementwise, BroadcastingAndOperators) {
  Tensor a = arange(0, 6, 1, kFloat32).view({2, 3});
  Tensor b = tensor<float>({10, 20, 30});
  EXPECT_TRUE(equal(a + b, tensor<float>({10, 21, 32, 13, 24, 35}, {2, 3})));
  EXPECT_TRUE(equal(b - a, tensor<float>({10, 19, 28, 7, 16, 25}, {2, 3})));
  Tensor col = tensor<float>({1, 2}, {2, 1});
  EXPECT_EQ((a * col).sizes(), (Shape{2, 3}));
  EXPECT_TRUE(equal(2 * col + 1, tensor<float>({3, 5}, {2, 1})));
  EXPECT_TRUE(equal(1 / col, tensor<float>({1, 0.5f}, {2, 1})));
  EXPECT_TRUE(equal(-col, tensor<float>({-1, -2}, {2, 1})));
  EXPECT_EQ((col.view({2}) + b.narrow(0, 0, 1)).sizes(), (Shape{2}));
  Tensor outer = col + b; // {2,1} with {3}
  EXPECT_EQ(outer.sizes(), (Shape{2, 3}));
  EXPECT_THROW(a + tensor<float>({1, 2}), ValueError);
}

TEST(Elementwise, ComparisonsGiveBool) {
  Tensor a = tensor<float>({1, 2, kNaN});
  Tensor lt2 = a < 2;
  EXPECT_EQ(lt2.dtype(), kBool);
  EXPECT_TRUE(equal(lt2, tensor<bool>({true, false, false})));
  EXPECT_TRUE(equal(a != a, tensor<bool>({false, false, true})));
  EXPECT_TRUE(equal(
      ge(a, tensor<int64_t>({1, 3, 0})), tensor<bool>({true, false, false})));
  EXPECT_TRUE(equal(tensor<int32_t>({5}) == 5.0, tensor<bool>({true})));
}

TEST(Elementwise, IntegerArithmeticWraps) {
  Tensor a = tensor<int32_t>({INT32_MAX, INT32_MIN});
  EXPECT_TRUE(equal(a + 1, tensor<int32_t>({INT32_MIN, INT32_MIN + 1})));
  EXPECT_TRUE(equal(neg(a), tensor<int32_t>({-INT32_MAX, INT32_MIN})));
  Tensor u = tensor<uint8_t>({250});
  EXPECT_EQ((u + tensor<uint8_t>({10})).item<int>(), 4);
  EXPECT_TRUE(equal(
      tensor<bool>({true, false}) + tensor<bool>({true, true}),
      tensor<bool>({true, true})));
}

TEST(Elementwise, Pow) {
  EXPECT_TRUE(
      equal(pow(tensor<int64_t>({2, 3, -2}), 3), tensor<int64_t>({8, 27, -8})));
  EXPECT_THROW(pow(tensor<int64_t>({2}), -1), ValueError);
  Tensor f = pow(
      tensor<float>({2, 9, -8, 0}), tensor<float>({0.5f, 0.5f, 1.0f / 3, 0}));
  EXPECT_NEAR(f.data_ptr<float>()[0], 1.41421356f, 1e-6);
  EXPECT_EQ(f.data_ptr<float>()[1], 3.0f);
  EXPECT_TRUE(std::isnan(f.data_ptr<float>()[2]));
  EXPECT_EQ(f.data_ptr<float>()[3], 1.0f);
  EXPECT_EQ(pow(tensor<float>({2}), 10).item<float>(), 1024.0f);
  EXPECT_EQ(pow(tensor<int32_t>({2}), 0.5).dtype(), kFloat32);
}

TEST(Elementwise, ClampAndWhere) {
  Tensor a = tensor<float>({-2, 0.5f, 3, kNaN});
  Tensor c = clamp(a, 0, 1);
  EXPECT_EQ(c.data_ptr<float>()[0], 0.0f);
  EXPECT_EQ(c.data_ptr<float>()[1], 0.5f);
  EXPECT_EQ(c.data_ptr<float>()[2], 1.0f);
  EXPECT_TRUE(std::isnan(c.data_ptr<float>()[3]));
  EXPECT_EQ(clamp(a, std::nullopt, 0).data_ptr<float>()[2], 0.0f);
  EXPECT_THROW(clamp(a, std::nullopt, std::nullopt), ValueError);
  EXPECT_EQ(clamp(tensor<int32_t>({5}), 0, 2.5).dtype(), kFloat32);
  Tensor i = tensor<int32_t>({-5, 5});
  i.clamp_(0, 3);
  EXPECT_TRUE(equal(i, tensor<int32_t>({0, 3})));
  EXPECT_THROW(i.clamp_(0.5, 1), TypeError);

  Tensor w = where(a > 0, a, 0.0);
  EXPECT_TRUE(equal(w.narrow(0, 0, 3), tensor<float>({0, 0.5f, 3})));
  EXPECT_THROW(where(a, a, a), TypeError);
  Tensor m = where(
      tensor<bool>({true, false}, {2, 1}),
      tensor<int64_t>({1, 2, 3}),
      tensor<int64_t>({-1}));
  EXPECT_TRUE(equal(m, tensor<int64_t>({1, 2, 3, -1, -1, -1}, {2, 3})));
}

TEST(Elementwise, MaximumMinimumPropagateNaN) {
  Tensor a = tensor<float>({1, kNaN, 3});
  Tensor b = tensor<float>({2, 0, kNaN});
  Tensor mx = maximum(a, b);
  EXPECT_EQ(mx.data_ptr<float>()[0], 2.0f);
  EXPECT_TRUE(std::isnan(mx.data_ptr<float>()[1]));
  EXPECT_TRUE(std::isnan(mx.data_ptr<float>()[2]));
  EXPECT_EQ(minimum(a, b).data_ptr<float>()[0], 1.0f);
}

TEST(Elementwise, InPlace) {
  Tensor a = ones({2, 3});
  Tensor base = a;
  a.add_(tensor<float>({1, 2, 3})).mul_(2).sub_(1.0).div_(tensor<float>({1}));
  EXPECT_TRUE(equal(base, tensor<float>({3, 5, 7, 3, 5, 7}, {2, 3})));
  // In-place on a view writes through to the base.
  Tensor b = zeros({3, 3});
  b.select(1, 1).add_(5);
  EXPECT_EQ(sum(b).item<float>(), 15.0f);
  // Int tensor += float: PyTorch refuses, and nothing changes.
  Tensor i = tensor<int64_t>({1, 2});
  EXPECT_THROW(i.add_(0.5), TypeError);
  EXPECT_THROW(i.div_(2), TypeError);
  EXPECT_TRUE(equal(i, tensor<int64_t>({1, 2})));
  // The output must already have the broadcast shape.
  Tensor s = zeros({3});
  EXPECT_THROW(s.add_(zeros({2, 3})), ValueError);
  // float32 += float64 computes in float64 and rounds once.
  Tensor f = tensor<float>({1});
  f.add_(tensor<double>({1e-8}));
  EXPECT_EQ(f.dtype(), kFloat32);
  // Overlapping in-place: a += a.t() reads the old values.
  Tensor m = arange(0, 4, 1, kFloat32).view({2, 2});
  m.add_(m.t());
  EXPECT_TRUE(equal(m, tensor<float>({0, 3, 3, 6}, {2, 2})));
  EXPECT_THROW(zeros({1}).expand({3}).add_(1), ValueError);
  EXPECT_THROW(tensor<bool>({true}).sub_(tensor<bool>({true})), TypeError);
}

TEST(Elementwise, StridedInputsMatchContiguous) {
  Tensor a = mul(arange(0, 4000, 1, kFloat32).view({40, 100}), 0.01);
  Tensor t = a.t(); // non-contiguous
  Tensor expected = exp(t.contiguous());
  EXPECT_TRUE(equal(exp(t), expected));
  Tensor s = a.slice(1, 1, 100, 3);
  EXPECT_TRUE(equal(sigmoid(s), sigmoid(s.contiguous())));
}

TEST(Elementwise, ExpSpecialValues) {
  Tensor y = exp(tensor<double>({-kInf, kInf, kNaN, 0.0, -800.0, 710.0}));
  const double* p = y.data_ptr<double>();
  EXPECT_EQ(p[0], 0.0);
  EXPECT_EQ(p[1], kInf);
  EXPECT_TRUE(std::isnan(p[2]));
  EXPECT_EQ(p[3], 1.0);
  EXPECT_EQ(p[4], 0.0);
  EXPECT_EQ(p[5], kInf);
}

// Note [pow with a scalar exponent]: PyTorch's formulas for 2, 3, -2, 0.5,
// -0.5, -1 and 1, forward and backward (grad * (e * x^(e-1))).
TEST(Elementwise, PowScalarFastPathsArePyTorchsFormulas) {
  using test::same_bits;
  manual_seed(5);
  for (Dtype dt : {kFloat32, kFloat64}) {
    Tensor x = randn({1000}, dt);
    Tensor p = abs(x);
    EXPECT_TRUE(same_bits(pow(x, 2), mul(x, x)));
    EXPECT_TRUE(same_bits(pow(x, 3), mul(mul(x, x), x)));
    EXPECT_TRUE(same_bits(pow(x, -2), div(ones_like(x), mul(x, x))));
    EXPECT_TRUE(same_bits(pow(p, 0.5), sqrt(p)));
    EXPECT_TRUE(same_bits(pow(p, -0.5), div(ones_like(p), sqrt(p))));
    EXPECT_TRUE(same_bits(pow(x, -1), div(ones_like(x), x)));
    EXPECT_TRUE(same_bits(pow(x, 1), x));
    EXPECT_TRUE(same_bits(x.pow(2.0), mul(x, x)));
    // Other exponents keep the general pow.
    EXPECT_TRUE(same_bits(pow(p, 1.5), pow(p, full({}, 1.5, dt))));
    for (double e : {3.0, 2.0, 0.5, -1.0, 1.5, 0.0}) {
      Tensor xi = p.clone().requires_grad_();
      Tensor g = randn({1000}, dt);
      pow(xi, e).backward(g);
      Tensor want = e == 0.0 ? zeros_like(p) : mul(g, mul(pow(p, e - 1), e));
      EXPECT_TRUE(same_bits(xi.grad(), want)) << e;
    }
    Tensor xi = p.clone().requires_grad_();
    pow(xi, 3).backward(ones_like(p));
    EXPECT_TRUE(same_bits(xi.grad(), mul(mul(p, p), 3.0)));
  }
  // As PyTorch's sqrt: pow(-0, 0.5) = -0, pow(-inf, 0.5) = NaN.
  Tensor z = tensor<float>({-0.0f, -std::numeric_limits<float>::infinity()});
  Tensor r = pow(z, 0.5);
  EXPECT_TRUE(std::signbit(r[0].item<float>()));
  EXPECT_TRUE(std::isnan(r[1].item<float>()));
  // Integer tensors keep integer pow.
  EXPECT_EQ(pow(tensor<int64_t>({3}), 2).dtype(), kInt64);
  EXPECT_EQ(pow(tensor<int64_t>({3}), 2).item<int64_t>(), 9);
  EXPECT_EQ(pow(tensor<int64_t>({4}), 0.5).item<float>(), 2.0f);
}

// Note [Device kernel slots]: the CPU's ops reach their loops through the
// CPU's slots, as a device's reach its kernels; a slot called directly
// gives the op's bits, a 0-dim operand read as a scalar.
TEST(Elementwise, TheCpuSlotsGiveTheOpsBits) {
  const kernels::DeviceKernels& k = detail::device_slots(ones({1}), "test");
#define DITTO_TEST_CPU_SLOT(name) EXPECT_NE(k.name, nullptr) << #name;
  DITTO_CPU_SLOTS(DITTO_TEST_CPU_SLOT)
#undef DITTO_TEST_CPU_SLOT
  manual_seed(5);
  const Tensor a = randn({3, 5}), b = randn({3, 5});
  const Tensor two = scalar_tensor(2.0, kFloat32);
  Tensor out = empty({3, 5});
  k.binary(int(kernels::BinaryOp::Mul), -1, false, false, out, a, two, "mul");
  EXPECT_TRUE(equal(out, mul(a, 2.0)));
  k.where(out, gt(a, b), a, two, "where");
  EXPECT_TRUE(equal(out, where(gt(a, b), a, 2.0)));
  k.clamp(out, a, &two, nullptr, "clamp");
  EXPECT_TRUE(equal(out, clamp(a, 2.0, std::nullopt)));
  Tensor sums = empty({3});
  k.reduce(kernels::ReduceKind::Mean, sums, a, 3, 5, "mean");
  EXPECT_TRUE(equal(sums, mean(a, {1})));
}
