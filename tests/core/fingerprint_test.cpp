#include <gtest/gtest.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ditto/ditto.h"

using namespace ditto;

TEST(Fingerprint, EncodingIsDocumented) {
  // docs/fingerprint.md: code byte, ndim and sizes as int64 LE, values.
  Tensor t = tensor<float>({1.5f, -2.0f, 0.25f, 8.0f, 0.0f, -0.0f}, {2, 3});
  unsigned char bytes[1 + 3 * 8 + 6 * sizeof(float)];
  size_t pos = 0;
  auto put = [&](const void* p, size_t n) {
    std::memcpy(bytes + pos, p, n);
    pos += n;
  };
  uint8_t code = 6;
  put(&code, 1);
  int64_t nd = 2, s0 = 2, s1 = 3;
  put(&nd, 8);
  put(&s0, 8);
  put(&s1, 8);
  put(t.data_ptr<float>(), 6 * sizeof(float));
  ASSERT_EQ(pos, sizeof(bytes));
  EXPECT_EQ(fingerprint(t), XXH3_64bits(bytes, sizeof(bytes)));
}

TEST(Fingerprint, LogicalOrderNotMemoryOrder) {
  Tensor a = arange(0, 12, 1, kFloat32).view({3, 4});
  Tensor t = a.t();
  EXPECT_EQ(fingerprint(t), fingerprint(t.contiguous()));
  EXPECT_NE(fingerprint(a), fingerprint(t.contiguous()));
}

TEST(Fingerprint, DistinguishesDtypeShapeAndSignOfZero) {
  Tensor a = zeros({4});
  EXPECT_NE(fingerprint(a), fingerprint(zeros({4}, kInt32)));
  EXPECT_NE(fingerprint(a), fingerprint(zeros({2, 2})));
  EXPECT_NE(fingerprint(a), fingerprint(full({4}, -0.0)));
  EXPECT_NE(fingerprint(a), fingerprint(zeros({4}, kFloat64)));
}

TEST(Fingerprint, NaNsAreCanonical) {
  float qnan = std::numeric_limits<float>::quiet_NaN();
  float other;
  uint32_t bits = 0xFFC01234u; // negative NaN with a payload
  std::memcpy(&other, &bits, 4);
  ASSERT_TRUE(std::isnan(other));
  EXPECT_EQ(
      fingerprint(tensor<float>({1, qnan})),
      fingerprint(tensor<float>({1, other})));
  double dn = -std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(
      fingerprint(tensor<double>({dn})),
      fingerprint(tensor<double>({std::nan("")})));
}
