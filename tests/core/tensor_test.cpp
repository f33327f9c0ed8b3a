#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

using namespace ditto;

TEST(Dtype, CodesAreFrozen) {
  // These codes reach fingerprints and files; they must never change.
  EXPECT_EQ(int(kUInt8), 0);
  EXPECT_EQ(int(kInt32), 3);
  EXPECT_EQ(int(kInt64), 4);
  EXPECT_EQ(int(kFloat32), 6);
  EXPECT_EQ(int(kFloat64), 7);
  EXPECT_EQ(int(kBool), 11);
  EXPECT_EQ(element_size(kFloat64), 8u);
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_EQ(dtype_name(kInt32), "int32");
}

TEST(Dtype, PromotionMatchesPyTorch) {
  // torch.promote_types for every pair of our dtypes.
  EXPECT_EQ(promote_types(kUInt8, kInt32), kInt32);
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kInt64, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kBool), kBool);
  EXPECT_EQ(promote_types(kInt64, kUInt8), kInt64);
}

TEST(Tensor, UndefinedByDefault) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_THROW(t.sizes(), ValueError);
  EXPECT_THROW(t.numel(), ValueError);
}

TEST(Tensor, BasicMetadata) {
  Tensor t = zeros({2, 3, 4}, kFloat64);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.sizes(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_TRUE(t.device().is_cpu());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_THROW(t.size(3), IndexError);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kStorageAlignment, 0u);
}

TEST(Tensor, DataPtrChecksDtype) {
  Tensor t = zeros({3}, kInt32);
  EXPECT_NO_THROW(t.data_ptr<int32_t>());
  EXPECT_THROW(t.data_ptr<float>(), TypeError);
  try {
    t.data_ptr<int64_t>();
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[data_ptr]"), std::string::npos);
  }
}

TEST(Tensor, ItemConvertsAndChecksSize) {
  EXPECT_EQ(full({}, 7, kInt64).item<int64_t>(), 7);
  EXPECT_DOUBLE_EQ(full({1, 1}, 2.5, kFloat32).item<double>(), 2.5);
  EXPECT_EQ(full({}, true, kBool).item<int>(), 1);
  EXPECT_THROW(zeros({2}).item<float>(), ValueError);
}

TEST(Tensor, HandlesShareData) {
  Tensor a = zeros({4});
  Tensor b = a;
  b.fill_(3.0);
  EXPECT_EQ(a.data_ptr<float>()[2], 3.0f);
  Tensor c = a.clone();
  c.fill_(1.0);
  EXPECT_EQ(a.data_ptr<float>()[2], 3.0f);
}

TEST(Tensor, CopyBroadcastsAndConverts) {
  Tensor dst = zeros({2, 3}, kFloat64);
  dst.copy_(tensor<int32_t>({1, 2, 3}));
  EXPECT_TRUE(equal(dst, tensor<double>({1, 2, 3, 1, 2, 3}, {2, 3})));
  EXPECT_THROW(dst.copy_(zeros({4})), ValueError);
  // A failed copy leaves the destination unchanged.
  EXPECT_TRUE(equal(dst, tensor<double>({1, 2, 3, 1, 2, 3}, {2, 3})));
}

TEST(Tensor, CopyIntoItsOwnTransposeReadsTheOldValues) {
  Tensor a = arange(0, 9, 1, kFloat32).view({3, 3});
  Tensor expected = a.t().clone();
  a.copy_(a.t());
  EXPECT_TRUE(equal(a, expected));
}

TEST(Tensor, CopyToExpandedTensorIsRejected) {
  Tensor a = zeros({1, 3}).expand({4, 3});
  EXPECT_THROW(a.copy_(ones({4, 3})), ValueError);
}

TEST(Tensor, ToConvertsLikePyTorch) {
  Tensor f = tensor<float>({-1.7f, 0.0f, 2.9f, 255.5f, 256.0f});
  EXPECT_TRUE(equal(f.to(kInt64), tensor<int64_t>({-1, 0, 2, 255, 256})));
  EXPECT_TRUE(
      equal(f.to(kBool), tensor<bool>({true, false, true, true, true})));
  EXPECT_TRUE(
      equal(tensor<int32_t>({300, -1}).to(kUInt8), tensor<uint8_t>({44, 255})));
  Tensor same = f.to(kFloat32);
  EXPECT_TRUE(same.is_same(f));
}

TEST(Tensor, FloatToIntOutOfRangeIsDefined) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f = tensor<float>({nan, 1e30f, -1e30f});
  EXPECT_TRUE(
      equal(f.to(kInt64), tensor<int64_t>({INT64_MIN, INT64_MIN, INT64_MIN})));
  EXPECT_TRUE(
      equal(f.to(kInt32), tensor<int32_t>({INT32_MIN, INT32_MIN, INT32_MIN})));
}

TEST(Scalar, KindsAndConversions) {
  EXPECT_TRUE(Scalar(1).is_integral());
  EXPECT_TRUE(Scalar(1.0f).is_floating());
  EXPECT_TRUE(Scalar(true).is_bool());
  EXPECT_EQ(Scalar(2.9).to<int64_t>(), 2);
  EXPECT_EQ(Scalar(int64_t(1) << 40).to<double>(), 1099511627776.0);
}

