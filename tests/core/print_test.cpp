// Tensor::to_string() against repr() of PyTorch 1.13. The expected strings
// come from tests/core/gen_print_golden.py; each case here builds the same
// tensor as the case of the same name there.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ditto/core/tensor.h"
#include "ditto/ops/factories.h"

namespace {

using ditto::Shape;
using ditto::Tensor;

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Checks both to_string() and operator<<.
void expect_repr(const Tensor& t, const std::string& expected) {
  EXPECT_EQ(t.to_string(), expected);
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), expected);
}

// Element i (row-major) is T(f(i)), f computed in double: the script's
// from_fn.
template <typename T>
Tensor from_fn(const Shape& shape, const std::function<double(int64_t)>& f) {
  int64_t n = 1;
  for (int64_t s : shape) {
    n *= s;
  }
  std::vector<T> values;
  for (int64_t i = 0; i < n; ++i) {
    values.push_back(T(f(i)));
  }
  return ditto::tensor<T>(values, shape);
}

TEST(PrintTest, Float32) {
  expect_repr(
      ditto::tensor<float>({0.4963f, 0.7682f, 0.0885f}),
      "tensor([0.4963, 0.7682, 0.0885])");
  expect_repr(
      ditto::tensor<float>({-1.5f, 2.25f, -0.125f, 3.0f}),
      "tensor([-1.5000,  2.2500, -0.1250,  3.0000])");
  expect_repr(
      ditto::tensor<float>({1234.5678f, 5.5f, -42.125f}),
      "tensor([1234.5677,    5.5000,  -42.1250])");
  expect_repr(
      ditto::tensor<float>({12345678.5f, 99999.25f}),
      "tensor([12345678.0000,    99999.2500])");
  // Fractions when the nonzero magnitudes span at most 1e3 and lie in
  // [1e-4, 1e8]; scientific notation otherwise.
  expect_repr(
      ditto::tensor<float>({1e-8f, 1e5f}), "tensor([1.0000e-08, 1.0000e+05])");
  expect_repr(
      ditto::tensor<float>({1e-5f, 2e-5f, -3e-5f}),
      "tensor([ 1.0000e-05,  2.0000e-05, -3.0000e-05])");
  expect_repr(
      ditto::tensor<float>({1.5e9f, 2.5f}), "tensor([1.5000e+09, 2.5000e+00])");
  // Round half to even, as Python's format does.
  expect_repr(
      ditto::tensor<float>({0.03125f, 0.5f}), "tensor([0.0312, 0.5000])");
  expect_repr(
      ditto::tensor<float>({1.03125f, 1e-6f}),
      "tensor([1.0312e+00, 1.0000e-06])");
}

TEST(PrintTest, Float32IntegerValued) {
  expect_repr(ditto::tensor<float>({1.0f, 2.0f}), "tensor([1., 2.])");
  expect_repr(
      ditto::tensor<float>({-1.0f, 0.0f, 100.0f}),
      "tensor([ -1.,   0., 100.])");
  expect_repr(
      ditto::tensor<float>({1.0f, 2000.0f}),
      "tensor([1.0000e+00, 2.0000e+03])");
  expect_repr(
      ditto::tensor<float>({3.0f, 1e9f}), "tensor([3.0000e+00, 1.0000e+09])");
  expect_repr(
      ditto::tensor<float>({1e8f, -5e7f}), "tensor([100000000., -50000000.])");
}

TEST(PrintTest, Float32NonFiniteAndZeros) {
  expect_repr(
      ditto::tensor<float>({kNan, kInf, -kInf}), "tensor([nan, inf, -inf])");
  expect_repr(
      ditto::tensor<float>({1.5f, kNan, -kInf, 0.0f}),
      "tensor([1.5000,    nan,   -inf, 0.0000])");
  expect_repr(
      ditto::tensor<float>({1.0f, kNan, -2.0f}), "tensor([ 1., nan, -2.])");
  expect_repr(
      ditto::tensor<float>({1e-6f, kInf, kNan, 1.0f}),
      "tensor([1.0000e-06,        inf,        nan, 1.0000e+00])");
  // A NaN with the sign bit set still prints as "nan".
  expect_repr(ditto::tensor<float>({1.5f, -kNan}), "tensor([1.5000,    nan])");
  expect_repr(ditto::tensor<float>({0.0f, 0.0f, 0.0f}), "tensor([0., 0., 0.])");
  expect_repr(
      ditto::tensor<float>({-0.0f, 0.0f, 1.5f}),
      "tensor([-0.0000, 0.0000, 1.5000])");
  expect_repr(ditto::tensor<float>({-0.0f, 1.0f}), "tensor([-0., 1.])");
}

