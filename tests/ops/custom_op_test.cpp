// A user-defined op end to end: its record registered and listed, framed
// and traced under its name, one node recorded with the policy in force,
// its variant chosen by the deterministic mode, and an alert for a path
// without a deterministic variant.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ditto/ditto.h"
#include "ditto/ops/custom.h"
#include "ditto/ops/detail/sample_util.h"

using namespace ditto;

namespace {

namespace s = detail::samples;

// Sums the rows of x: the "fast" variant in pairs from the last row, the
// deterministic one in order (both are exact here for small integers, so
// the test sees which one ran through `last_variant`).
std::string last_variant;

CustomOp& row_sum_op();

std::vector<Sample> row_sum_samples(const SampleSpec& spec) {
  Tensor x = s::varied({5, 3}, spec.dtype, 8.0, 1);
  return {{"matrix", {x}, [](const std::vector<Tensor>& in) {
             return row_sum_op()(in);
           }}};
}

CustomOp& row_sum_op() {
  static CustomOp op(
      {.name = "test_row_sum",
       .family = "custom",
       .callables = {"row_sum(x)"},
       .nondeterministic =
           {{.entry = "test_row_sum",
             .reason = "the fast variant adds rows in pairs (a test op)",
             .cost = "1.0x"}},
       .samples = row_sum_samples},
      [](CustomOpContext& ctx, const std::vector<Tensor>& in) {
        last_variant = ctx.deterministic() ? "deterministic" : "fast";
        ctx.save_for_backward({in[0]});
        return std::vector<Tensor>{sum(in[0], {0})};
      },
      [](CustomOpContext& ctx, const std::vector<Tensor>& g) {
        last_variant =
            ctx.deterministic() ? "backward deterministic" : "backward fast";
        const Tensor x = ctx.saved_tensors()[0];
        return std::vector<Tensor>{g[0].unsqueeze(0).expand(x.sizes())};
      });
  return op;
}

CustomOp& racy_op() {
  static CustomOp op(
      {.name = "test_racy_scale",
       .family = "custom",
       .callables = {"racy_scale(x)"},
       .nondeterministic =
           {{.entry = "test_racy_scale_backward",
             .reason = "its backward accumulates in thread order (a test op)",
             .has_deterministic_variant = false}},
       .samples = row_sum_samples},
      [](CustomOpContext&, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{mul(in[0], 3.0)};
      },
      [](CustomOpContext&, const std::vector<Tensor>& g) {
        return std::vector<Tensor>{mul(g[0], 3.0)};
      });
  return op;
}

TEST(CustomOp, IsRecordedListedAndRegistered) {
  const CustomOp& op = row_sum_op();
  ASSERT_EQ(find_op_record("test_row_sum"), &op.record());
  EXPECT_EQ(op.record().determinism(), Determinism::kVariants);
  EXPECT_NE(
      op_records_markdown().find("| `test_row_sum` | custom | variants |"),
      std::string::npos);
  auto entry = determinism::find_registered("test_row_sum");
  ASSERT_TRUE(entry.has_value());
  EXPECT_TRUE(entry->has_deterministic_alternative);
  EXPECT_EQ(entry->cost, "1.0x");
  // A second op of the same name is refused.
  EXPECT_THROW(
      CustomOp(
          {.name = "test_row_sum",
           .family = "custom",
           .callables = {"x"},
           .deterministic_because = "x",
           .samples = row_sum_samples},
          [](CustomOpContext&, const std::vector<Tensor>& in) { return in; }),
      ValueError);
}

TEST(CustomOp, TracedUnderItsNameWithItsInnerOpsNested) {
  Tensor x = s::varied({5, 3}, kFloat32, 8.0, 1);
  std::vector<std::string> ops;
  size_t inputs = 0, outputs = 0;
  trace::set_hook([&](const trace::Event& e) {
    ops.emplace_back(e.op);
    inputs = e.inputs.size();
    outputs = e.outputs.size();
  });
  std::vector<Tensor> y = row_sum_op()({x});
  trace::set_hook({});
  ASSERT_EQ(ops, std::vector<std::string>{"test_row_sum"});
  EXPECT_EQ(inputs, 1u);
  EXPECT_EQ(outputs, 1u);
  EXPECT_TRUE(equal(y[0], sum(x, {0})));
}

TEST(CustomOp, TheModeChoosesTheVariantForwardAndBackward) {
  Tensor x = s::varied({5, 3}, kFloat64, 8.0, 1).requires_grad_();
  Tensor y;
  {
    DeterministicGuard det(true);
    y = row_sum_op()({x})[0];
    EXPECT_EQ(last_variant, "deterministic");
  }
  ASSERT_TRUE(y.requires_grad());
  ASSERT_NE(y.grad_fn(), nullptr);
  // The backward runs under the policy recorded with the node.
  DeterministicGuard off(false);
  y.sum().backward();
  EXPECT_EQ(last_variant, "backward deterministic");
  EXPECT_TRUE(equal(x.grad(), ones_like(x)));
  row_sum_op()({x.detach()});
  EXPECT_EQ(last_variant, "fast");
}

TEST(CustomOp, GradcheckPasses) {
  Tensor x = s::varied({4, 3}, kFloat64, 2.0, 2).requires_grad_();
  auto r = autograd::gradcheck(
      [](const std::vector<Tensor>& in) { return row_sum_op()(in)[0]; }, {x});
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(CustomOp, APathWithoutADeterministicVariantAlertsWhenItRuns) {
  Tensor x = s::varied({5, 3}, kFloat32, 8.0, 1).requires_grad_();
  DeterministicGuard det(true);
  // The forward is deterministic: no alert until the backward runs.
  Tensor y = racy_op()({x})[0];
  try {
    y.sum().backward();
    FAIL() << "the backward did not alert";
  } catch (const NondeterministicError& e) {
    EXPECT_NE(
        std::string(e.what()).find("test_racy_scale_backward"),
        std::string::npos)
        << e.what();
  }
  EXPECT_EQ(racy_op().record().determinism(), Determinism::kAlert);
}

TEST(CustomOp, WithoutABackwardAGradientRaisesNamingTheOp) {
  static CustomOp op(
      {.name = "test_no_backward",
       .family = "custom",
       .callables = {"f(x)"},
       .deterministic_because = "elementwise",
       .samples = row_sum_samples},
      [](CustomOpContext&, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{mul(in[0], 2.0)};
      });
  EXPECT_FALSE(op.record().not_differentiable.empty());
  Tensor x = s::varied({3}, kFloat32, 2.0, 3).requires_grad_();
  Tensor y = op({x})[0];
  try {
    y.sum().backward();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test_no_backward"), std::string::npos)
        << e.what();
  }
}

// The factor reaches the forward and the backward as ctx.data(), per call.
CustomOp& scale_by_data_op() {
  static CustomOp op(
      {.name = "test_scale_by_data",
       .family = "custom",
       .callables = {"scale(x, factor)"},
       .deterministic_because = "elementwise",
       .samples =
           [](const SampleSpec& spec) {
             Tensor x = s::varied({4}, spec.dtype, 2.0, 4);
             return std::vector<Sample>{
                 {"vector", {x}, [](const std::vector<Tensor>& in) {
                    return scale_by_data_op()(
                        in, std::make_shared<double>(3.0));
                  }}};
           }},
      [](CustomOpContext& ctx, const std::vector<Tensor>& in) {
        double k = *static_cast<const double*>(ctx.data().get());
        return std::vector<Tensor>{mul(in[0], k)};
      },
      [](CustomOpContext& ctx, const std::vector<Tensor>& g) {
        double k = *static_cast<const double*>(ctx.data().get());
        return std::vector<Tensor>{mul(g[0], k)};
      });
  return op;
}

TEST(CustomOp, DataReachesTheForwardAndTheBackwardAndLivesWithTheNode) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  auto k = std::make_shared<double>(3.0);
  std::weak_ptr<double> alive = k;
  Tensor y = scale_by_data_op()({x}, std::move(k))[0];
  EXPECT_TRUE(equal(y, tensor<double>({3, 6})));
  EXPECT_FALSE(alive.expired()); // the node holds it for the backward
  y.sum().backward();
  EXPECT_TRUE(equal(x.grad(), tensor<double>({3, 3})));
  y = Tensor();
  EXPECT_TRUE(alive.expired());
  // Without a node (no input requires grad) it goes with the call.
  auto k2 = std::make_shared<double>(2.0);
  alive = k2;
  scale_by_data_op()({tensor<double>({1})}, std::move(k2));
  EXPECT_TRUE(alive.expired());
}

} // namespace
