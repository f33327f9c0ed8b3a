// The Vulkan device (docs/device.md): copies, factories, the ops with a
// device kernel, each compared bit for bit with the CPU (R7 in DESIGN.md),
// and the errors for what has no kernel. Runs on whichever device
// DITTO_TEST_VULKAN_DEVICE names (default vulkan:0): Mesa's lavapipe in CI,
// a real GPU under `make gpu-check`. With no Vulkan device these tests fail:
// scripts/setup installs lavapipe.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ditto/device/device.h"
#include "ditto/ditto.h"
#include "ditto/kernels/device_kernels.h"
#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/record.h"
#include "tests/cli_util.h"
#include "tests/error_of.h"
#include "tests/record_util.h"

namespace ditto {
namespace {

namespace fs = std::filesystem;
using test::error_of;

Device test_device() {
  const char* env = std::getenv("DITTO_TEST_VULKAN_DEVICE");
  return Device(DeviceType::Vulkan, int16_t(env ? std::atoi(env) : 0));
}

// Values with the cases that tell implementations apart: signed zeros,
// infinities, NaN, denormals, values near overflow, and ordinary ones.
Tensor tricky(const Shape& shape, uint64_t seed) {
  Generator g = Generator::philox(seed);
  Tensor t = randn(shape, kFloat32, g);
  float* p = t.data_ptr<float>();
  const float special[] = {
      0.0f,
      -0.0f,
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::denorm_min(),
      -3.0e-39f,
      1.0e-38f,
      3.0e38f,
      -3.0e38f};
  for (int64_t i = 0; i < t.numel(); i += 7) {
    p[i] = special[(i / 7) % 10];
  }
  return t;
}

// t with float32 denormals replaced by zeros of their sign: what a device
// that flushes them (Note [The device's arithmetic]) reads and writes.
Tensor flushed(const Tensor& t) {
  Tensor out = t.contiguous().clone();
  float* p = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (std::fpclassify(p[i]) == FP_SUBNORMAL) {
      p[i] = std::signbit(p[i]) ? -0.0f : 0.0f;
    }
  }
  return out;
}

bool same_value(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) ||
      std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Bits equal, NaNs compared as NaNs (their payload is not part of R7:
// fingerprints canonicalize them). With flush, a device that flushes
// float32 denormals may also give the flushed value of an element: cpu is
// then computed from flushed operands (see Elementwise below), so the only
// difference allowed is the flush itself.
void expect_same_bits(
    const Tensor& cpu,
    const Tensor& dev,
    const char* what,
    bool flush = false) {
  ASSERT_TRUE(cpu.is_cpu());
  ASSERT_TRUE(dev.is_vulkan()) << what;
  ASSERT_EQ(cpu.sizes(), dev.sizes()) << what;
  ASSERT_EQ(cpu.dtype(), dev.dtype()) << what;
  Tensor back = dev.cpu().contiguous();
  Tensor want = cpu.contiguous();
  if (!flush) {
    EXPECT_EQ(fingerprint(want), fingerprint(back)) << what;
  }
  if (want.dtype() == kFloat32) {
    const float* a = want.data_ptr<float>();
    const float* b = back.data_ptr<float>();
    Tensor want_flushed = flushed(want);
    const float* af = want_flushed.data_ptr<float>();
    int64_t shown = 0;
    for (int64_t i = 0; i < want.numel() && shown < 5; ++i) {
      const bool same =
          same_value(a[i], b[i]) || (flush && same_value(af[i], b[i]));
      if (!same) {
        ADD_FAILURE() << what << ": element " << i << " is " << b[i]
                      << " on the device, " << a[i] << " on the CPU";
        ++shown;
      }
    }
  }
}

class Vulkan : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(is_vulkan_available()) << vulkan_unavailable_reason();
  }
  Device dev = test_device();
};

TEST(DeviceSpec, ParsesAndPrintsAsTorchDoes) {
  EXPECT_EQ(Device("cpu"), kCPU);
  EXPECT_EQ(Device("vulkan"), Device(kVulkan, 0));
  EXPECT_EQ(Device("vulkan:1").index, 1);
  EXPECT_EQ(Device("vulkan").str(), "vulkan:0");
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_NE(
      error_of<ValueError>([] { Device("cuda:0"); }).find("cuda:0"),
      std::string::npos);
  EXPECT_NE(error_of<ValueError>([] { Device("vulkan:x"); }), "");
  EXPECT_NE(error_of<ValueError>([] { Device("vulkan:-1"); }), "");
  // Found by fuzz_device_spec: a sign before the index.
  EXPECT_NE(error_of<ValueError>([] { Device("vulkan:-0"); }), "");
  EXPECT_NE(error_of<ValueError>([] { Device("vulkan:+1"); }), "");
}

