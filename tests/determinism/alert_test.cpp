#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ditto/ditto.h"

using namespace ditto;

namespace {
class Alert : public ::testing::Test {
 protected:
  void TearDown() override {
    use_deterministic_algorithms(false);
    determinism::set_warning_handler({});
  }
};
} // namespace

TEST_F(Alert, OffDoesNothingOnErrorsWarnOnlyWarns) {
  EXPECT_NO_THROW(alert_not_deterministic("my_op"));
  use_deterministic_algorithms(true);
  try {
    alert_not_deterministic("my_op");
    FAIL();
  } catch (const NondeterministicError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(
            "my_op does not have a deterministic implementation, but you set "
            "'ditto::use_deterministic_algorithms(true)'.",
            0),
        0u);
  }
  std::vector<std::string> seen;
  determinism::set_warning_handler(
      [&](std::string_view op, std::string_view msg) {
        seen.emplace_back(op);
        EXPECT_NE(msg.find("warn_only=*/true"), std::string_view::npos);
      });
  use_deterministic_algorithms(true, true);
  EXPECT_NO_THROW(alert_not_deterministic("my_op"));
  EXPECT_NO_THROW(alert_not_deterministic("my_op"));
  EXPECT_EQ(seen, (std::vector<std::string>{"my_op", "my_op"}));
  set_deterministic_debug_mode("error");
  EXPECT_THROW(alert_not_deterministic("my_op"), NondeterministicError);
}

TEST_F(Alert, GuardNestsAndRestoresOnExceptions) {
  use_deterministic_algorithms(false, true);
  {
    DeterministicGuard outer(true);
    EXPECT_TRUE(are_deterministic_algorithms_enabled());
    EXPECT_FALSE(is_deterministic_algorithms_warn_only_enabled());
    {
      DeterministicGuard inner(true, true);
      EXPECT_EQ(get_deterministic_debug_mode(), 1);
    }
    EXPECT_EQ(get_deterministic_debug_mode(), 2);
    try {
      DeterministicGuard g(false);
      throw std::runtime_error("x");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(get_deterministic_debug_mode(), 2);
  }
  EXPECT_FALSE(are_deterministic_algorithms_enabled());
  EXPECT_TRUE(is_deterministic_algorithms_warn_only_enabled());
  auto p = determinism::current_policy();
  EXPECT_FALSE(p.deterministic);
  EXPECT_TRUE(p.warn_only);
}

TEST_F(Alert, CustomOpsRegister) {
  determinism::declare_nondeterministic(
      "my_scatter", "atomic float adds from several threads", true);
  auto ops = determinism::registered_ops();
  auto it = std::find_if(ops.begin(), ops.end(), [](const auto& o) {
    return o.name == "my_scatter";
  });
  ASSERT_NE(it, ops.end());
  EXPECT_TRUE(it->has_deterministic_alternative);
  EXPECT_NE(
      determinism::registry_markdown().find("| `my_scatter` | yes |"),
      std::string::npos);
  EXPECT_THROW(determinism::declare_nondeterministic("", "x"), ValueError);
  EXPECT_THROW(determinism::declare_nondeterministic("op", ""), ValueError);
}

TEST_F(Alert, ResizeFillsOnlyTheGrownPart) {
  Tensor t = tensor<int32_t>({1, 2, 3});
  Tensor view = t.narrow(0, 0, 2);
  use_deterministic_algorithms(true);
  t.resize_({2, 3});
  EXPECT_EQ(t.sizes(), (Shape{2, 3}));
  const int32_t* p = t.data_ptr<int32_t>();
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[2], 3);
  for (int i = 3; i < 6; ++i) {
    EXPECT_EQ(p[i], std::numeric_limits<int32_t>::max());
  }
  EXPECT_EQ(view.data_ptr<int32_t>()[1], 2); // views see the new memory
  Tensor f = zeros({1});
  f.resize_({4});
  EXPECT_EQ(f.data_ptr<float>()[0], 0.0f);
  EXPECT_TRUE(std::isnan(f.data_ptr<float>()[3]));
  Tensor b = tensor<bool>({false});
  b.resize_({2});
  EXPECT_TRUE(b.data_ptr<bool>()[1]);
  use_deterministic_algorithms(false);
  t.resize_({1}); // shrinking keeps the storage
  EXPECT_EQ(t.item<int32_t>(), 1);
  float blob[2] = {1, 2};
  Tensor borrowed = from_blob(blob, {2}, kFloat32);
  EXPECT_THROW(borrowed.resize_({10}), ValueError);
  EXPECT_EQ(borrowed.sizes(), (Shape{2}));
  EXPECT_THROW(t.resize_({-1}), ValueError);
}
