// The declared ops' C++ surface and records agree with their declarations
// (ditto/ops/*.ops.toml, Note [One declaration per op] in record.cpp).

#include <gtest/gtest.h>

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
    EXPECT_TRUE(seen.insert(d.name).second) << "declared twice";
    EXPECT_EQ(d.schema.rfind(d.name + "(", 0), 0u) << d.schema;
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
    ASSERT_TRUE(r->bad_samples);
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

} // namespace
} // namespace ditto