TEST(PrintTest, LineWrapping) {
  expect_repr(
      from_fn<float>({30}, [](int64_t i) { return i * 1.5; }),
      "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
      "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
      "        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
      "        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])");
  expect_repr(
      from_fn<int64_t>({50}, [](int64_t i) { return double(i * i - 300); }),
      "tensor([-300, -299, -296, -291, -284, -275, -264, -251, -236, -219, -200, -179,\n"
      "        -156, -131, -104,  -75,  -44,  -11,   24,   61,  100,  141,  184,  229,\n"
      "         276,  325,  376,  429,  484,  541,  600,  661,  724,  789,  856,  925,\n"
      "         996, 1069, 1144, 1221, 1300, 1381, 1464, 1549, 1636, 1725, 1816, 1909,\n"
      "        2004, 2101])");
  expect_repr(
      from_fn<float>({3, 30}, [](int64_t i) { return i * 0.125; }),
      "tensor([[ 0.0000,  0.1250,  0.2500,  0.3750,  0.5000,  0.6250,  0.7500,  0.8750,\n"
      "          1.0000,  1.1250,  1.2500,  1.3750,  1.5000,  1.6250,  1.7500,  1.8750,\n"
      "          2.0000,  2.1250,  2.2500,  2.3750,  2.5000,  2.6250,  2.7500,  2.8750,\n"
      "          3.0000,  3.1250,  3.2500,  3.3750,  3.5000,  3.6250],\n"
      "        [ 3.7500,  3.8750,  4.0000,  4.1250,  4.2500,  4.3750,  4.5000,  4.6250,\n"
      "          4.7500,  4.8750,  5.0000,  5.1250,  5.2500,  5.3750,  5.5000,  5.6250,\n"
      "          5.7500,  5.8750,  6.0000,  6.1250,  6.2500,  6.3750,  6.5000,  6.6250,\n"
      "          6.7500,  6.8750,  7.0000,  7.1250,  7.2500,  7.3750],\n"
      "        [ 7.5000,  7.6250,  7.7500,  7.8750,  8.0000,  8.1250,  8.2500,  8.3750,\n"
      "          8.5000,  8.6250,  8.7500,  8.8750,  9.0000,  9.1250,  9.2500,  9.3750,\n"
      "          9.5000,  9.6250,  9.7500,  9.8750, 10.0000, 10.1250, 10.2500, 10.3750,\n"
      "         10.5000, 10.6250, 10.7500, 10.8750, 11.0000, 11.1250]])");
}

TEST(PrintTest, Float64) {
  expect_repr(
      ditto::tensor<double>({1.0, 2.0}),
      "tensor([1., 2.], dtype=torch.float64)");
  expect_repr(
      ditto::tensor<double>({0.1, 0.2, 1.0 / 3.0}),
      "tensor([0.1000, 0.2000, 0.3333], dtype=torch.float64)");
  expect_repr(
      ditto::tensor<double>({1.23456789012345, 1e-3}),
      "tensor([1.2346e+00, 1.0000e-03], dtype=torch.float64)");
  expect_repr(
      ditto::tensor<double>({1.5, 2.0, -3.0, 4.25}, {2, 2}),
      "tensor([[ 1.5000,  2.0000],\n"
      "        [-3.0000,  4.2500]], dtype=torch.float64)");
}

// The dtype suffix moves to its own line when the last line is too long,
// by PyTorch's count (which adds 2 to the line's length).
TEST(PrintTest, SuffixWrapping) {
  expect_repr(
      from_fn<double>({9}, [](int64_t i) { return i * 0.5 + 0.25; }),
      "tensor([0.2500, 0.7500, 1.2500, 1.7500, 2.2500, 2.7500, 3.2500, 3.7500, 4.2500],\n"
      "       dtype=torch.float64)");
  expect_repr(
      from_fn<double>({10}, [](int64_t i) { return i + 10.0; }),
      "tensor([10., 11., 12., 13., 14., 15., 16., 17., 18., 19.], dtype=torch.float64)");
  expect_repr(
      from_fn<double>({13}, [](int64_t i) { return i % 9 + 1.0; }),
      "tensor([1., 2., 3., 4., 5., 6., 7., 8., 9., 1., 2., 3., 4.],\n"
      "       dtype=torch.float64)");
  expect_repr(
      from_fn<int32_t>({13}, [](int64_t i) { return i + 10.0; }),
      "tensor([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22], dtype=torch.int32)");
}

