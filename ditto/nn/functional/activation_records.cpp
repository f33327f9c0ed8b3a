// The records of the activations leaky_relu, silu, gelu, softmax and
// log_softmax (activation.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/functional/activation.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

const char* kComposedElementwise =
    "composed of elementwise ops: each output element is computed from its "
    "own inputs, whatever the thread that runs it";

void activation(
    const char* name,
    const std::string& args,
    s::Fn1 fn,
    std::vector<Sample> (*samples)(const SampleSpec&) = nullptr) {
  register_op({
      .name = name,
      .family = "activation",
      .callables =
          {std::string("ditto::") + name + "(" + args + ")",
           std::string("ditto::nn::functional::") + name + "(" + args + ")"},
      .deterministic_because = kComposedElementwise,
      .dtypes = kFloating,
      .samples =
          [fn, samples](const SampleSpec& spec) {
            return samples ? samples(spec) : s::unary(spec, fn);
          },
      .bad_samples =
          [fn] { return std::vector{s::undefined_input(s::call1(fn), 1)}; },
  });
}

// gelu's exact samples stay small (sized when erf was a 64-term series of
// 0.7 us an element; the committed fingerprints keep them; erf's own record
// and the tanh form's samples cross the chunks).
// The tanh form takes the usual elementwise samples.
std::vector<Sample> gelu_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  auto exact = s::call1([](const Tensor& x) { return gelu(x); });
  Tensor m =
      s::varied({s::size(spec, 29, 3), s::size(spec, 67, 4)}, dt, 6.0, 1);
  std::vector<Sample> out = {
      {"matrix", {m}, exact},
      {"strided", {s::strided(m)}, exact},
      {"scalar", {s::varied({}, dt, 6.0, 2)}, exact},
      {"empty", {s::varied({0, 3}, dt, 1.0, 3)}, exact},
  };
  for (Sample& sm :
       s::unary(spec, [](const Tensor& x) { return gelu(x, "tanh"); })) {
    sm.label = "tanh_" + sm.label;
    out.push_back(std::move(sm));
  }
  return out;
}

// ---- softmax

std::vector<Sample> softmax_samples(
    const SampleSpec& spec,
    std::function<Tensor(const Tensor&, int64_t)> fn) {
  const Dtype dt = spec.dtype;
  auto along = [fn](int64_t d) {
    return s::call1([fn, d](const Tensor& x) { return fn(x, d); });
  };
  const int64_t r = s::size(spec, 317, 3), c = s::size(spec, 131, 5);
  Tensor m = s::varied({r, c}, dt, 8.0, 1);
  Tensor t3 = s::varied(
      {s::size(spec, 7, 2), s::size(spec, 33, 3), s::size(spec, 45, 4)},
      dt,
      8.0,
      2);
  std::vector<Sample> out = {
      {"rows", {m}, along(-1)},
      {"columns", {m}, along(0)},
      {"strided", {s::strided(m)}, along(1)},
      {"middle_dim", {t3}, along(1)},
      {"scalar", {s::varied({}, dt, 8.0, 3)}, along(0)},
      {"empty", {s::varied({0, c}, dt, 1.0, 4)}, along(1)},
  };
  if (!spec.small) {
    // Rows longer than a reduction chunk.
    out.push_back({"long_rows", {s::varied({3, 40000}, dt, 8.0, 5)}, along(1)});
  }
  return out;
}

void softmax_record(
    const char* name,
    std::function<Tensor(const Tensor&, int64_t)> fn) {
  register_op({
      .name = name,
      .family = "activation",
      .callables =
          {std::string("ditto::") + name + "(x, dim, dtype)",
           std::string("Tensor::") + name + "(dim, dtype)",
           std::string("ditto::nn::functional::") + name + "(x, dim)"},
      .deterministic_because =
          "composed of max, exp, sum and log along dim: elementwise ops and "
          "reductions that add in a fixed order",
      .dtypes = kFloating,
      .samples =
          [fn](const SampleSpec& spec) { return softmax_samples(spec, fn); },
      .bad_samples =
          [fn] {
            return std::vector<Sample>{
                s::undefined_input(
                    s::call1([fn](const Tensor& x) { return fn(x, 0); }), 1),
                {"integer_input",
                 {s::varied({2, 3}, kInt64, 20.0, 1)},
                 s::call1([fn](const Tensor& x) { return fn(x, 1); })},
                {"dim_out_of_range",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([fn](const Tensor& x) { return fn(x, 2); })},
            };
          },
  });
}

} // namespace

DITTO_OP_RECORDS(activation) {
  activation("leaky_relu", "x, negative_slope", [](const Tensor& x) {
    return leaky_relu(x, 0.2);
  });
  activation("silu", "x", [](const Tensor& x) { return silu(x); });
  // gelu, softmax and log_softmax run on the device too (their
  // declarations, composite/activation.ops.toml).
  activation(
      "gelu",
      "x, approximate",
      [](const Tensor& x) { return gelu(x); },
      gelu_samples);
  softmax_record(
      "softmax", [](const Tensor& x, int64_t d) { return softmax(x, d); });
  softmax_record("log_softmax", [](const Tensor& x, int64_t d) {
    return log_softmax(x, d);
  });
}

} // namespace ditto::nn::functional
