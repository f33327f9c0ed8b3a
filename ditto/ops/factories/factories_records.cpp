// The records of the factories and copies (factories.cpp): Note [Op
// records] in record.cpp.

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const char* kFill = "each element written once from its index or a value";
using ::ditto::detail::samples::kCopies;
using ::ditto::detail::samples::kEveryDtype;
using ::ditto::detail::samples::kNumeric;
const char* kNoInput = "a factory: no tensor input";

// A factory: no tensor inputs, one output per call of make(dtype, n).
void factory(
    const char* name,
    const std::string& callable,
    std::function<Tensor(Dtype, int64_t)> make,
    std::vector<Dtype> dtypes,
    bool uninitialized = false) {
  register_op({
      .name = name,
      .family = "factory",
      // a method form (new_zeros) as written, a function's with ditto::
      .callables = s::split_callables(
          callable.rfind("Tensor::", 0) == 0 ? callable : "ditto::" + callable),
      .deterministic_because = uninitialized
          ? "uninitialized memory unless the deterministic mode fills it "
            "(fill_uninitialized_memory: NaN, or the integer maximum)"
          : kFill,
      .dtypes = dtypes,
      .samples =
          [make](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [make, dt](int64_t n) {
              return [make, dt, n](const std::vector<Tensor>&) {
                return std::vector{make(dt, n)};
              };
            };
            return std::vector<Sample>{
                {"long", {}, call(s::size(spec, 70001, 7))},
                {"empty", {}, call(0)},
            };
          },
      .bad_samples =
          [make] {
            return std::vector<Sample>{
                {"negative_size", {}, [make](const std::vector<Tensor>&) {
                   return std::vector{make(kFloat32, -3)};
                 }}};
          },
      .not_differentiable = kNoInput,
      .uninitialized_output = uninitialized,
  });
}

} // namespace

