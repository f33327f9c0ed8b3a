// The declared ops' C++ surface and records agree with their declarations
// (ditto/ops/*.ops.toml, Note [One declaration per op] in record.cpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ditto/ditto.h"
#include "ditto/ops/detail/declaration.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

bool has_variant(const detail::OpDeclaration& d, const std::string& v) {
  return ("," + d.variants + ",").find(v) != std::string::npos;
}

TEST(Declarations, EveryDeclaredOpHasItsRecordsAndCallables) {
  const auto& decls = detail::op_declarations();
  ASSERT_GE(decls.size(), 11u);
  std::set<std::string> seen;
  for (const auto& d : decls) {
    SCOPED_TRACE(d.name);
    // name(...) or name.overload(...): each declared once
    const std::string head = d.schema.substr(0, d.schema.find('('));
    EXPECT_TRUE(seen.insert(head).second) << "declared twice";
    EXPECT_TRUE(head == d.name || head.rfind(d.name + ".", 0) == 0) << d.schema;
    const OpRecord* r = find_op_record(d.name);
    ASSERT_NE(r, nullptr) << "no record";
    bool function = false, method = false;
    for (const auto& c : r->callables) {
      function |= c.rfind("ditto::" + d.name + "(", 0) == 0;
      method |= c.rfind("Tensor::" + d.name + "(", 0) == 0;
    }
    EXPECT_EQ(function, has_variant(d, "function"));
    EXPECT_EQ(method, has_variant(d, "method"));
    const OpRecord* ri = find_op_record(d.name + "_");
    EXPECT_EQ(ri != nullptr, has_variant(d, "inplace"));
    if (ri != nullptr) {
      EXPECT_TRUE(ri->inplace);
    }
  }
}

// A kernel op runs under its own name: its errors name it.
TEST(Declarations, KernelOpsRunUnderTheirNames) {
  for (const auto& d : detail::op_declarations()) {
    SCOPED_TRACE(d.name);
    const OpRecord* r = find_op_record(d.name);
    ASSERT_NE(r, nullptr);
    if (!r->bad_samples) {
      ADD_FAILURE() << "no bad samples";
      continue;
    }
    for (const Sample& s : r->bad_samples()) {
      try {
        s.call(s.inputs);
        ADD_FAILURE() << "accepted " << s.label;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(d.name), std::string::npos)
            << e.what();
      }
    }
  }
}

// Note [Device kernels are declared]: the devices a declaration names (a
// shader code, `devices`) reach the op's record, in-place forms included,
// and the device's op list is the records' (no list of its own).
TEST(Declarations, DeclaredDevicesReachTheRecords) {
  ASSERT_FALSE(detail::declared_devices().empty());
  for (const auto& [name, device] : detail::declared_devices()) {
    SCOPED_TRACE(name);
    ASSERT_NE(find_op_record(name), nullptr);
    EXPECT_TRUE(has_device_kernel(name, device));
  }
  EXPECT_TRUE(has_device_kernel("mm", kVulkan)); // a body's `devices`
  EXPECT_TRUE(has_device_kernel("exp_", kVulkan)); // a shader code's
  EXPECT_TRUE(has_device_kernel("sum", kVulkan)); // a record's
  EXPECT_FALSE(has_device_kernel("pow", kVulkan));
  EXPECT_FALSE(has_device_kernel("no_such_op", kVulkan));
  EXPECT_TRUE(has_device_kernel("pow", kCPU));
  std::vector<std::string> on_device = device_ops(kVulkan);
  EXPECT_TRUE(std::is_sorted(on_device.begin(), on_device.end()));
  int with_record_devices = 0;
  for (const OpRecord* r : op_records()) {
    with_record_devices += !r->devices.empty();
  }
  EXPECT_EQ(size_t(with_record_devices), on_device.size());
}

// The LibTorch-style free functions, methods and in-place forms the
// declarations give, called as a C++ user would.
TEST(Declarations, GeneratedFormsAgree) {
  Tensor x = linspace(0.25, 2.5, 37, kFloat64);
  Tensor f = exp(x);
  Tensor m = x.exp();
  Tensor y = x.clone();
  Tensor& r = y.exp_();
  EXPECT_TRUE(r.is_same(y));
  EXPECT_TRUE(equal(f, m));
  EXPECT_TRUE(equal(f, y));
  EXPECT_TRUE(equal(negative(x), neg(x)));
  EXPECT_TRUE(equal(absolute(neg(x)), x));
}

