// float16 and bfloat16 conversions (Note [Storage dtypes] in dtype.h),
// through the active capability's cast kernels: every 16-bit value goes to
// float32 and back unchanged, and every float32 halfway between two
// neighbours rounds to the even one, one float32 step either side to the
// nearer. tests/python/test_dtype16.py holds the same conversions to
// PyTorch's bits.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ditto/ditto.h"

using namespace ditto;

namespace {

std::vector<uint16_t> bits_of(const Tensor& t16) {
  Tensor c = t16.contiguous();
  std::vector<uint16_t> out(size_t(c.numel()));
  std::memcpy(out.data(), c.raw_data(), out.size() * 2);
  return out;
}

Tensor from_bits(const std::vector<uint16_t>& bits, Dtype d) {
  std::vector<uint16_t> copy = bits;
  return from_blob(copy.data(), {int64_t(copy.size())}, kInt16).clone().view(d);
}

Tensor floats(const std::vector<float>& v) {
  std::vector<float> copy = v;
  return from_blob(copy.data(), {int64_t(copy.size())}, kFloat32).clone();
}

void check_rounding(Dtype d) {
  const uint16_t inf = d == kFloat16 ? 0x7C00 : 0x7F80;
  std::vector<uint16_t> all;
  for (uint32_t k = 0; k < 65536; ++k) {
    if ((k & 0x7FFF) <= inf) { // not a NaN
      all.push_back(uint16_t(k));
    }
  }
  Tensor v = from_bits(all, d).to(kFloat32);
  EXPECT_EQ(bits_of(v.to(d)), all) << d;
  const float* f = v.data_ptr<float>();
  // Midpoints between k and k + 1 for the non-negative finite values (the
  // negative ones mirror them), and one float32 step either side.
  std::vector<float> mid, below, above;
  std::vector<uint16_t> want_mid, want_below, want_above;
  for (uint16_t k = 0; k + 1 < inf; ++k) {
    const float m = float((double(f[k]) + double(f[k + 1])) / 2);
    ASSERT_EQ(double(m), (double(f[k]) + double(f[k + 1])) / 2) << k;
    for (float sign : {1.0f, -1.0f}) {
      const uint16_t s = sign < 0 ? 0x8000 : 0;
      mid.push_back(sign * m);
      want_mid.push_back(uint16_t(s | ((k & 1) ? k + 1 : k)));
      below.push_back(sign * std::nextafter(m, 0.0f));
      want_below.push_back(uint16_t(s | k));
      above.push_back(
          sign * std::nextafter(m, std::numeric_limits<float>::infinity()));
      want_above.push_back(uint16_t(s | (k + 1)));
    }
  }
  EXPECT_EQ(bits_of(floats(mid).to(d)), want_mid) << d;
  EXPECT_EQ(bits_of(floats(below).to(d)), want_below) << d;
  EXPECT_EQ(bits_of(floats(above).to(d)), want_above) << d;
  // Past the largest finite value's upper midpoint: infinity.
  const float big =
      d == kFloat16 ? 65520.0f : std::bit_cast<float>(uint32_t(0x7F7F8000));
  EXPECT_EQ(
      bits_of(floats({big, -big}).to(d)),
      (std::vector<uint16_t>{inf, uint16_t(0x8000 | inf)}))
      << d;
  // A NaN stays a NaN.
  Tensor nan = floats({std::nanf(""), -std::nanf("")}).to(d).to(kFloat32);
  EXPECT_TRUE(std::isnan(nan.data_ptr<float>()[0]));
  EXPECT_TRUE(std::isnan(nan.data_ptr<float>()[1]));
}

} // namespace

TEST(Dtype16, Float16RoundsToNearestEven) {
  check_rounding(kFloat16);
}

TEST(Dtype16, BFloat16RoundsToNearestEven) {
  check_rounding(kBFloat16);
}

#if defined(__x86_64__) && defined(__FLT16_MAX__) // C++ _Float16: GCC 12 on x86
// The compiler's own float-to-_Float16 conversion (IEEE rounding) agrees on
// a sweep of float32 values.
TEST(Dtype16, Float16AgreesWithTheCompilersConversion) {
  std::vector<float> v;
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 65521) {
    const float x = std::bit_cast<float>(uint32_t(b));
    if (!std::isnan(x)) {
      v.push_back(x);
    }
  }
  std::vector<uint16_t> want;
  for (float x : v) {
    want.push_back(std::bit_cast<uint16_t>(static_cast<_Float16>(x)));
  }
  EXPECT_EQ(bits_of(floats(v).to(kFloat16)), want);
}
#endif

// Arithmetic computes in float32 and rounds once; int8 wraps.
TEST(Dtype16, OpsComputeInFloat32AndRoundOnce) {
  Tensor a = floats({1.0f, 2049.0f, 0.1f}).to(kFloat16);
  Tensor b = floats({1.0f, 1.0f, 0.2f}).to(kFloat16);
  Tensor s = add(a, b);
  EXPECT_EQ(s.dtype(), kFloat16);
  Tensor want = add(a.to(kFloat32), b.to(kFloat32)).to(kFloat16);
  EXPECT_EQ(bits_of(s), bits_of(want));
  EXPECT_EQ(exp(a).dtype(), kFloat16);
  EXPECT_EQ(bits_of(exp(a)), bits_of(exp(a.to(kFloat32)).to(kFloat16)));
  EXPECT_EQ(sum(a).dtype(), kFloat16);
  EXPECT_EQ(matmul(a.view({1, 3}), b.view({3, 1})).dtype(), kFloat16);
  Tensor i = full({2}, 100, kInt64).to(kInt8);
  EXPECT_EQ(add(i, i).dtype(), kInt8);
  EXPECT_EQ(add(i, i).to(kInt64).data_ptr<int64_t>()[0], -56);
  EXPECT_EQ(sum(i).dtype(), kInt64);
  EXPECT_EQ(sum(i).item<int64_t>(), 200);
}