TEST(PrintTest, IntegersAndBool) {
  expect_repr(ditto::tensor<int64_t>({1, 2, 3}), "tensor([1, 2, 3])");
  expect_repr(
      ditto::tensor<int64_t>({-5, 0, 123456789012}),
      "tensor([          -5,            0, 123456789012])");
  expect_repr(
      ditto::tensor<int64_t>(
          {std::numeric_limits<int64_t>::min(),
           std::numeric_limits<int64_t>::max()}),
      "tensor([-9223372036854775808,  9223372036854775807])");
  expect_repr(
      ditto::tensor<int32_t>({1, -2, 3}),
      "tensor([ 1, -2,  3], dtype=torch.int32)");
  expect_repr(
      from_fn<int32_t>({3, 4}, [](int64_t i) { return i * 7 - 20.0; }),
      "tensor([[-20, -13,  -6,   1],\n"
      "        [  8,  15,  22,  29],\n"
      "        [ 36,  43,  50,  57]], dtype=torch.int32)");
  expect_repr(
      ditto::tensor<uint8_t>({0, 255, 7}),
      "tensor([  0, 255,   7], dtype=torch.uint8)");
  expect_repr(ditto::tensor<bool>({true, false}), "tensor([ True, False])");
  expect_repr(ditto::tensor<bool>({true, true}), "tensor([True, True])");
  expect_repr(
      ditto::tensor<bool>({true, false, true, false, false, true}, {2, 3}),
      "tensor([[ True, False,  True],\n"
      "        [False, False,  True]])");
}

TEST(PrintTest, ZeroDim) {
  expect_repr(ditto::scalar_tensor(1.5, ditto::kFloat32), "tensor(1.5000)");
  expect_repr(ditto::scalar_tensor(3, ditto::kInt64), "tensor(3)");
  expect_repr(ditto::scalar_tensor(true, ditto::kBool), "tensor(True)");
  expect_repr(
      ditto::scalar_tensor(2.0, ditto::kFloat64),
      "tensor(2., dtype=torch.float64)");
  expect_repr(
      ditto::scalar_tensor(7, ditto::kInt32), "tensor(7, dtype=torch.int32)");
  expect_repr(
      ditto::scalar_tensor(200, ditto::kUInt8),
      "tensor(200, dtype=torch.uint8)");
  expect_repr(ditto::scalar_tensor(kNan, ditto::kFloat32), "tensor(nan)");
  expect_repr(ditto::scalar_tensor(-0.0, ditto::kFloat32), "tensor(-0.)");
  expect_repr(
      ditto::scalar_tensor(1e-10, ditto::kFloat32), "tensor(1.0000e-10)");
  expect_repr(ditto::scalar_tensor(100.0, ditto::kFloat32), "tensor(100.)");
  // Built from a value list with an empty shape too.
  expect_repr(ditto::tensor<float>({1.5f}, Shape{}), "tensor(1.5000)");
}

// Empty tensors name their size unless 1-d, and every dtype but float32.
TEST(PrintTest, Empty) {
  expect_repr(ditto::zeros({0}, ditto::kFloat32), "tensor([])");
  expect_repr(ditto::zeros({0, 3}, ditto::kFloat32), "tensor([], size=(0, 3))");
  expect_repr(
      ditto::zeros({0}, ditto::kInt64), "tensor([], dtype=torch.int64)");
  expect_repr(
      ditto::zeros({2, 0, 3}, ditto::kBool),
      "tensor([], size=(2, 0, 3), dtype=torch.bool)");
  expect_repr(
      ditto::zeros({0}, ditto::kUInt8), "tensor([], dtype=torch.uint8)");
  expect_repr(
      ditto::zeros({0, 3}, ditto::kFloat64),
      "tensor([], size=(0, 3), dtype=torch.float64)");
}