// Issue 59: every operator of PyTorch's Core ATen set
// (ditto/ops/core_aten.toml, 193 from PyTorch's IRs page) is answered by op
// records that exist, or is a metadata read; the two FFT operators (complex
// dtypes) are the only ones ditto lacks, so a record removed or renamed fails
// here.
TEST(Declarations, EveryCoreAtenOperatorHasItsRecords) {
  const auto& aten = detail::core_aten_ops();
  EXPECT_EQ(aten.size(), 193u);
  // The backward ops that have a fast variant are in the determinism
  // registry (`ditto ops` lists both).
  std::set<std::string> registry;
  for (const auto& op : determinism::registered_ops()) {
    registry.insert(op.name);
  }
  std::set<std::string> names, missing, metadata;
  for (const auto& a : aten) {
    SCOPED_TRACE(a.name);
    EXPECT_TRUE(names.insert(a.name).second) << "listed twice";
    EXPECT_EQ(a.name.rfind("aten.", 0), 0u);
    const int answers = int(!a.ops.empty()) + int(!a.metadata.empty()) +
        int(!a.missing.empty());
    EXPECT_EQ(answers, 1);
    for (const auto& op : a.ops) {
      EXPECT_TRUE(find_op_record(op) != nullptr || registry.count(op))
          << "no record " << op;
    }
    if (!a.missing.empty()) {
      missing.insert(a.name);
    }
    if (!a.metadata.empty()) {
      metadata.insert(a.name);
    }
  }
  EXPECT_EQ(missing, (std::set<std::string>{"aten._fft_c2r", "aten._fft_r2c"}));
  EXPECT_EQ(
      metadata,
      (std::set<std::string>{
          "aten._local_scalar_dense",
          "aten.sym_is_contiguous",
          "aten.sym_numel",
          "aten.sym_size.int",
          "aten.sym_storage_offset",
          "aten.sym_stride.int"}));
}

// The integer and bool kernels: torch's results, and floating tensors
// refused without a result.
TEST(Declarations, BitwiseOpsOnIntegersAndBool) {
  Tensor a = tensor(std::vector<int64_t>{5, 3, -2, 0});
  Tensor b = tensor(std::vector<int64_t>{3, 6, 7, -1});
  EXPECT_TRUE(
      equal(bitwise_and(a, b), tensor(std::vector<int64_t>{1, 2, 6, 0})));
  EXPECT_TRUE(
      equal(bitwise_or(a, b), tensor(std::vector<int64_t>{7, 7, -1, -1})));
  EXPECT_TRUE(
      equal(bitwise_xor(a, b), tensor(std::vector<int64_t>{6, 5, -7, -1})));
  EXPECT_TRUE(
      equal(bitwise_not(a), tensor(std::vector<int64_t>{-6, -4, 1, -1})));
  Tensor t = tensor({true, false, true});
  EXPECT_TRUE(equal(bitwise_not(t), tensor({false, true, false})));
  EXPECT_TRUE(equal(
      bitwise_xor(t, tensor({true, true, false})),
      tensor({false, true, true})));
  EXPECT_TRUE(equal(
      bitwise_and(a.to(kInt32), 6), tensor(std::vector<int32_t>{4, 2, 6, 0})));
  Tensor f = tensor({1.5, 2.0, 3.0, 4.0});
  EXPECT_THROW(bitwise_and(f, f), TypeError);
  EXPECT_THROW(bitwise_not(f), TypeError);
  Tensor c = a.clone();
  EXPECT_THROW(c.bitwise_and_(f), TypeError);
  EXPECT_TRUE(equal(c, a));
}

// Issue 59: every op whose PyTorch kernel is nondeterministic (CPU or
// CUDA) is computed by ditto records that are deterministic on every path
// or have a deterministic variant the mode picks, never an alert.
TEST(Declarations, EveryPytorchNondeterministicOpIsDeterministicHere) {
  const auto& list = detail::pytorch_nondeterministic_ops();
  EXPECT_GE(list.size(), 20u);
  std::map<std::string, bool> registry; // name -> has a deterministic variant
  for (const auto& op : determinism::registered_ops()) {
    registry[op.name] = op.has_deterministic_alternative;
  }
  for (const auto& p : list) {
    SCOPED_TRACE(p.torch);
    for (const auto& op : p.ops) {
      const OpRecord* r = find_op_record(op);
      if (r != nullptr) {
        EXPECT_NE(r->determinism(), Determinism::kAlert) << op;
      } else {
        ASSERT_TRUE(registry.count(op)) << "no record or registry entry " << op;
        EXPECT_TRUE(registry[op]) << op << " alerts";
      }
    }
  }
}

} // namespace
} // namespace ditto
