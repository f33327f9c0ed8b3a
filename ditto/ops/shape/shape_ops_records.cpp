// The records of the views (views.cpp) and the shape ops (shape_ops.cpp):
// Note [Op records] in record.cpp.

#include <string>
#include <utility>

#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const char* kView =
    "a view: no arithmetic, the output reads the input's elements";
using ::ditto::detail::samples::kCopies;
using ::ditto::detail::samples::kEveryDtype;

// A view op on a 3-d input (and its non-contiguous form); its gradient
// scatters back through the view.
// callables: its forms (views.ops.toml: "ditto::name(self, ...)" for a
// function, "Tensor::name(...)" for a method).
void view_op(
    const char* name,
    std::vector<std::string> callables,
    s::Fn1 fn,
    Shape shape = {4, 6, 5},
    std::string grad_fn = {}) {
  register_op({
      .name = name,
      .family = "view",
      .callables = std::move(callables),
      .deterministic_because = kView,
      .dtypes = kEveryDtype,
      .samples =
          [fn, shape](const SampleSpec& spec) {
            Tensor x = s::varied(shape, spec.dtype, 8.0, 1);
            return std::vector<Sample>{
                {"contiguous", {x}, s::call1(fn)},
                {"strided", {s::strided(x)}, s::call1(fn)},
            };
          },
      .bad_samples =
          [fn] { return std::vector{s::undefined_input(s::call1(fn), 1)}; },
      .grad_fn = std::move(grad_fn),
  });
}

std::vector<Sample> matrices(const SampleSpec& spec, s::Call call) {
  const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
  Tensor m = s::varied({r, c}, spec.dtype, 8.0, 1);
  return {
      {"matrix", {m}, call},
      {"strided", {s::strided(m)}, call},
      {"empty", {s::varied({0, c}, spec.dtype, 1.0, 2)}, call},
  };
}

} // namespace

DITTO_OP_RECORDS(views) {
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    view_op(
        "view",
        {"Tensor::view(size)", "Tensor::view(dtype)", "Tensor::view_as(other)"},
        [](const Tensor& t) {
          return t.defined() && t.is_contiguous() ? t.view({6, 20})
                                                  : t.view({4, 6, 5});
        });
    view_op(
        "reshape",
        {"ditto::reshape(self, shape)",
         "Tensor::reshape(shape)",
         "Tensor::reshape_as(other)"},
        [](const Tensor& t) {
          return t.reshape({2, 3, -1});
        });
    view_op(
        "permute",
        {"ditto::permute(self, dims)", "Tensor::permute(dims)"},
        [](const Tensor& t) {
          return t.permute({2, 0, 1});
        });
    view_op(
        "transpose",
        {"ditto::transpose(self, dim0, dim1)",
         "Tensor::transpose(dim0, dim1)",
         "ditto::swapaxes(self, dim0, dim1)",
         "ditto::swapdims(self, dim0, dim1)"},
        [](const Tensor& t) { return t.transpose(0, 2); });
    // PyTorch's narrow is a slice.
    view_op(
        "narrow",
        {"ditto::narrow(self, dim, start, length)",
         "Tensor::narrow(dim, start, length)"},
        [](const Tensor& t) { return t.narrow(1, 2, 3); },
        {4, 6, 5},
        "SliceBackward0");
    view_op(
        "select",
        {"ditto::select(self, dim, index)", "Tensor::select(dim, index)"},
        [](const Tensor& t) { return t.select(2, 3); });
    view_op(
        "slice",
        {"ditto::slice(self, dim, start, end, step)",
         "Tensor::slice(dim, start, end, step)"},
        [](const Tensor& t) { return t.slice(1, 1, 6, 2); });
    view_op(
        "unsqueeze",
        {"ditto::unsqueeze(self, dim)", "Tensor::unsqueeze(dim)"},
        [](const Tensor& t) { return t.unsqueeze(1); });
    view_op(
        "squeeze",
        {"ditto::squeeze(self)",
         "ditto::squeeze(self, dim)",
         "Tensor::squeeze()",
         "Tensor::squeeze(dim)"},
        [](const Tensor& t) { return t.squeeze(); },
        {4, 1, 5});
    view_op(
        "expand",
        {"Tensor::expand(size, implicit)", "Tensor::expand_as(other)"},
        [](const Tensor& t) {
          return t.expand({3, 4, 6, 5});
        });
    view_op(
        "flatten",
        {"ditto::flatten(self, start_dim, end_dim)",
         "Tensor::flatten(start_dim, end_dim)"},
        [](const Tensor& t) { return t.flatten(1); });
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "t",
        .family = "view",
        .callables = {"ditto::t(self)", "Tensor::t()"},
        .deterministic_because = kView,
        .dtypes = kEveryDtype,
        .samples =
            [](const SampleSpec& spec) {
              return matrices(
                  spec, s::call1([](const Tensor& x) { return x.t(); }));
            },
        .bad_samples =
            [] {
              return std::vector<Sample>{
                  {"three_dims",
                   {s::varied({2, 3, 4}, kFloat32, 2.0, 1)},
                   s::call1([](const Tensor& x) { return x.t(); })}};
            },
    });
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "as_strided",
        .family = "view",
        .callables =
            {"ditto::as_strided(self, size, stride, storage_offset)",
             "Tensor::as_strided(size, stride, storage_offset)"},
        .deterministic_because =
            "a view; its backward adds the gradients of outputs that read one "
            "element with index_add_, whose variant the policy picks",
        .dtypes = kEveryDtype,
        .samples =
            [](const SampleSpec& spec) {
              Tensor x = s::varied({40}, spec.dtype, 8.0, 1);
              return std::vector<Sample>{
                  {"overlapping", {x}, s::call1([](const Tensor& t) {
                     return t.as_strided({5, 6}, {3, 1}, 2);
                   })},
              };
            },
        .bad_samples =
            [] {
              return std::vector<Sample>{
                  {"out_of_bounds",
                   {s::varied({10}, kFloat32, 2.0, 1)},
                   s::call1([](const Tensor& t) {
                     return t.as_strided({5, 6}, {3, 1}, 2);
                   })}};
            },
    });
  }
}