TEST(PrintTest, MultiDim) {
  expect_repr(
      ditto::tensor<float>({1.5f, -2.25f, 3.0f, 4.0f, 5.125f, -6.0f}, {2, 3}),
      "tensor([[ 1.5000, -2.2500,  3.0000],\n"
      "        [ 4.0000,  5.1250, -6.0000]])");
  expect_repr(
      ditto::tensor<float>({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2}),
      "tensor([[1., 2.],\n"
      "        [3., 4.]])");
  expect_repr(
      ditto::tensor<int64_t>({1, -20, 300, 4, 5, 6}, {3, 2}),
      "tensor([[  1, -20],\n"
      "        [300,   4],\n"
      "        [  5,   6]])");
  // Blank lines between blocks: one per dim below the second.
  expect_repr(
      from_fn<float>({2, 2, 3}, [](int64_t i) { return i * 0.5 - 2.75; }),
      "tensor([[[-2.7500, -2.2500, -1.7500],\n"
      "         [-1.2500, -0.7500, -0.2500]],\n"
      "\n"
      "        [[ 0.2500,  0.7500,  1.2500],\n"
      "         [ 1.7500,  2.2500,  2.7500]]])");
  expect_repr(
      from_fn<float>(
          {2, 3, 2}, [](int64_t i) { return double(i * i * i + 1) * 1e-5; }),
      "tensor([[[1.0000e-05, 2.0000e-05],\n"
      "         [9.0000e-05, 2.8000e-04],\n"
      "         [6.5000e-04, 1.2600e-03]],\n"
      "\n"
      "        [[2.1700e-03, 3.4400e-03],\n"
      "         [5.1300e-03, 7.3000e-03],\n"
      "         [1.0010e-02, 1.3320e-02]]])");
  expect_repr(
      from_fn<int64_t>({2, 1, 2, 2}, [](int64_t i) { return double(i); }),
      "tensor([[[[0, 1],\n"
      "          [2, 3]]],\n"
      "\n"
      "\n"
      "        [[[4, 5],\n"
      "          [6, 7]]]])");
}

// Views are read through their strides and offset.
TEST(PrintTest, StridedViews) {
  std::vector<float> base(12);
  for (int i = 0; i < 12; ++i) {
    base[size_t(i)] = float(i * 0.5);
  }
  expect_repr(
      ditto::from_blob(base.data(), {3, 2}, {1, 3}, ditto::kFloat32),
      "tensor([[0.0000, 1.5000],\n"
      "        [0.5000, 2.0000],\n"
      "        [1.0000, 2.5000]])");
  expect_repr(
      ditto::from_blob(base.data() + 1, {2, 2}, {6, 2}, ditto::kFloat32),
      "tensor([[0.5000, 1.5000],\n"
      "        [3.5000, 4.5000]])");
  std::vector<int32_t> row = {-1, 0, 1};
  expect_repr(
      ditto::from_blob(row.data(), {2, 3}, {0, 1}, ditto::kInt32),
      "tensor([[-1,  0,  1],\n"
      "        [-1,  0,  1]], dtype=torch.int32)");
}