// Note [Device kernel slots]: the ops reach the device through one table
// of slots per device type, which the device fills while the library loads.
TEST_F(Vulkan, OpsReachTheDeviceThroughItsKernelSlots) {
  const Tensor x = ones({3}, kFloat32).to(dev);
  const kernels::DeviceKernels& k = kernels::device_kernels(x, "test");
  EXPECT_NE(k.binary, nullptr);
  EXPECT_NE(k.nll_backward, nullptr);
  // An op reaches either table one way (detail::device_slots): the CPU's
  // for a CPU tensor, the device's for the device's.
  EXPECT_EQ(&detail::device_slots(x, "test"), &k);
  const kernels::DeviceKernels& cpu_slots =
      detail::device_slots(ones({1}), "test");
  EXPECT_NE(&cpu_slots, &k);
  EXPECT_NE(cpu_slots.binary, k.binary);
  // The device leaves the optional clamp out; clamp then composes it from
  // maximum and minimum on the device, with the CPU's bits.
  EXPECT_EQ(k.clamp, nullptr);
  EXPECT_NE(cpu_slots.clamp, nullptr);
  // Nor a batched product: matmul composes it from the gemm slot.
  EXPECT_EQ(k.gemm_batched, nullptr);
  EXPECT_NE(cpu_slots.gemm_batched, nullptr);
  const Tensor v = tensor({-3.0, -0.0, 0.5, 7.0}).to(dev);
  EXPECT_TRUE(equal(clamp(v, -1.0, 2.0).cpu(), tensor({-1.0, -0.0, 0.5, 2.0})));
  // The CPU's slots are ops/' own, not registered; no other device
  // registered any.
  const std::string cpu = error_of<InternalError>(
      [] { kernels::device_kernels(ones({1}), "some_op"); });
  EXPECT_NE(cpu.find("[some_op]"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("cpu"), std::string::npos) << cpu;
  EXPECT_NE(
      error_of<InternalError>([] {
        kernels::register_device_kernels(kCPU, kernels::DeviceKernels{});
      }),
      "");
  // A device that leaves a slot empty is refused, naming the slot, and the
  // table registered before stays.
  kernels::DeviceKernels partial = k;
  partial.gemm = nullptr;
  const std::string empty = error_of<InternalError>(
      [&] { kernels::register_device_kernels(kVulkan, partial); });
  EXPECT_NE(empty.find("gemm"), std::string::npos) << empty;
  EXPECT_EQ(kernels::device_kernels(x, "test").gemm, k.gemm);
  EXPECT_TRUE(equal(add(x, x).cpu(), full({3}, 2.0)));
}

TEST_F(Vulkan, ListsTheDeviceWithItsArithmetic) {
  ASSERT_GE(vulkan_device_count(), 1);
  const VulkanDeviceInfo info = vulkan_device_info(dev.index);
  EXPECT_FALSE(info.name.empty());
  // R7 rests on these two; a device without them cannot give the CPU's
  // bits for products and denormals, and this says which property failed.
  // fma() rounding once, or float64 to build it from (lavapipe's
  // rounds twice; the products then use the float64 form).
  EXPECT_TRUE(info.fma_fused || info.float64)
      << info.name << ": fma() rounds twice and there is no float64";
  // A device that flushes float32 denormals must say so where it can:
  // the probe's finding agrees with the driver's DenormPreserve support
  // (the shaders ask for it where it is offered).
  if (info.denorm_preserve_float32) {
    EXPECT_TRUE(info.denormals_kept)
        << info.name << ": DenormPreserve is offered but denormals flush";
  }
  std::cout << "[ device   ] " << info.name << ", " << info.driver << ": fma "
            << (info.fma_fused ? "rounds once" : "rounds twice")
            << ", float32 denormals "
            << (info.denormals_kept ? "kept" : "flushed") << "\n";
  EXPECT_NE(
      error_of<DeviceError>([] {
        zeros({2}, kFloat32, Device("vulkan:99"));
      }).find("vulkan:99 does not exist"),
      std::string::npos);
  // An allocation beyond the device's heap is refused (issue 61, item 18),
  // and the device works on.
  EXPECT_THROW(empty({int64_t(1) << 40}, kFloat32, dev), OutOfMemoryError);
  EXPECT_EQ(ones({3}, kFloat32, dev).cpu().sum().item<float>(), 3.0f);
}

TEST_F(Vulkan, CopiesBothWaysKeepEveryBit) {
  for (Dtype dt : {kFloat32, kFloat64, kInt32, kInt64}) {
    Tensor c = tricky({37, 41}, 1).to(dt);
    Tensor d = c.to(dev);
    EXPECT_TRUE(d.is_vulkan());
    EXPECT_EQ(d.device(), dev);
    EXPECT_EQ(fingerprint(d.cpu()), fingerprint(c)) << dt;
    // Strided views both ways: a transposed source, a sliced destination.
    Tensor dt_view = d.t();
    EXPECT_EQ(fingerprint(dt_view.cpu()), fingerprint(c.t())) << dt;
    EXPECT_EQ(fingerprint(dt_view.contiguous().cpu()), fingerprint(c.t()));
    Tensor target = zeros({41, 80}, dt, dev);
    target.slice(1, 3, 77, 2).copy_(c.t());
    Tensor want = zeros({41, 80}, dt);
    want.slice(1, 3, 77, 2).copy_(c.t());
    EXPECT_EQ(fingerprint(target.cpu()), fingerprint(want)) << dt;
  }
  // A large tensor crosses the staging buffer (16 MiB) several times.
  Tensor big = arange(0, 10'000'000, 1, kFloat32);
  EXPECT_EQ(fingerprint(big.to(dev).cpu()), fingerprint(big));
}

TEST_F(Vulkan, ConversionsGiveTheCpuBits) {
  // The edges of convert(): NaN, infinities and out-of-range values to
  // integers (the minimum), truncation, wrap-around to narrower integers,
  // rounding of large int64 and of float64 to float32, bool.
  Tensor f = tensor<double>(
      {0.0,
       -0.0,
       2.5,
       -2.5,
       0.49999997,
       3.0e9,
       -3.0e9,
       1.0e20,
       -1.0e20,
       9.2233720368547758e18,
       std::numeric_limits<double>::infinity(),
       -std::numeric_limits<double>::infinity(),
       std::numeric_limits<double>::quiet_NaN(),
       255.0,
       256.0,
       -1.0,
       1.0e-40,
       16777217.0});
  Tensor i = tensor<int64_t>(
      {0,
       -1,
       255,
       256,
       16777217,
       -16777217,
       (int64_t(1) << 53) + 1,
       INT64_MAX,
       INT64_MIN,
       int64_t(1) << 31,
       -(int64_t(1) << 31) - 1});
  for (const Tensor& src :
       {f, f.to(kFloat32), i, i.to(kInt32), i.to(kUInt8), i.to(kBool)}) {
    for (Dtype to : {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool}) {
      const std::string what = std::string(dtype_name(src.dtype())) + " to " +
          std::string(dtype_name(to));
      Tensor want = src.to(to);
      Tensor got = src.to(dev).to(to);
      ASSERT_TRUE(got.is_vulkan()) << what;
      if (to == kFloat32) {
        expect_same_bits(
            want,
            got,
            what.c_str(),
            !vulkan_device_info(dev.index).denormals_kept);
      } else {
        EXPECT_EQ(fingerprint(want), fingerprint(got)) << what;
      }
    }
  }
}

TEST_F(Vulkan, FactoriesAndFills) {
  expect_same_bits(zeros({3, 5}), zeros({3, 5}, kFloat32, dev), "zeros");
  expect_same_bits(ones({4}), ones({4}, kFloat32, dev), "ones");
  expect_same_bits(
      full({2, 3}, 2.5, kFloat32), full({2, 3}, 2.5, kFloat32, dev), "full");
  Tensor d = tricky({6, 7}, 2).to(dev);
  EXPECT_EQ(zeros_like(d).device(), dev);
  EXPECT_EQ(ones_like(d).device(), dev);
  d.slice(0, 1, 3).fill_(-1.5);
  Tensor c = tricky({6, 7}, 2);
  c.slice(0, 1, 3).fill_(-1.5);
  expect_same_bits(c, d, "fill_ of a slice");
  d.zero_();
  expect_same_bits(zeros({6, 7}), d, "zero_");
}

TEST_F(Vulkan, ElementwiseGivesTheCpuBits) {
  // Shapes that broadcast, a scalar, transposed operands, a 0-dim CPU
  // tensor standing for a scalar, and long loops with every special value.
  // On a device that flushes float32 denormals (NVIDIA's Vulkan driver
  // offers no DenormPreserve for float32), the CPU side computes from
  // flushed operands and the device may give flushed results: the test
  // then shows that the flush is the only difference.
  const bool flush = !vulkan_device_info(dev.index).denormals_kept;
  auto F = [&](const Tensor& t) { return flush ? flushed(t) : t; };
  auto same = [&](const Tensor& cpu, const Tensor& d, const char* what) {
    expect_same_bits(cpu, d, what, flush);
  };
  Tensor a = tricky({33, 65}, 3), b = tricky({33, 65}, 4);
  Tensor row = tricky({1, 65}, 5), col = tricky({33, 1}, 6);
  Tensor bt = tricky({65, 33}, 7).t();
  Tensor big_a = tricky({1 << 20}, 8), big_b = tricky({1 << 20}, 9);
  Tensor da = a.to(dev), db = b.to(dev), drow = row.to(dev), dcol = col.to(dev);
  Tensor dbt = tricky({65, 33}, 7).to(dev).t();
  same(add(F(a), F(b)), add(da, db), "add");
  same(sub(F(a), F(row)), sub(da, drow), "sub, broadcast row");
  same(mul(F(col), F(a)), mul(dcol, da), "mul, broadcast column");
  same(mul(F(a), F(bt)), mul(da, dbt), "mul, transposed operand");
  // Division works from the exact float64 values of its operands, so
  // denormal operands count even where the device flushes them elsewhere.
  same(div(a, b), div(da, db), "div");
  same(div(col, a), div(dcol, da), "div, broadcast column");
  same(
      div(big_a, big_b), div(big_a.to(dev), big_b.to(dev)), "div, 1M elements");
  same(div(a, 3.0), div(da, 3.0), "div by a scalar");
  same(add(F(a), 0.1), add(da, 0.1), "add a scalar");
  same(mul(F(a), -3.7), mul(da, -3.7), "mul by a scalar");
  same(
      sub(F(a), scalar_tensor(2.0, kFloat32)),
      sub(da, scalar_tensor(2.0, kFloat32)),
      "sub a 0-dim CPU tensor");
  expect_same_bits(maximum(a, b), maximum(da, db), "maximum");
  expect_same_bits(minimum(a, b), minimum(da, db), "minimum");
  same(
      mul(F(big_a), F(big_b)),
      mul(big_a.to(dev), big_b.to(dev)),
      "mul, 1M elements");
  expect_same_bits(neg(a), neg(da), "neg");
  expect_same_bits(abs(a), abs(da), "abs");
  expect_same_bits(relu(a), relu(da), "relu");
  // Comparisons (bool out; NaN unequal to all, -0 == +0) and where.
  EXPECT_EQ(fingerprint(le(a, b)), fingerprint(le(da, db))) << "le";
  EXPECT_EQ(fingerprint(eq(a, a)), fingerprint(eq(da, da))) << "eq";
  EXPECT_EQ(fingerprint(ne(a, row)), fingerprint(ne(da, drow))) << "ne";
  EXPECT_EQ(fingerprint(gt(a, 0.0)), fingerprint(gt(da, 0.0))) << "gt";
  EXPECT_EQ(fingerprint(lt(col, b)), fingerprint(lt(dcol, db))) << "lt";
  EXPECT_EQ(fingerprint(ge(a, -0.0)), fingerprint(ge(da, -0.0))) << "ge";
  expect_same_bits(where(le(a, b), a, b), where(le(da, db), da, db), "where");
  expect_same_bits(
      where(gt(a, 0.0), 0.0, b),
      where(gt(da, 0.0), 0.0, db),
      "where, a scalar");
  // ditto's own exp, the same operations in the same order: every special
  // value, and a sweep across its range (underflow to denormals and 0,
  // overflow to inf).
  same(exp(F(a)), exp(da), "exp");
  Tensor sweep = linspace(-110.0, 95.0, 300007);
  same(exp(F(sweep)), exp(sweep.to(dev)), "exp over [-110, 95]");
  // ditto's log: every special value (negative: NaN, +-0: -inf), and the
  // positive floats from the smallest denormal to the largest, by bits
  // (denormal inputs count even where the device flushes them elsewhere).
  expect_same_bits(log(a), log(da), "log", flush);
  Tensor bits =
      arange(1, 0x7F800001LL, 0x7F800000LL / 250007, kInt64).to(kInt32);
  Tensor positive = zeros({bits.numel()}, kFloat32);
  std::memcpy(
      positive.data_ptr<float>(),
      bits.data_ptr<int32_t>(),
      size_t(bits.numel()) * 4);
  expect_same_bits(
      log(positive), log(positive.to(dev)), "log of every range", flush);
  // ditto's erf and float GELU (kernels/cpu/erf.h): every special value,
  // and sweeps over each branch and select (erf's 0.875 and 3.92, GELU's
  // +-5.5426, the tail where Phi's rounding goes below 0).
  same(erf(F(a)), erf(da), "erf");
  same(nn::functional::gelu(F(a)), nn::functional::gelu(da), "gelu");
  Tensor wide = linspace(-8.0, 8.0, 400009);
  same(erf(wide), erf(wide.to(dev)), "erf over [-8, 8]");
  same(
      nn::functional::gelu(wide),
      nn::functional::gelu(wide.to(dev)),
      "gelu over [-8, 8]");
  // clamp: NaN, -0 and bounds as the CPU's selects, in both orders.
  same(clamp(F(a), -0.5, 2.0), clamp(da, -0.5, 2.0), "clamp");
  same(clamp(F(a), 0.0, std::nullopt), clamp(da, 0.0, std::nullopt), "clamp");
  same(clamp(F(a), 3.0, -3.0), clamp(da, 3.0, -3.0), "clamp, lo > hi");
  // int64: add, sub, mul wrap; maximum, minimum signed.
  Tensor i = arange(-40, 25, 1, kInt64).mul(int64_t(1) << 58);
  Tensor j = arange(25, -40, -1, kInt64).mul(7);
  for (auto [f, what] :
       {std::pair<Tensor (*)(const Tensor&, const Tensor&), const char*>{
            [](const Tensor&a, const Tensor&b) { return add(a, b); },
            "add int64"},
        {[](const Tensor&a, const Tensor&b) { return sub(a, b); }, "sub int64"},
        {mul, "mul int64"},
        {maximum, "maximum int64"},
        {minimum, "minimum int64"}}) {
    EXPECT_EQ(fingerprint(f(i, j)), fingerprint(f(i.to(dev), j.to(dev))))
        << what;
  }
  EXPECT_EQ(
      fingerprint(add(i, int64_t(-3))),
      fingerprint(add(i.to(dev), int64_t(-3))))
      << "add an int64 scalar";
  // The selects and the sign flips work on the bits (common.glsl): exact
  // on every device, denormals included, whatever the device flushes.
  // In place, and the operators.
  Tensor c = F(a).clone(), d = da.clone();
  c.add_(F(row));
  d.add_(drow);
  c = F(c);
  c.mul_(F(b));
  d.mul_(db);
  c = F(c);
  c.sub_(1.25);
  d.sub_(1.25);
  same(c, d, "add_, mul_, sub_");
  same(add(F(mul(F(a), F(b))), F(a)), da * db + da, "operators");
  if (!flush) {
    // Where denormals are kept, the model above is the identity: the
    // tricky inputs' denormals reached the device and came back.
    EXPECT_EQ(fingerprint(a), fingerprint(da.cpu()));
  }
}

TEST_F(Vulkan, SumsAndMeansGiveTheCpuBits) {
  // The CPU's chunks of 16384, 16 lanes and trees: rows shorter and longer
  // than a chunk, several rows, reduced dims in the middle, a transposed
  // input, keepdim, an empty row, the special values.
  const bool flush = !vulkan_device_info(dev.index).denormals_kept;
  auto F = [&](const Tensor& t) { return flush ? flushed(t) : t; };
  Generator g = Generator::philox(21);
  Tensor big = randn({3 * 16384 + 77}, kFloat32, g);
  Tensor m = tricky({37, 1000}, 22), cube = tricky({4, 50, 6}, 23);
  Tensor tall = tricky({40000, 3}, 24);
  struct Case {
    const char* what;
    Tensor x;
  };
  for (const Case& c :
       {Case{"1-d, four chunks", big},
        Case{"matrix", m},
        Case{"cube", cube},
        Case{"tall", tall}}) {
    Tensor x = F(c.x), dx = c.x.to(dev);
    expect_same_bits(sum(x), sum(dx), c.what, flush);
    expect_same_bits(mean(x), mean(dx), c.what, flush);
    for (int64_t d = 0; d < x.dim(); ++d) {
      expect_same_bits(sum(x, {d}, false), sum(dx, {d}, false), c.what, flush);
      expect_same_bits(mean(x, {d}, true), mean(dx, {d}, true), c.what, flush);
    }
  }
  expect_same_bits(
      sum(F(cube), {0, 2}, false),
      sum(cube.to(dev), {0, 2}, false),
      "two dims",
      flush);
  expect_same_bits(
      sum(F(m).t(), {1}, false),
      sum(m.to(dev).t(), {1}, false),
      "a transposed input",
      flush);
  Tensor empty_rows = zeros({3, 0});
  expect_same_bits(
      sum(empty_rows, {1}, false),
      sum(empty_rows.to(dev), {1}, false),
      "empty rows");
  expect_same_bits(
      mean(empty_rows, {1}, false),
      mean(empty_rows.to(dev), {1}, false),
      "mean of empty rows");
  // The gradient of a mean, on the device.
  Tensor leaf = tricky({5, 7}, 25).abs().requires_grad_(true);
  Tensor dleaf = leaf.detach().to(dev).requires_grad_(true);
  mean(mul(leaf, leaf)).backward();
  mean(mul(dleaf, dleaf)).backward();
  expect_same_bits(leaf.grad(), dleaf.grad(), "d mean(x^2) / dx", flush);
}

TEST_F(Vulkan, MatrixProductsGiveTheCpuBits) {
  struct Case {
    int64_t m, k, n;
  };
  for (Case s :
       {Case{1, 1, 1},
        Case{17, 33, 65},
        Case{64, 64, 64},
        Case{130, 257, 129},
        Case{5, 1000, 3},
        Case{200, 3, 300},
        Case{2050, 40, 2049}}) {
    Generator g = Generator::philox(uint64_t(s.m * 1000003 + s.k * 1009 + s.n));
    Tensor a = randn({s.m, s.k}, kFloat32, g),
           b = randn({s.k, s.n}, kFloat32, g);
    const std::string what = "mm " + std::to_string(s.m) + "x" +
        std::to_string(s.k) + "x" + std::to_string(s.n);
    expect_same_bits(mm(a, b), mm(a.to(dev), b.to(dev)), what.c_str());
  }
  Generator g = Generator::philox(11);
  Tensor a = randn({48, 70}, kFloat32, g), b = randn({90, 70}, kFloat32, g);
  expect_same_bits(mm(a, b.t()), mm(a.to(dev), b.to(dev).t()), "mm a b^T");
  expect_same_bits(
      mm(b.t().t(), a.t()),
      mm(b.to(dev), a.to(dev).t()),
      "mm with a transposed right operand");
  Tensor x = randn({3, 4, 20, 30}, kFloat32, g),
         w = randn({30, 25}, kFloat32, g);
  expect_same_bits(
      matmul(x, w),
      matmul(x.to(dev), w.to(dev)),
      "matmul batched by broadcast");
  Tensor v = randn({30}, kFloat32, g);
  expect_same_bits(
      matmul(x, v), matmul(x.to(dev), v.to(dev)), "matmul matrix-vector");
  Tensor empty_k = zeros({4, 0}), rhs = zeros({0, 5});
  expect_same_bits(
      mm(empty_k, rhs), mm(empty_k.to(dev), rhs.to(dev)), "mm with k = 0");
}

TEST_F(Vulkan, GradientsFlowOnTheDevice) {
  Generator g = Generator::philox(12);
  Tensor a = randn({20, 30}, kFloat32, g), b = randn({30, 10}, kFloat32, g),
         go = randn({20, 10}, kFloat32, g);
  Tensor ca = a.clone().requires_grad_(true),
         cb = b.clone().requires_grad_(true);
  Tensor da = a.to(dev).requires_grad_(true),
         db = b.to(dev).requires_grad_(true);
  mul(mm(ca, cb), 0.5).backward(go);
  mul(mm(da, db), 0.5).backward(go.to(dev));
  ASSERT_TRUE(da.grad().defined());
  expect_same_bits(ca.grad(), da.grad(), "d/da of (a b) / 2");
  expect_same_bits(cb.grad(), db.grad(), "d/db of (a b) / 2");
  // Through a copy: the gradient of to(device) returns to the CPU.
  Tensor c = a.clone().requires_grad_(true);
  mul(c.to(dev), 2.0).backward(ones({20, 30}, kFloat32, dev));
  ASSERT_TRUE(c.grad().defined());
  EXPECT_TRUE(c.grad().is_cpu());
  EXPECT_EQ(fingerprint(c.grad()), fingerprint(full({20, 30}, 2.0, kFloat32)));
}

// Training on the device: an MLP (Linear, ReLU, Linear) with an MSE loss
// and SGD with momentum and weight decay, module.to(device), 12 steps: the
// weights equal the CPU's bit for bit (on a device that flushes float32
// denormals this holds while no denormal arises, which the data here
// avoid: the test says so if it fails there).
TEST_F(Vulkan, TrainingStepsGiveTheCpuWeights) {
  auto run = [&](Device where) {
    manual_seed(7);
    nn::Sequential model(nn::Linear(20, 32), nn::ReLU(), nn::Linear(32, 5));
    model->to(where);
    optim::SGD opt(
        model->parameters(),
        optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4));
    Generator data = Generator::philox(8);
    for (int step = 0; step < 12; ++step) {
      Tensor x = randn({16, 20}, kFloat32, data).to(where);
      Tensor y = randn({16, 5}, kFloat32, data).to(where);
      Tensor loss = nn::functional::mse_loss(model->forward(x), y);
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    std::vector<uint64_t> prints;
    for (const Tensor& p : model->parameters()) {
      EXPECT_EQ(p.device(), where);
      prints.push_back(fingerprint(p));
    }
    return prints;
  };
  EXPECT_EQ(run(kCPU), run(dev))
      << "the device's weights differ (float32 denormals flushed: "
      << !vulkan_device_info(dev.index).denormals_kept << ")";
}

// conv2d's three directions for the shapes of the CNN and ones that take
// the other algorithms (strides, dilation, groups, col2im), and
// max_pool2d forward and backward: the CPU's bits.
TEST_F(Vulkan, ConvolutionsAndPoolingGiveTheCpuBits) {
  struct Case {
    Shape x, w;
    IntList stride, padding, dilation;
    int64_t groups;
  };
  const Case cases[] = {
      {{4, 1, 28, 28}, {32, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{4, 32, 14, 14}, {64, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {{3, 4, 11, 9}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1, 2}, 2},
      {{2, 3, 9, 9}, {5, 3, 5, 5}, {3, 2}, {2, 2}, {1, 1}, 1},
  };
  Generator g = Generator::philox(31);
  for (const Case& c : cases) {
    const std::string what = "conv2d x " + shape_str(c.x);
    Tensor x = randn(c.x, kFloat32, g), w = randn(c.w, kFloat32, g);
    Tensor b = randn({c.w[0]}, kFloat32, g);
    Tensor y = conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
    Tensor dy = conv2d(
        x.to(dev),
        w.to(dev),
        b.to(dev),
        c.stride,
        c.padding,
        c.dilation,
        c.groups);
    expect_same_bits(y, dy, (what + " forward").c_str());
    Tensor go = randn(y.sizes(), kFloat32, g);
    expect_same_bits(
        conv2d_backward_input(
            go, w, c.x, c.stride, c.padding, c.dilation, c.groups),
        conv2d_backward_input(
            go.to(dev),
            w.to(dev),
            c.x,
            c.stride,
            c.padding,
            c.dilation,
            c.groups),
        (what + " input gradient").c_str());
    expect_same_bits(
        conv2d_backward_weight(
            go, x, c.w, c.stride, c.padding, c.dilation, c.groups),
        conv2d_backward_weight(
            go.to(dev),
            x.to(dev),
            c.w,
            c.stride,
            c.padding,
            c.dilation,
            c.groups),
        (what + " weight gradient").c_str());
  }
  // Both input-gradient algorithms, forced.
  Tensor x = randn({2, 8, 7, 7}, kFloat32, g),
         w = randn({8, 8, 3, 3}, kFloat32, g);
  Tensor go = randn({2, 8, 7, 7}, kFloat32, g);
  for (const char* algo : {"direct", "gemm_col2im"}) {
    backends::conv::force_algorithm("backward_input", algo);
    expect_same_bits(
        conv2d_backward_input(go, w, x.sizes(), {1, 1}, {1, 1}, {1, 1}, 1),
        conv2d_backward_input(
            go.to(dev), w.to(dev), x.sizes(), {1, 1}, {1, 1}, {1, 1}, 1),
        algo);
  }
  backends::conv::force_algorithm("backward_input", "");
  // Pooling, with NaN, infinities and ties in the windows.
  Tensor t = tricky({3, 5, 12, 10}, 32);
  for (const IntList& k : {IntList{2, 2}, IntList{3, 2}}) {
    auto [v, i] =
        nn::functional::max_pool2d_with_indices(t, k, {2, 1}, {1, 1}, {1, 2});
    auto [dv, di] = nn::functional::max_pool2d_with_indices(
        t.to(dev), k, {2, 1}, {1, 1}, {1, 2});
    expect_same_bits(v, dv, "max_pool2d values");
    expect_same_bits(i, di, "max_pool2d indices");
    Tensor gp = randn(v.sizes(), kFloat32, g);
    expect_same_bits(
        nn::functional::max_pool2d_backward(gp, i, t.sizes()),
        nn::functional::max_pool2d_backward(gp.to(dev), di, t.sizes()),
        "max_pool2d backward (overlapping windows)");
  }
  // A bad index raises naming the op, and nothing is written.
  Tensor bad = zeros({1, 1, 2, 2}, kInt64);
  bad.view({4})[3].fill_(9);
  const std::string e = error_of<IndexError>([&] {
    nn::functional::max_pool2d_backward(
        ones({1, 1, 2, 2}, kFloat32, dev), bad.to(dev), {1, 1, 3, 3});
  });
  EXPECT_NE(e.find("[max_pool2d_backward] index 9"), std::string::npos) << e;
}

// log_softmax, cross entropy (mean, sum, none, class weights,
// ignore_index) and their gradients, max/argmax along a dim, dropout's
// Philox draws: the CPU's bits.
TEST_F(Vulkan, LossesAndReductionsGiveTheCpuBits) {
  Generator g = Generator::philox(41);
  Tensor logits = randn({37, 10}, kFloat32, g);
  Tensor target = randint(0, 10, {37}, kInt64, g);
  target.view({37})[5].fill_(-100);
  Tensor weight = rand({10}, kFloat32, g);
  using nn::functional::CrossEntropyOptions;
  using nn::functional::Reduction;
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    for (bool weighted : {false, true}) {
      const std::string what = std::string("cross_entropy ") +
          nn::functional::reduction_name(r) + (weighted ? " weighted" : "");
      CrossEntropyOptions o = CrossEntropyOptions().reduction(r);
      CrossEntropyOptions od = CrossEntropyOptions().reduction(r);
      if (weighted) {
        o.weight(weight);
        od.weight(weight.to(dev));
      }
      Tensor cl = logits.clone().requires_grad_(true);
      Tensor dl = logits.to(dev).requires_grad_(true);
      Tensor loss = nn::functional::cross_entropy(cl, target, o);
      Tensor dloss = nn::functional::cross_entropy(dl, target.to(dev), od);
      expect_same_bits(loss, dloss, what.c_str());
      Tensor go = r == Reduction::None ? randn({37}, kFloat32, g)
                                       : full({}, 0.75, kFloat32);
      loss.backward(go);
      dloss.backward(go.dim() == 0 ? go.to(dev) : go.to(dev));
      expect_same_bits(cl.grad(), dl.grad(), (what + " gradient").c_str());
    }
  }
  Tensor t = tricky({9, 40}, 42);
  for (int64_t d : {0, 1}) {
    auto [v, i] = max(t, d);
    auto [dv, di] = max(t.to(dev), d);
    expect_same_bits(v, dv, "max values");
    expect_same_bits(i, di, "max indices");
    expect_same_bits(argmin(t, d), argmin(t.to(dev), d), "argmin");
  }
  expect_same_bits(max(t), max(t.to(dev)), "max over everything");
  expect_same_bits(
      nn::functional::softmax(logits, 1),
      nn::functional::softmax(logits.to(dev), 1),
      "softmax");
  // Dropout from a Philox generator: the same mask as the CPU's fill.
  Tensor x = randn({33, 17}, kFloat32, g);
  Generator a = Generator::philox(5), b = Generator::philox(5);
  for (double p : {0.25, 0.5, 0.9}) {
    expect_same_bits(
        nn::functional::dropout(x, p, true, a),
        nn::functional::dropout(x.to(dev), p, true, b),
        "dropout");
  }
  EXPECT_EQ(fingerprint(a.get_state()), fingerprint(b.get_state()));
  // From a CPU mt19937 generator the mask is drawn on the host.
  Generator m1 = Generator().manual_seed(3), m2 = Generator().manual_seed(3);
  expect_same_bits(
      nn::functional::dropout(x, 0.3, true, m1),
      nn::functional::dropout(x.to(dev), 0.3, true, m2),
      "dropout (mt19937)");
  // The device's default generator is a Philox stream seeded by
  // manual_seed, with the CPU Philox's numbers.
  manual_seed(77);
  Tensor drawn = ones({1000}, kFloat32, dev).bernoulli_(0.5);
  Tensor want = ones({1000}).bernoulli_(0.5, Generator::philox(77));
  expect_same_bits(want, drawn, "bernoulli_ from the device generator");
}

// The fast variants on the device: max_pool2d's backward with atomic
// additions (overlapping windows), the weight gradient's "fast" algorithm
// (chunk partials added atomically) equal to the deterministic results up
// to rounding; forcing the fast algorithm with determinism on raises the
// alert naming the device op, or with warn_only warns and runs.
TEST_F(Vulkan, FastVariantsAndTheAlert) {
  Generator g = Generator::philox(71);
  Tensor t = randn({2, 3, 15, 15}, kFloat32, g);
  auto [v, i] = nn::functional::max_pool2d_with_indices(t, {3, 3}, {1, 1});
  Tensor gp = randn(v.sizes(), kFloat32, g);
  Tensor want = nn::functional::max_pool2d_backward(gp, i, t.sizes());
  {
    DeterministicGuard fast(false);
    Tensor got =
        nn::functional::max_pool2d_backward(gp.to(dev), i.to(dev), t.sizes());
    EXPECT_TRUE(allclose(got.cpu(), want, 1e-5, 1e-5));
  }
  Tensor x = randn({70, 2, 12, 12}, kFloat32, g);
  Tensor go = randn({70, 4, 12, 12}, kFloat32, g);
  Tensor chunked =
      conv2d_backward_weight(go, x, {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1);
  backends::conv::force_algorithm("backward_weight", "fast");
  {
    DeterministicGuard fast(false);
    Tensor got = conv2d_backward_weight(
        go.to(dev), x.to(dev), {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1);
    EXPECT_TRUE(allclose(got.cpu(), chunked, 1e-4, 1e-4));
  }
  {
    DeterministicGuard det(true);
    const std::string e = error_of<NondeterministicError>([&] {
      conv2d_backward_weight(
          go.to(dev), x.to(dev), {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1);
    });
    EXPECT_NE(
        e.find("conv2d_backward_weight (fast) on " + dev.str()),
        std::string::npos)
        << e;
  }
  {
    std::vector<std::string> warned;
    determinism::set_warning_handler(
        [&](std::string_view op, std::string_view) {
          warned.emplace_back(op);
        });
    DeterministicGuard warn(true, /*warn_only=*/true);
    Tensor got = conv2d_backward_weight(
        go.to(dev), x.to(dev), {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1);
    determinism::set_warning_handler({});
    EXPECT_TRUE(allclose(got.cpu(), chunked, 1e-4, 1e-4));
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_NE(warned[0].find("on " + dev.str()), std::string::npos);
  }
  backends::conv::force_algorithm("backward_weight", "");
}

// The products the CPU splits along k (Note [Split-K]): with deterministic
// algorithms the CPU's chunks added in order, the CPU's bits, whatever the
// workspace holds; without, atomic additions, equal up to rounding.
TEST_F(Vulkan, SplitKProductsFollowTheCpu) {
  Generator g = Generator::philox(61);
  Tensor a = randn({8, 20000}, kFloat32, g), b = randn({20000, 8}, kFloat32, g);
  DeterministicGuard det(true);
  Tensor want = mm(a, b);
  for (const char* config : {":4096:8", ":1:1"}) {
    backends::gemm::set_workspace_config(config); // all 5 partials, or 4 + 1
    expect_same_bits(want, mm(a.to(dev), b.to(dev)), config);
  }
  backends::gemm::set_workspace_config(":8192:1"); // the default's size
  DeterministicGuard fast(false);
  EXPECT_TRUE(allclose(mm(a.to(dev), b.to(dev)).cpu(), want, 1e-4, 1e-3));
}

// index_select, index_add_ and embedding's gradient: with deterministic
// algorithms the CPU's bits (each row's additions in index order); without,
// the atomic variant, whose sums differ from those only by rounding (that
// they really vary from run to run was shown by hand: 8 runs of 200000
// rows into 3 gave 8 different sums on lavapipe; a test cannot wait for a
// race).
TEST_F(Vulkan, IndexFamilyHasBothVariants) {
  Generator g = Generator::philox(51);
  Tensor src = randn({3000, 5}, kFloat32, g);
  Tensor idx = randint(0, 7, {3000}, kInt64, g);
  Tensor want = zeros({7, 5});
  {
    DeterministicGuard det(true);
    want.index_add_(0, idx, src, 0.5);
    Tensor got = zeros({7, 5}, kFloat32, dev);
    got.index_add_(0, idx.to(dev), src.to(dev), 0.5);
    expect_same_bits(want, got, "index_add_ (deterministic)");
  }
  {
    DeterministicGuard det(false);
    Tensor fast = zeros({7, 5}, kFloat32, dev);
    fast.index_add_(0, idx.to(dev), src.to(dev), 0.5);
    EXPECT_TRUE(allclose(fast.cpu(), want, 1e-4, 1e-4));
  }
  expect_same_bits(
      index_select(src, 0, idx.narrow(0, 0, 40)),
      index_select(src.to(dev), 0, idx.narrow(0, 0, 40).to(dev)),
      "index_select");
  // An embedding layer's forward and weight gradient.
  DeterministicGuard det(true);
  Tensor w = randn({7, 5}, kFloat32, g);
  Tensor cw = w.clone().requires_grad_(true);
  Tensor dw = w.to(dev).requires_grad_(true);
  Tensor ids = idx.narrow(0, 0, 600).reshape({20, 30});
  Tensor go = randn({20, 30, 5}, kFloat32, g);
  Tensor y = nn::functional::embedding(ids, cw);
  Tensor dy = nn::functional::embedding(ids.to(dev), dw);
  expect_same_bits(y, dy, "embedding");
  y.backward(go);
  dy.backward(go.to(dev));
  expect_same_bits(cw.grad(), dw.grad(), "embedding's weight gradient");
  // A bad index names the op and changes nothing.
  Tensor before = dw.detach().clone();
  Tensor bad = full({3}, 9.0, kInt64, dev);
  const std::string e = error_of<IndexError>([&] {
    dw.detach().index_add_(0, bad, ones({3, 5}, kFloat32, dev));
  });
  EXPECT_NE(e.find("[index_add_] index 9"), std::string::npos) << e;
  expect_same_bits(before.cpu(), dw.detach(), "after the bad index");
}

// `ditto train --device`: the real binary on the small IDX dataset of the
// train tests, the CNN (conv, pool, dropout, linear, cross entropy) on the
// device against the CPU: the same fingerprint with SGD and with Adam, with
// micro-batches (dropout from Philox streams, drawn on the device), and
// across a checkpoint taken on the CPU and resumed on the device. On a
// device that flushes float32 denormals a denormal may arise in training:
// the message says so.
TEST_F(Vulkan, TrainingOnTheDeviceGivesTheCpuFingerprint) {
  // The build's binary, or DITTO_CLI's (gpu-bundle/run sets it).
  auto cli = [] {
    const char* env = std::getenv("DITTO_CLI");
    return std::string(env != nullptr && *env != 0 ? env : DITTO_CLI);
  };
  const fs::path root = test::make_suite_root("ditto_device_train");
  auto train = [&](const std::string& args, const std::string& out) {
    test::Result r = test::run_shell(
        test::quote(cli()) + " train --data-root " +
            test::quote((root / "data").string()) +
            " --batch-size 32 --log-every 100 --out " +
            test::quote((root / out).string()) + " " + args,
        root);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    return test::fingerprint_of(r);
  };
  const std::string on_device = " --device " + dev.str();
  const bool flush = !vulkan_device_info(dev.index).denormals_kept;
  for (const std::string args :
       {"--max-steps 3",
        "--max-steps 2 --optimizer adam --lr 0.001",
        "--max-steps 2 --micro-batches 2"}) {
    const std::string cpu = train(args, "cpu");
    EXPECT_EQ(cpu.size(), 16u) << args;
    EXPECT_EQ(cpu, train(args + on_device, "device"))
        << args << " (float32 denormals flushed: " << flush << ")";
  }
  // A checkpoint at step 2 on the CPU, resumed on the device to step 4.
  const std::string straight = train("--max-steps 4", "straight");
  train(
      "--max-steps 2 --checkpoint-every 2 --checkpoint-dir " +
          test::quote((root / "ckpt").string()),
      "first");
  EXPECT_EQ(
      straight,
      train(
          "--max-steps 4 --checkpoint-dir " +
              test::quote((root / "ckpt").string()) + " --resume latest" +
              on_device,
          "resumed"));
  fs::remove_all(root);
}

// Every model `ditto models` lists (the CNN's longer runs are above) trains
// on the device to the CPU's fingerprint: two steps of two micro-batches
// (dropout's streams drawn on the device), AdamW; the GPT then generates
// (on the CPU, from the device's weights) the CPU run's text.
TEST_F(Vulkan, EveryLibraryModelTrainsToTheCpuFingerprint) {
  const std::string bin = [] {
    const char* env = std::getenv("DITTO_CLI");
    return std::string(env != nullptr && *env != 0 ? env : DITTO_CLI);
  }();
  const fs::path root = test::make_suite_root("ditto_device_models");
  test::Result listed = test::run_shell(test::quote(bin) + " models", root);
  ASSERT_EQ(listed.code, 0) << listed.err;
  std::vector<std::string> models;
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);) {
    models.push_back(line.substr(0, line.find(' ')));
  }
  ASSERT_GE(models.size(), 4u) << listed.out;
  auto train = [&](const std::string& model, const std::string& where) {
    test::Result r = test::run_shell(
        test::quote(bin) + " train --model " + model + " --data-root " +
            test::quote((root / "data").string()) +
            " --max-steps 2 --batch-size 8 --micro-batches 2 --optimizer "
            "adamw --lr 0.001 --generate 8 --out " +
            test::quote((root / (model + "_" + where)).string()) +
            " --device " + where,
        root);
    EXPECT_EQ(r.code, 0) << model << " on " << where << "\n" << r.err;
    const size_t at = r.out.find("generated");
    return std::make_pair(
        test::fingerprint_of(r),
        at == std::string::npos ? std::string()
                                : r.out.substr(at, r.out.find('\n', at) - at));
  };
  for (const std::string& model : models) {
    const auto cpu = train(model, "cpu");
    EXPECT_EQ(cpu.first.size(), 16u) << model;
    EXPECT_EQ(cpu, train(model, dev.str())) << model;
    EXPECT_EQ(model == "gpt", !cpu.second.empty()) << model;
  }
  fs::remove_all(root);
}

TEST_F(Vulkan, WhatHasNoKernelRaisesNamingTheOpAndDevice) {
  Tensor d = ones({4, 4}, kFloat32, dev);
  const std::string e = error_of<NotImplementedError>([&] { tanh(d); });
  EXPECT_NE(e.find("[tanh]"), std::string::npos) << e;
  EXPECT_NE(e.find(dev.str()), std::string::npos) << e;
  EXPECT_NE(
      error_of<NotImplementedError>([&] { prod(d); }).find("[prod]"),
      std::string::npos);
  // Mixed devices: a clear error, as in PyTorch, except a 0-dim CPU tensor.
  const std::string mixed = error_of<ValueError>([&] { add(d, ones({4, 4})); });
  EXPECT_NE(mixed.find("same device"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("cpu"), std::string::npos) << mixed;
  // Host access to device memory, and dtypes without a kernel.
  EXPECT_NE(
      error_of<ValueError>([&] {
        d.data_ptr<float>();
      }).find("copy them with .cpu()"),
      std::string::npos);
  EXPECT_NE(
      error_of<NotImplementedError>(
          [&] { add(d.cpu().to(kFloat64).to(dev), 1.0); }),
      "");
  // Nothing changed on the way: d still holds ones.
  expect_same_bits(ones({4, 4}), d, "d after the errors");
}

TEST_F(Vulkan, PrintsAndReadsItems) {
  Tensor d = full({2}, 1.5, kFloat32, dev);
  EXPECT_EQ(
      d.to_string(), "tensor([1.5000, 1.5000], device='" + dev.str() + "')");
  EXPECT_EQ(d[1].item<float>(), 1.5f);
}

// The op-records suite on the device (Note [Op records]): every sample of
// every op with a Vulkan kernel, its tensor inputs moved to the device in
// their layout, gives the CPU's bits; a sample whose dtype the device does
// not hold raises a ditto error naming the op instead. Each such op must run
// at least one sample on the device. Factories (no tensor input) are in
// FactoriesAndFills.
TEST_F(Vulkan, OpRecordsSamplesGiveTheCpuBits) {
  const bool flush = !vulkan_device_info(dev.index).denormals_kept;
  int ops_run = 0;
  for (const OpRecord* r : op_records()) {
    if (!has_device_kernel(r->name, kVulkan) || r->random) {
      continue;
    }
    DeterministicGuard det(
        r->determinism() == Determinism::kVariants || r->uninitialized_output);
    int ran = 0, refused = 0, samples = 0;
    for (Dtype dt : r->dtypes) {
      for (const Sample& s : r->samples({dt, false})) {
        // A sample whose tensors are all 0-dim (kept on the CPU below, as
        // scalars) does not reach the device.
        bool has_tensor = false;
        for (const Tensor& t : s.inputs) {
          has_tensor = has_tensor || (t.defined() && t.dim() > 0);
        }
        if (!has_tensor) {
          continue;
        }
        ++samples;
        const std::string where = r->name + " " + std::string(dtype_name(dt)) +
            " sample '" + s.label + "'";
        const std::vector<Tensor> want = test::run(*r, s);
        std::vector<Tensor> got;
        const std::string error = error_of([&] {
          std::vector<Tensor> inputs;
          for (const Tensor& t : test::copies(s.inputs)) {
            // A 0-dim input stays on the CPU (a scalar), as users pass them.
            inputs.push_back(t.defined() && t.dim() > 0 ? t.to(dev) : t);
          }
          got = s.call(inputs);
        });
        if (!error.empty()) {
          // The op refuses, or the copy of an input its dtype.
          EXPECT_TRUE(
              error.find("[" + r->name + "]") != std::string::npos ||
              error.find("[to]") != std::string::npos)
              << where << ": " << error;
          // (Or a tensor the sample holds itself, such as a class weight,
          // stays on the CPU: the op refuses the mix, as PyTorch does.)
          const bool dtype_refused =
              error.find("no kernel for") != std::string::npos ||
              error.find("on the same device") != std::string::npos ||
              error.find("no kernel on") != std::string::npos ||
              error.find("not supported yet") != std::string::npos ||
              error.find("not supported on") != std::string::npos;
          EXPECT_TRUE(dtype_refused) << where << ": " << error;
          ++refused;
          continue;
        }
        ++ran;
        ASSERT_EQ(got.size(), want.size()) << where;
        for (size_t k = 0; k < want.size(); ++k) {
          if (!want[k].defined()) {
            continue;
          }
          EXPECT_TRUE(got[k].is_vulkan()) << where << " output " << k;
          if (want[k].dtype() == kFloat32 && flush) {
            expect_same_bits(want[k], got[k], where.c_str(), true);
          } else {
            EXPECT_EQ(fingerprint(want[k]), fingerprint(got[k]))
                << where << " output " << k;
          }
        }
      }
    }
    if (samples > 0) {
      EXPECT_GT(ran, 0) << r->name << ": every sample was refused (" << refused
                        << ")";
      ++ops_run;
    }
  }
  EXPECT_GE(ops_run, 20);
}

} // namespace
} // namespace ditto