TEST(Errors, MessagesNameTheOp) {
  try {
    add(zeros({2, 3}), zeros({4}));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "[add] shapes {2, 3} and {4} cannot be broadcast");
  }
  try {
    zeros({2}).select(0, 5);
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_STREQ(
        e.what(),
        "[select] index 5 is out of bounds for dimension 0 with size 2");
  }
  EXPECT_THROW(zeros({-1}), ValueError);
}

TEST(CpuCapability, SetAndRestore) {
  CpuCapability before = get_cpu_capability();
  for (CpuCapability c : supported_cpu_capabilities()) {
    set_cpu_capability(c);
    EXPECT_EQ(get_cpu_capability(), c);
  }
  EXPECT_THROW(set_cpu_capability("avx1024"), ValueError);
  set_cpu_capability(before);
  auto compiled = compiled_cpu_capabilities();
  EXPECT_EQ(compiled.front(), CpuCapability::Scalar);
}

// The test binary asks the CPU itself (baseline code), so a capability
// check that wrongly said "no" could not skip every SIMD test into green.
TEST(CpuCapability, SupportMatchesTheCpu) {
  for (CpuCapability c : compiled_cpu_capabilities()) {
    bool has = c == CpuCapability::Scalar;
#if defined(__x86_64__)
    __builtin_cpu_init();
    const bool avx2 =
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (c == CpuCapability::Avx2) {
      has = avx2;
    }
    if (c == CpuCapability::Avx512) {
      has = avx2 && __builtin_cpu_supports("avx512f") &&
          __builtin_cpu_supports("avx512dq") &&
          __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512vl");
    }
#elif defined(__aarch64__)
    if (c == CpuCapability::Neon) {
      has = true; // Advanced SIMD is part of every AArch64 CPU
    }
#endif
    EXPECT_EQ(cpu_capability_supported(c), has) << cpu_capability_name(c);
  }
  // The default is the best one the CPU runs (unless the environment
  // forces one).
  if (std::getenv("DITTO_CPU_CAPABILITY") == nullptr) {
    EXPECT_EQ(get_cpu_capability(), supported_cpu_capabilities().back());
  }
  std::cout << "capabilities tested here:";
  for (CpuCapability c : test::testable_capabilities()) {
    std::cout << " " << cpu_capability_name(c);
  }
  std::cout << "\n";
}

TEST(Determinism, SwitchesFollowPyTorch) {
  EXPECT_FALSE(are_deterministic_algorithms_enabled());
  use_deterministic_algorithms(false, true);
  EXPECT_TRUE(is_deterministic_algorithms_warn_only_enabled());
  EXPECT_EQ(get_deterministic_debug_mode(), 0);
  set_deterministic_debug_mode("warn");
  EXPECT_EQ(get_deterministic_debug_mode(), 1);
  set_deterministic_debug_mode(2);
  EXPECT_TRUE(are_deterministic_algorithms_enabled());
  EXPECT_FALSE(is_deterministic_algorithms_warn_only_enabled());
  EXPECT_THROW(set_deterministic_debug_mode(3), ValueError);
  EXPECT_THROW(set_deterministic_debug_mode("loud"), ValueError);
  EXPECT_EQ(get_deterministic_debug_mode(), 2);
  use_deterministic_algorithms(false);
}

TEST(Trace, HookSeesUserOpsOnly) {
  std::vector<std::string> seen;
  Tensor a;
  trace::set_hook([&](const trace::Event& e) {
    seen.emplace_back(e.op);
    EXPECT_FALSE(e.outputs.empty());
    EXPECT_EQ(e.phase, trace::Phase::kForward);
    if (e.op == "add") {
      ASSERT_EQ(e.inputs.size(), 2u); // the tensor and the wrapped scalar
      EXPECT_TRUE(e.inputs[0].is_same(a));
    }
  });
  a = ones({3}, kInt32);
  Tensor b = add(a, 1.5); // converts a internally: not reported
  trace::set_hook({});
  Tensor c = mul(b, 2.0);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "ones");
  EXPECT_EQ(seen[1], "add");
  EXPECT_FALSE(trace::enabled());
}

TEST(Scalar, FloatToIntegerConversionsMatchTheKernels) {
  // The same rule as Tensor::to: NaN and out-of-range give the minimum.
  for (double v : {std::nan(""), 1e30, -1e30, 3e9, -2.5, 300.7}) {
    Tensor t = tensor<double>({v});
    EXPECT_EQ(Scalar(v).to<int64_t>(), t.to(kInt64).item<int64_t>()) << v;
    EXPECT_EQ(Scalar(v).to<int32_t>(), t.to(kInt32).item<int32_t>()) << v;
    EXPECT_EQ(Scalar(v).to<uint8_t>(), t.to(kUInt8).item<uint8_t>()) << v;
  }
  // Filling with a value the dtype cannot hold is an error, as in PyTorch.
  EXPECT_THROW(full({1}, 1e30, kInt32), ValueError);
}