TEST(PrintTest, Summarization) {
  // Exactly 1000 elements: printed in full.
  expect_repr(
      from_fn<uint8_t>({1000}, [](int64_t i) { return double(i % 10); }),
      "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7,\n"
      "        8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1,\n"
      "        2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5,\n"
      "        6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,\n"
      "        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3,\n"
      "        4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=torch.uint8)");
  expect_repr(
      from_fn<float>({1001}, [](int64_t i) { return i * 0.5; }),
      "tensor([  0.0000,   0.5000,   1.0000,  ..., 499.0000, 499.5000, 500.0000])");
  expect_repr(
      from_fn<float>({2000}, [](int64_t i) { return double(i); }),
      "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
      "        1.9990e+03])");
  expect_repr(
      from_fn<float>({2000}, [](int64_t i) { return i * 0.25 - 100; }),
      "tensor([-100.0000,  -99.7500,  -99.5000,  ...,  399.2500,  399.5000,\n"
      "         399.7500])");
  // The format is chosen from the printed elements only: the hidden 1e-9
  // does not switch to scientific notation.
  expect_repr(
      from_fn<float>(
          {2000}, [](int64_t i) { return i == 1000 ? 1e-9 : i * 0.25 + 1; }),
      "tensor([  1.0000,   1.2500,   1.5000,  ..., 500.2500, 500.5000, 500.7500])");
  expect_repr(
      from_fn<int64_t>({2000}, [](int64_t i) { return double(i); }),
      "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  expect_repr(
      from_fn<float>({40, 40}, [](int64_t i) { return i * 0.25 - 100; }),
      "tensor([[-100.0000,  -99.7500,  -99.5000,  ...,  -90.7500,  -90.5000,\n"
      "          -90.2500],\n"
      "        [ -90.0000,  -89.7500,  -89.5000,  ...,  -80.7500,  -80.5000,\n"
      "          -80.2500],\n"
      "        [ -80.0000,  -79.7500,  -79.5000,  ...,  -70.7500,  -70.5000,\n"
      "          -70.2500],\n"
      "        ...,\n"
      "        [ 270.0000,  270.2500,  270.5000,  ...,  279.2500,  279.5000,\n"
      "          279.7500],\n"
      "        [ 280.0000,  280.2500,  280.5000,  ...,  289.2500,  289.5000,\n"
      "          289.7500],\n"
      "        [ 290.0000,  290.2500,  290.5000,  ...,  299.2500,  299.5000,\n"
      "          299.7500]])");
  expect_repr(
      from_fn<int64_t>({40, 40}, [](int64_t i) { return double(i); }),
      "tensor([[   0,    1,    2,  ...,   37,   38,   39],\n"
      "        [  40,   41,   42,  ...,   77,   78,   79],\n"
      "        [  80,   81,   82,  ...,  117,  118,  119],\n"
      "        ...,\n"
      "        [1480, 1481, 1482,  ..., 1517, 1518, 1519],\n"
      "        [1520, 1521, 1522,  ..., 1557, 1558, 1559],\n"
      "        [1560, 1561, 1562,  ..., 1597, 1598, 1599]])");
  expect_repr(
      from_fn<int32_t>(
          {20, 20, 20}, [](int64_t i) { return double(i % 1000 - 500); }),
      "tensor([[[-500, -499, -498,  ..., -483, -482, -481],\n"
      "         [-480, -479, -478,  ..., -463, -462, -461],\n"
      "         [-460, -459, -458,  ..., -443, -442, -441],\n"
      "         ...,\n"
      "         [-160, -159, -158,  ..., -143, -142, -141],\n"
      "         [-140, -139, -138,  ..., -123, -122, -121],\n"
      "         [-120, -119, -118,  ..., -103, -102, -101]],\n"
      "\n"
      "        [[-100,  -99,  -98,  ...,  -83,  -82,  -81],\n"
      "         [ -80,  -79,  -78,  ...,  -63,  -62,  -61],\n"
      "         [ -60,  -59,  -58,  ...,  -43,  -42,  -41],\n"
      "         ...,\n"
      "         [ 240,  241,  242,  ...,  257,  258,  259],\n"
      "         [ 260,  261,  262,  ...,  277,  278,  279],\n"
      "         [ 280,  281,  282,  ...,  297,  298,  299]],\n"
      "\n"
      "        [[ 300,  301,  302,  ...,  317,  318,  319],\n"
      "         [ 320,  321,  322,  ...,  337,  338,  339],\n"
      "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
      "         ...,\n"
      "         [-360, -359, -358,  ..., -343, -342, -341],\n"
      "         [-340, -339, -338,  ..., -323, -322, -321],\n"
      "         [-320, -319, -318,  ..., -303, -302, -301]],\n"
      "\n"
      "        ...,\n"
      "\n"
      "        [[ 300,  301,  302,  ...,  317,  318,  319],\n"
      "         [ 320,  321,  322,  ...,  337,  338,  339],\n"
      "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
      "         ...,\n"
      "         [-360, -359, -358,  ..., -343, -342, -341],\n"
      "         [-340, -339, -338,  ..., -323, -322, -321],\n"
      "         [-320, -319, -318,  ..., -303, -302, -301]],\n"
      "\n"
      "        [[-300, -299, -298,  ..., -283, -282, -281],\n"
      "         [-280, -279, -278,  ..., -263, -262, -261],\n"
      "         [-260, -259, -258,  ..., -243, -242, -241],\n"
      "         ...,\n"
      "         [  40,   41,   42,  ...,   57,   58,   59],\n"
      "         [  60,   61,   62,  ...,   77,   78,   79],\n"
      "         [  80,   81,   82,  ...,   97,   98,   99]],\n"
      "\n"
      "        [[ 100,  101,  102,  ...,  117,  118,  119],\n"
      "         [ 120,  121,  122,  ...,  137,  138,  139],\n"
      "         [ 140,  141,  142,  ...,  157,  158,  159],\n"
      "         ...,\n"
      "         [ 440,  441,  442,  ...,  457,  458,  459],\n"
      "         [ 460,  461,  462,  ...,  477,  478,  479],\n"
      "         [ 480,  481,  482,  ...,  497,  498,  499]]], dtype=torch.int32)");
  expect_repr(
      from_fn<double>({2, 600}, [](int64_t i) { return i / 7.0; }),
      "tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 8.5286e+01, 8.5429e+01,\n"
      "         8.5571e+01],\n"
      "        [8.5714e+01, 8.5857e+01, 8.6000e+01,  ..., 1.7100e+02, 1.7114e+02,\n"
      "         1.7129e+02]], dtype=torch.float64)");
}

TEST(PrintTest, Undefined) {
  expect_repr(Tensor(), "tensor(undefined)");
}

} // namespace