DITTO_OP_RECORDS(factories) {
  // The new_* methods: a receiver of the sample's dtype, sizes (n, 3).
  factory(
      "new_empty",
      "Tensor::new_empty(size, dtype)",
      [](Dtype dt, int64_t n) {
        return zeros({1}, dt).new_empty({n, 3});
      },
      kEveryDtype,
      true);
  factory(
      "new_zeros",
      "Tensor::new_zeros(size, dtype)",
      [](Dtype dt, int64_t n) {
        return zeros({1}, kFloat64).new_zeros({n, 3}, dt);
      },
      kEveryDtype);
  factory(
      "new_ones",
      "Tensor::new_ones(size, dtype)",
      [](Dtype dt, int64_t n) {
        return zeros({1}, dt).new_ones({n, 3});
      },
      kEveryDtype);
  factory(
      "new_full",
      "Tensor::new_full(size, fill_value, dtype)",
      [](Dtype dt, int64_t n) {
        return zeros({2}, dt).new_full({n, 3}, 1);
      },
      kEveryDtype);
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    factory(
        "empty",
        "empty(shape, dtype), ditto::empty_like(t)",
        [](Dtype dt, int64_t n) {
          return empty({n, 3}, dt);
        },
        kEveryDtype,
        true);
  }
  factory(
      "empty_strided",
      "empty_strided(sizes, strides, dtype)",
      [](Dtype dt, int64_t n) {
        return empty_strided({n, 3}, {1, n}, dt);
      },
      kEveryDtype,
      true);
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    factory(
        "zeros",
        "zeros(shape, dtype), ditto::zeros_like(t)",
        [](Dtype dt, int64_t n) { return zeros({n}, dt); },
        kEveryDtype);
    factory(
        "ones",
        "ones(shape, dtype), ditto::ones_like(t)",
        [](Dtype dt, int64_t n) { return ones({n}, dt); },
        kEveryDtype);
    factory(
        "full",
        "full(shape, value, dtype), ditto::full_like(t, value)",
        [](Dtype dt, int64_t n) { return full({n}, 7, dt); },
        kEveryDtype);
  }
  factory(
      "arange",
      "arange(start, end, step, dtype)",
      [](Dtype dt, int64_t n) {
        return n < 0 ? arange(0, 5, -1, dt)
                     : arange(-3, 0.5 * double(n) - 3, 0.5, dt);
      },
      {kFloat32, kFloat64});
  factory(
      "linspace",
      "linspace(start, end, steps, dtype)",
      [](Dtype dt, int64_t n) { return linspace(-2.5, 7.0, n, dt); },
      {kFloat32, kFloat64});
  factory(
      "eye",
      "eye(n, m, dtype)",
      [](Dtype dt, int64_t n) { return eye(n < 0 ? n : n / 100 + 1, 37, dt); },
      kEveryDtype);
  factory(
      "scalar_tensor",
      "scalar_tensor(value, dtype)",
      [](Dtype dt, int64_t n) {
        DITTO_CHECK(n >= 0, ValueError, "scalar_tensor", "sample size ", n);
        return scalar_tensor(2.75, dt);
      },
      kNumeric);
  factory(
      "tensor",
      "tensor(values, shape)",
      [](Dtype dt, int64_t n) {
        std::vector<double> v(static_cast<size_t>(std::max<int64_t>(n, 0)));
        for (size_t i = 0; i < v.size(); ++i) {
          v[i] = double(i % 97) - 40.5;
        }
        return tensor(v, {n}).to(dt);
      },
      {kFloat64});

  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "clone",
        .family = "copy",
        .callables = {"ditto::clone(self)", "Tensor::clone()"},
        .deterministic_because = kCopies,
        .dtypes = kEveryDtype,
        .samples =
            [](const SampleSpec& spec) {
              return s::unary(spec, [](const Tensor& t) { return t.clone(); });
            },
        .bad_samples =
            [] {
              return std::vector<Sample>{
                  {"undefined", {Tensor()}, [](const std::vector<Tensor>& in) {
                     return std::vector{clone(in[0])};
                   }}};
            },
    });
  }
  register_op({
      .name = "to",
      .family = "copy",
      .callables =
          {"Tensor::to(dtype, non_blocking, copy)",
           "Tensor::to(device, dtype, non_blocking, copy)",
           "Tensor::to(other, non_blocking, copy)"},
      .deterministic_because = "each element converted on its own",
      .dtypes = kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            // Floating to the other floating type, integers to float64.
            auto out = s::unary(spec, [](const Tensor& t) {
              return t.to(t.dtype() == kFloat64 ? kFloat32 : kFloat64);
            });
            for (Sample& sm : out) {
              sm.gradcheck = false; // float32 rounding hides eps = 1e-6
            }
            return out;
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"undefined",
                 {Tensor()},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{in[0].to(kFloat64)};
                 }},
                {"undefined_other",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{in[0].to(Tensor())};
                 }}};
          },
      .grad_fn = "ToCopyBackward0",
      // between the host and the device, and on the device
      .devices = {kVulkan},
      .mixes_devices = true,
  });
  auto copy_call = [](const std::vector<Tensor>& in) {
    Tensor self = in[0];
    self.copy_(in[1]);
    return std::vector{self};
  };
  register_op({
      .name = "copy_",
      .family = "copy",
      .callables = {"Tensor::copy_(src, non_blocking)"},
      .deterministic_because = kCopies,
      .dtypes = kNumeric,
      .samples =
          [copy_call](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            Tensor self = s::varied({r, c}, spec.dtype, 6.0, 1);
            return std::vector<Sample>{
                {"broadcast",
                 {self, s::varied({c}, kFloat64, 6.0, 2)},
                 copy_call},
                {"strided",
                 {s::strided(self), s::varied({r, c}, spec.dtype, 6.0, 3)},
                 copy_call},
            };
          },
      .bad_samples =
          [copy_call] {
            return std::vector<Sample>{
                {"shapes_mismatch",
                 {s::varied({2, 3}, kFloat32, 2.0, 1),
                  s::varied({4}, kFloat32, 2.0, 2)},
                 copy_call},
                {"expanded_self",
                 {s::varied({1, 3}, kFloat32, 2.0, 1).expand({2, 3}),
                  s::varied({2, 3}, kFloat32, 2.0, 2)},
                 copy_call}};
          },
      .inplace = true,
      // between the host and the device, and on the device
      .devices = {kVulkan},
      .mixes_devices = true,
  });
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "fill_",
        .family = "copy",
        .callables =
            {"ditto::fill_(self, value)",
             "Tensor::fill_(value)",
             "ditto::zero_(self)",
             "Tensor::zero_()"},
        .deterministic_because = kFill,
        .dtypes = kNumeric,
        .samples =
            [](const SampleSpec& spec) {
              auto call = [](const std::vector<Tensor>& in) {
                Tensor self = in[0];
                self.fill_(3);
                return std::vector{self};
              };
              const int64_t r = s::size(spec, 211, 3),
                            c = s::size(spec, 307, 4);
              Tensor self = s::varied({r, c}, spec.dtype, 6.0, 1);
              return std::vector<Sample>{
                  {"matrix", {self}, call},
                  {"strided", {s::strided(self)}, call}};
            },
        .bad_samples =
            [] {
              auto fill = [](const Scalar& v) {
                return [v](const std::vector<Tensor>& in) {
                  Tensor self = in[0];
                  self.fill_(v);
                  return std::vector{self};
                };
              };
              return std::vector<Sample>{
                  {"value_out_of_range",
                   {s::varied({2, 3}, kUInt8, 6.0, 1)},
                   fill(300)},
                  {"expanded_self",
                   {s::varied({1, 3}, kFloat32, 2.0, 1).expand({2, 3})},
                   fill(1.5)},
                  {"undefined", {Tensor()}, [](const std::vector<Tensor>& in) {
                     Tensor self = in[0];
                     self.zero_();
                     return std::vector{self};
                   }}};
            },
        .not_differentiable = "the result does not depend on the input",
        .inplace = true,
    });
  }
  register_op({
      .name = "resize_",
      .family = "copy",
      .callables = {"Tensor::resize_(size)"},
      .deterministic_because =
          "keeps the elements it had; new ones are uninitialized unless the "
          "deterministic mode fills them (fill_uninitialized_memory)",
      .dtypes = kNumeric,
      .samples =
          [](const SampleSpec& spec) {
            auto call = [](int64_t n) {
              return [n](const std::vector<Tensor>& in) {
                Tensor self = in[0];
                self.resize_({n, 7});
                return std::vector{self};
              };
            };
            Tensor self = s::varied({5, 7}, spec.dtype, 6.0, 1);
            return std::vector<Sample>{
                {"grow", {self}, call(s::size(spec, 9001, 9))},
                {"shrink", {self}, call(2)}};
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"negative",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& in) {
                   Tensor self = in[0];
                   self.resize_({-2, 3});
                   return std::vector{self};
                 }}};
          },
      .not_differentiable = "resize_ is not differentiable (as in PyTorch)",
      .inplace = true,
      .uninitialized_output = true,
  });
}

} // namespace ditto
