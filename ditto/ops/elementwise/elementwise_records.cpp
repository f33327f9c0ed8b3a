// The records of the elementwise ops (Note [Op records] in record.cpp).

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using s::Domain;

const char* kElementwise =
    "each output element is computed from its own inputs by one kernel "
    "call, whatever the thread that runs it";

using ::ditto::detail::samples::kFloating;
using ::ditto::detail::samples::kNumeric;

using s::as_inplace;
using s::inplace1;

using s::inplace2;

// addcmul / addcdiv and their in-place forms.
void addc(
    const char* name,
    s::Fn3 fn,
    std::function<void(Tensor&, const Tensor&, const Tensor&)> ifn) {
  auto samples = [](const SampleSpec& spec) {
    const Dtype dt = spec.dtype;
    const int64_t r = s::size(spec, 97, 3), c = s::size(spec, 131, 4);
    Tensor self = s::varied({r, c}, dt, 4.0, 1);
    Tensor t1 = s::varied({r, c}, dt, 4.0, 2);
    Tensor t2 = s::positive({c}, dt, 3);
    return std::vector<Sample>{
        {"broadcast", {self, t1, t2}, {}},
        {"strided", {self, s::strided(t1), t2.expand({r, c})}, {}},
        {"empty",
         {s::varied({0, c}, dt, 1.0, 4), s::varied({0, c}, dt, 1.0, 5), t2},
         {}},
    };
  };
  register_op({
      .name = name,
      .family = "elementwise",
      .callables = s::callables(
          std::string("ditto::") + name + "(self, t1, t2, value)",
          std::string("Tensor::") + name + "(t1, t2, value)"),
      .deterministic_because = kElementwise,
      .dtypes = kFloating,
      .samples =
          [samples, fn](const SampleSpec& spec) {
            auto out = samples(spec);
            for (Sample& sm : out) {
              sm.call = s::call3(fn);
            }
            return out;
          },
      .bad_samples =
          [fn] { return std::vector{s::undefined_input(s::call3(fn), 3)}; },
  });
  register_op({
      .name = std::string(name) + "_",
      .family = "elementwise",
      .callables = {std::string("Tensor::") + name + "_(t1, t2, value)"},
      .deterministic_because = kElementwise,
      .dtypes = kFloating,
      .samples =
          [samples, ifn](const SampleSpec& spec) {
            auto out = samples(spec);
            for (Sample& sm : out) {
              sm.call = [ifn](const std::vector<Tensor>& in) {
                Tensor self = in[0];
                ifn(self, in[1], in[2]);
                return std::vector<Tensor>{self};
              };
            }
            return out;
          },
      .inplace = true,
  });
}

} // namespace