DITTO_OP_RECORDS(shape_ops) {
  register_op({
      .name = "cat",
      .family = "shape",
      .callables = {"ditto::cat(tensors, dim)"},
      .deterministic_because = kCopies,
      .dtypes = kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            Tensor a = s::varied({r, c}, spec.dtype, 8.0, 1);
            Tensor b = s::varied({r, 3}, spec.dtype, 8.0, 2);
            Tensor e = s::varied({r, 0}, spec.dtype, 8.0, 3);
            return std::vector<Sample>{
                {"dim1",
                 {a, b, e},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{cat(in, 1)};
                 }},
                {"dim0_strided",
                 {s::strided(a), a},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{cat(in, 0)};
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"shapes_mismatch",
                 {s::varied({2, 3}, kFloat32, 2.0, 1),
                  s::varied({3, 4}, kFloat32, 2.0, 2)},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{cat(in, 0)};
                 }}};
          },
  });
  register_op({
      .name = "stack",
      .family = "shape",
      .callables = {"ditto::stack(tensors, dim)"},
      .deterministic_because = kCopies,
      .dtypes = kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            Tensor a = s::varied({r, c}, spec.dtype, 8.0, 1);
            Tensor b = s::varied({r, c}, spec.dtype, 8.0, 2);
            return std::vector<Sample>{
                {"dim1",
                 {a, s::strided(b)},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{stack(in, 1)};
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"shapes_mismatch",
                 {s::varied({2, 3}, kFloat32, 2.0, 1),
                  s::varied({3, 2}, kFloat32, 2.0, 2)},
                 [](const std::vector<Tensor>& in) {
                   return std::vector{stack(in, 0)};
                 }}};
          },
  });
  register_op({
      .name = "flip",
      .family = "shape",
      .callables = {"ditto::flip(a, dims)", "Tensor::flip(dims)"},
      .deterministic_because = kCopies,
      .dtypes = kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            return matrices(spec, s::call1([](const Tensor& x) {
                              return flip(x, {0, 1});
                            }));
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"repeated_dim",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return flip(x, {0, 0});
                 })}};
          },
  });
  register_op({
      .name = "repeat_interleave",
      .family = "shape",
      .callables =
          {"ditto::repeat_interleave(a, repeats, dim, output_size)",
           "ditto::repeat_interleave(repeats, output_size)",
           "Tensor::repeat_interleave(repeats, dim, output_size)"},
      .deterministic_because =
          "the forward copies; the backward sums each input element's "
          "adjacent copies in order into that element alone (one writer per "
          "element)",
      .dtypes = kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            Tensor m = s::varied({r, c}, spec.dtype, 8.0, 1);
            // Counts 0 to 3 (some rows dropped), one per row, and a column
            // count per column.
            Tensor rows = s::varied({r}, kInt64, 4.0, 2, 2.0);
            Tensor cols = s::varied({c}, kInt64, 3.0, 3, 1.5);
            auto with = [](int64_t dim) {
              return [dim](const std::vector<Tensor>& x) {
                return std::vector<Tensor>{repeat_interleave(x[0], x[1], dim)};
              };
            };
            return std::vector<Sample>{
                {"rows", {m, rows}, with(0)},
                {"columns", {s::strided(m), cols}, with(1)},
                {"flat_int", {m}, s::call1([](const Tensor& x) {
                   return repeat_interleave(x, 2);
                 })},
                {"scalar",
                 {s::varied({}, spec.dtype, 8.0, 4)},
                 s::call1([](const Tensor& x) {
                   return repeat_interleave(x, 3, 0, 3);
                 })},
                // The indices form beside the rows it repeats by.
                {"rows_and_indices",
                 {m, rows},
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       repeat_interleave(x[0], x[1], 0),
                       repeat_interleave(x[1])};
                 }},
            };
          },
      .bad_samples =
          [] {
            Tensor m = s::varied({2, 3}, kFloat32, 2.0, 1);
            auto with = [](int64_t dim, std::optional<int64_t> size) {
              return [dim, size](const std::vector<Tensor>& x) {
                return std::vector<Tensor>{
                    repeat_interleave(x[0], x[1], dim, size)};
              };
            };
            return std::vector<Sample>{
                {"negative", {m, full({2}, -1, kInt64)}, with(0, std::nullopt)},
                {"wrong_count",
                 {m, full({2}, 1, kInt64)},
                 with(1, std::nullopt)},
                {"float_repeats",
                 {m, full({2}, 1.0, kFloat32)},
                 with(0, std::nullopt)},
                {"two_dim_repeats",
                 {m, full({2, 1}, 1, kInt64)},
                 with(0, std::nullopt)},
                {"output_size", {m, full({2}, 2, kInt64)}, with(0, 5)},
                {"dim", {m, full({2}, 2, kInt64)}, with(2, std::nullopt)},
            };
          },
  });
  register_op({
      .name = "pad",
      .family = "shape",
      .callables = {"ditto::pad(self, pad, mode, value)"},
      .deterministic_because = kCopies,
      .nondeterministic = detail::pad_backward_paths(),
      .dtypes = {kFloat32, kFloat64},
      .samples =
          [](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 61, 4), c = s::size(spec, 97, 5);
            Tensor m = s::varied({2, r, c}, spec.dtype, 8.0, 1);
            Tensor vol = s::varied(
                {2,
                 s::size(spec, 3, 1),
                 s::size(spec, 9, 3),
                 s::size(spec, 11, 3),
                 s::size(spec, 13, 4)},
                spec.dtype,
                8.0,
                2);
            auto mode = [](const char* md, IntList p) {
              // a value for constant padding (the others take none)
              const std::optional<double> value =
                  std::string_view(md) == "constant"
                  ? std::optional<double>(0.5)
                  : std::nullopt;
              return s::call1([md, p, value](const Tensor& x) {
                return pad(x, p, md, value);
              });
            };
            return std::vector<Sample>{
                {"constant", {m}, mode("constant", {2, 1, 0, 3})},
                {"reflect", {m}, mode("reflect", {2, 3, 1, 2})},
                {"replicate", {s::strided(m)}, mode("replicate", {3, 0, 2, 1})},
                {"negative_crops", {m}, mode("constant", {-1, 2, 1, -2})},
                {"reflect_1d", {m}, mode("reflect", {3, 2})},
                {"replicate_3d", {vol}, mode("replicate", {2, 1, 0, 3, 1, 2})},
                {"reflect_3d", {vol}, mode("reflect", {1, 2, 2, 0, 1, 1})},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"reflect_too_wide",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return pad(x, {3, 3}, "reflect");
                 })},
                {"odd_pads",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) { return pad(x, {1}); })},
                {"value_with_reflect",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return pad(x, {1, 1}, "reflect", 2.0);
                 })},
                {"circular_wraps_twice",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return pad(x, {4, 0}, "circular");
                 })},
                {"unknown_mode",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return pad(x, {1, 1}, "wrap");
                 })}};
          },
  });
  register_op({
      .name = "sort",
      .family = "shape",
      .callables = {"ditto::sort(a, dim, descending)", "Tensor::sort(dim)"},
      .deterministic_because =
          "a stable sort of each row: ties keep their order",
      .dtypes = {kFloat32, kFloat64, kInt64, kInt32},
      .samples =
          [](const SampleSpec& spec) {
            return matrices(spec, [](const std::vector<Tensor>& in) {
              auto [v, i] = sort(in[0], 1, true);
              return std::vector{v, i};
            });
          },
      .bad_samples =
          [] {
            auto call = [](int64_t dim) -> s::Call {
              return [dim](const std::vector<Tensor>& in) {
                auto [v, i] = sort(in[0], dim);
                return std::vector{v, i};
              };
            };
            return std::vector<Sample>{
                s::undefined_input(call(-1), 1),
                {"dim out of range",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 call(2)},
            };
          },
  });
  const auto predicate = [](const SampleSpec& spec, bool close) {
    const int64_t n = s::size(spec, 5000, 6);
    Tensor a = s::varied({n}, spec.dtype, 8.0, 1);
    s::Call call = [close](const std::vector<Tensor>& in) {
      const bool r = close ? allclose(in[0], in[1]) : equal(in[0], in[1]);
      return std::vector{scalar_tensor(r ? 1 : 0, kInt64)};
    };
    return std::vector<Sample>{
        {"same", {a, a.clone()}, call},
        {"different", {a, s::varied({n}, spec.dtype, 8.0, 2)}, call},
    };
  };
  // An undefined operand (both), and shapes that do not broadcast
  // (allclose; equal says false).
  const auto bad_pair = [](bool close) {
    s::Call call = [close](const std::vector<Tensor>& in) {
      const bool r = close ? allclose(in[0], in[1]) : equal(in[0], in[1]);
      return std::vector{scalar_tensor(r ? 1 : 0, kInt64)};
    };
    Tensor a = ones({2, 3});
    std::vector<Sample> out = {{"undefined other", {a, Tensor()}, call}};
    if (close) {
      out.push_back({"shapes that do not broadcast", {a, ones({4})}, call});
    }
    return out;
  };
  register_op({
      .name = "equal",
      .family = "comparison",
      .callables = {"ditto::equal(a, b)", "Tensor::equal(b)"},
      .deterministic_because = "a bool from exact comparisons",
      .dtypes = {kFloat32, kInt64},
      .samples = [predicate](
                     const SampleSpec& spec) { return predicate(spec, false); },
      .bad_samples = [bad_pair] { return bad_pair(false); },
      .not_differentiable = "returns a bool",
      .returns_tensor = false,
  });
  register_op({
      .name = "allclose",
      .family = "comparison",
      .callables = s::callables(
          "ditto::allclose(a, b, rtol, atol, equal_nan)",
          "Tensor::allclose(b, rtol, atol, equal_nan)"),
      .deterministic_because = "a bool from elementwise comparisons",
      .dtypes = {kFloat32, kFloat64},
      .samples =
          [predicate](const SampleSpec& spec) { return predicate(spec, true); },
      .bad_samples = [bad_pair] { return bad_pair(true); },
      .not_differentiable = "returns a bool",
      .returns_tensor = false,
  });
}

} // namespace ditto
