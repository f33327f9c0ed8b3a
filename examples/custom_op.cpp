// A user-defined op with a forward, a backward and a record
// (docs/custom_ops.md): a weighted row sum whose fast variant would add rows
// from several threads in whatever order they finish, and whose
// deterministic variant adds them in order. The op is traced under its
// name, recorded on the graph with the policy in force, listed by `ditto
// ops` (its record) and named by `ditto verify`.
//
//   ditto_custom_op      prints the op's record, a gradient and a check

#include <cstdio>

#include "ditto/ditto.h"

using namespace ditto;

namespace {

// out[j] = sum_i w[i] * x[i, j]
const CustomOp& weighted_row_sum() {
  static const CustomOp op(
      {.name = "weighted_row_sum",
       .family = "custom",
       .callables = {"weighted_row_sum({x, w})"},
       .nondeterministic =
           {{.entry = "weighted_row_sum",
             .reason = "the fast variant adds the rows from several threads "
                       "in whatever order they finish"}},
       .samples =
           [](const SampleSpec& spec) {
             Tensor x = arange(0, 12, 1, spec.dtype).view({4, 3});
             Tensor w = arange(1, 5, 1, spec.dtype);
             return std::vector<Sample>{
                 {"matrix", {x, w}, [](const std::vector<Tensor>& in) {
                    return weighted_row_sum()(in);
                  }}};
           }},
      // The forward: one variant per mode (here both in order; a real fast
      // variant would split the rows between threads).
      [](CustomOpContext& ctx, const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        const Tensor& w = in[1];
        ctx.save_for_backward({x, w});
        Tensor out = zeros({x.size(1)}, x.dtype());
        for (int64_t i = 0; i < x.size(0); ++i) {
          out = out + w.select(0, i) * x.select(0, i);
        }
        return std::vector<Tensor>{out};
      },
      // The backward: d/dx = w[i] * g, d/dw[i] = sum_j g[j] * x[i, j].
      [](CustomOpContext& ctx, const std::vector<Tensor>& g) {
        std::vector<Tensor> saved = ctx.saved_tensors();
        const Tensor& x = saved[0];
        const Tensor& w = saved[1];
        Tensor gx = w.unsqueeze(1) * g[0].unsqueeze(0);
        Tensor gw = mm(x, g[0].unsqueeze(1)).squeeze(1);
        return std::vector<Tensor>{gx, gw};
      });
  return op;
}

} // namespace

int main() {
  const OpRecord& r = weighted_row_sum().record();
  std::printf(
      "op %s (%s): %s\n",
      r.name.c_str(),
      r.family.c_str(),
      determinism_name(r.determinism()));

  use_deterministic_algorithms(true);
  Tensor x = arange(0, 12, 1, kFloat64).view({4, 3}).requires_grad_();
  Tensor w = tensor<double>({1, 2, 3, 4}).requires_grad_();
  std::vector<std::string> traced;
  trace::set_hook([&](const trace::Event& e) { traced.emplace_back(e.op); });
  Tensor y = weighted_row_sum()({x, w})[0];
  trace::set_hook({});
  y.sum().backward();
  std::printf("traced: %s\n", traced.at(0).c_str());
  std::printf("y = %s\n", y.to_string().c_str());
  std::printf("dw = %s\n", w.grad().to_string().c_str());

  // The gradient against finite differences, in float64.
  auto check = autograd::gradcheck(
      [](const std::vector<Tensor>& in) { return weighted_row_sum()(in)[0]; },
      {x.detach().requires_grad_(), w.detach().requires_grad_()});
  std::printf("gradcheck: %s\n", check.ok ? "ok" : check.report.c_str());
  return check.ok && traced.size() == 1 ? 0 : 1;
}