DITTO_OP_RECORDS(lerp) {
  register_op({
      .name = "lerp",
      .family = "elementwise",
      .callables =
          {"ditto::lerp(start, end, weight)", "Tensor::lerp(end, weight)"},
      .deterministic_because = kElementwise,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t n = s::size(spec, 40001, 7);
            // Weights on both sides of 1/2 (and outside [0, 1]).
            const Tensor w = s::varied({n}, dt, 1.6, 3, 0.5);
            const int64_t c = s::size(spec, 301, 4);
            return std::vector<Sample>{
                {"tensor_weight",
                 {s::varied({n}, dt, 6.0, 1), s::varied({n}, dt, 6.0, 2), w},
                 s::call3([](const Tensor& a,
                             const Tensor& b,
                             const Tensor& t) { return lerp(a, b, t); })},
                {"broadcast",
                 {s::varied({3, c}, dt, 6.0, 4),
                  s::varied({c}, dt, 6.0, 5),
                  s::varied({3, 1}, dt, 1.6, 6, 0.5)},
                 s::call3([](const Tensor& a,
                             const Tensor& b,
                             const Tensor& t) { return lerp(a, b, t); })},
                {"scalar_weight",
                 {s::varied({n}, dt, 6.0, 7), s::varied({n}, dt, 6.0, 8)},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return lerp(a, b, 0.75);
                 })},
            };
          },
      .bad_samples =
          [] {
            auto fn =
                s::call3([](const Tensor& a, const Tensor& b, const Tensor& t) {
                  return lerp(a, b, t);
                });
            return std::vector<Sample>{
                s::undefined_input(fn, 3),
                {"dtypes",
                 {s::varied({3}, kFloat32, 2.0, 1),
                  s::varied({3}, kFloat64, 2.0, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 fn},
                {"shapes",
                 {s::varied({3}, kFloat32, 2.0, 1),
                  s::varied({4}, kFloat32, 2.0, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 fn},
            };
          },
  });
}

DITTO_OP_RECORDS(elementwise) {
  const Domain any = Domain::kAny, pos = Domain::kPositive;
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    s::register_binary(
        "add",
        [](auto& a, auto& b) { return add(a, b, 2); },
        any,
        any,
        kNumeric,
        "",
        [](const Tensor& a) { return add(a, 3); });
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    s::register_binary(
        "sub",
        [](auto& a, auto& b) { return sub(a, b); },
        any,
        any,
        kNumeric,
        "",
        [](const Tensor& a) { return sub(a, 1); });
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    s::register_binary(
        "mul",
        [](auto& a, auto& b) { return mul(a, b); },
        any,
        any,
        kNumeric,
        "",
        [](const Tensor& a) { return mul(a, -2); });
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    s::register_binary(
        "div",
        [](auto& a, auto& b) { return div(a, b); },
        any,
        pos,
        kFloating,
        "",
        [](const Tensor& a) { return div(a, 3.0); });
  }
  s::register_binary(
      "pow",
      [](auto& a, auto& b) { return pow(a, b); },
      pos,
      any,
      kFloating,
      "",
      [](const Tensor& a) { return pow(a, 3); });
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    s::register_binary_inplace(
        "add_",
        [](Tensor& a, const Tensor& b) { a.add_(b, 2); },
        any,
        any,
        kNumeric);
    s::register_binary_inplace(
        "sub_",
        [](Tensor& a, const Tensor& b) { a.sub_(b); },
        any,
        any,
        kNumeric);
    s::register_binary_inplace(
        "mul_",
        [](Tensor& a, const Tensor& b) { a.mul_(b); },
        any,
        any,
        kNumeric);
    s::register_binary_inplace(
        "div_",
        [](Tensor& a, const Tensor& b) { a.div_(b); },
        any,
        pos,
        kFloating);
  }
  // on the device by their declarations (fused.ops.toml)
  addc(
      "addcmul",
      [](auto& a, auto& b, auto& c) { return addcmul(a, b, c, 0.5); },
      [](Tensor& a, const Tensor& b, const Tensor& c) {
        a.addcmul_(b, c, 0.5);
      });
  addc(
      "addcdiv",
      [](auto& a, auto& b, auto& c) { return addcdiv(a, b, c, -2.0); },
      [](Tensor& a, const Tensor& b, const Tensor& c) {
        a.addcdiv_(b, c, -2.0);
      });

  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    s::register_unary(
        "clamp",
        [](auto& a) { return clamp(a, -1, 2); },
        [](Tensor& a) { a.clamp_(-1, 2); },
        any,
        kNumeric);
  }
  // pow_ with a scalar exponent (the method form).
  register_op({
      .name = "pow_",
      .family = "elementwise",
      .callables = {"Tensor::pow_(exponent)"},
      .deterministic_because = kElementwise,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            return as_inplace(
                s::unary(
                    spec, [](const Tensor& t) { return t; }, Domain::kPositive),
                inplace1([](Tensor& a) { a.pow_(1.5); }));
          },
      .inplace = true,
  });
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "where",
        .family = "elementwise",
        .callables = {"ditto::where(cond, a, b)", "Tensor::where(cond, other)"},
        .deterministic_because = kElementwise,
        .dtypes = kNumeric,
        .samples =
            [](const SampleSpec& spec) {
              const int64_t r = s::size(spec, 211, 3),
                            c = s::size(spec, 307, 4);
              Tensor cond = s::varied({r, c}, kBool, 2.0, 9);
              Tensor a = s::varied({r, c}, spec.dtype, 6.0, 1);
              Tensor b = s::varied({c}, spec.dtype, 6.0, 2);
              auto call = s::call3(
                  [](auto& k, auto& x, auto& y) { return where(k, x, y); });
              return std::vector<Sample>{
                  {"broadcast", {cond, a, b}, call},
                  {"strided", {s::strided(cond), s::strided(a), b}, call},
                  {"empty",
                   {s::varied({0, c}, kBool, 2.0, 3),
                    s::varied({0, c}, spec.dtype, 1.0, 4),
                    b},
                   call},
              };
            },
        .bad_samples =
            [] {
              return std::vector<Sample>{
                  {"float_condition",
                   {s::varied({3}, kFloat32, 2.0, 1),
                    s::varied({3}, kFloat32, 2.0, 2),
                    s::varied({3}, kFloat32, 2.0, 3)},
                   s::call3([](auto& k, auto& x, auto& y) {
                     return where(k, x, y);
                   })}};
            },
    });
  }
}

} // namespace ditto
