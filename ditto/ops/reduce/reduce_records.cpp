// The records of the reductions (reduce.cpp): Note [Op records] in
// record.cpp.

#include <limits>

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/record.h"
#include "ditto/ops/reduce.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const char* kChunked =
    "one partial per fixed chunk of the reduced elements, combined in chunk "
    "order: the same sums for any thread count";
const char* kExtremum =
    "a max or min is exact; chunks are combined left to right, so the first "
    "index wins ties and the first NaN wins";
using ::ditto::detail::samples::kNumeric;

void reduction(
    const char* name,
    std::vector<std::string> callables,
    s::Call call,
    const char* because,
    std::vector<Dtype> dtypes,
    bool zero_size,
    const char* not_differentiable = "",
    s::Domain domain = s::Domain::kAny) {
  register_op({
      .name = name,
      .family = "reduction",
      .callables = std::move(callables),
      .deterministic_because = because,
      .dtypes = dtypes,
      .samples =
          [call, zero_size, domain](const SampleSpec& spec) {
            std::vector<Sample> out = s::reduction(
                spec, [](const Tensor& t) { return t; }, zero_size, domain);
            for (Sample& sm : out) {
              sm.call = call;
            }
            return out;
          },
      .bad_samples =
          [call] { return std::vector<Sample>{s::undefined_input(call, 1)}; },
      .not_differentiable = not_differentiable,
  });
}

s::Call each(std::function<std::vector<Tensor>(const Tensor&)> fn) {
  return [fn](const std::vector<Tensor>& in) { return fn(in[0]); };
}

} // namespace

DITTO_OP_RECORDS(reduce) {
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    reduction(
        "sum",
        {"ditto::sum(a, dims, keepdim)", "Tensor::sum(dims, keepdim)"},
        each([](const Tensor& t) {
          return std::vector{sum(t), sum(t, {0}), sum(t, {1}, true)};
        }),
        kChunked,
        kNumeric,
        true);
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    reduction(
        "mean",
        {"ditto::mean(a, dims, keepdim)", "Tensor::mean(dims, keepdim)"},
        each([](const Tensor& t) {
          return std::vector{mean(t, {1}), mean(t, {0, 1}, true)};
        }),
        kChunked,
        {kFloat32, kFloat64},
        false);
  }
  reduction(
      "prod",
      {"ditto::prod(a)",
       "ditto::prod(a, dim, keepdim)",
       "Tensor::prod(dim, keepdim)"},
      each([](const Tensor& t) {
        return std::vector{prod(t), prod(t, 1)};
      }),
      kChunked,
      {kFloat32, kFloat64},
      true,
      "",
      s::Domain::kPositive);
  reduction(
      "norm",
      {"ditto::norm(a, p, dims, keepdim)", "Tensor::norm(p, dims, keepdim)"},
      each([](const Tensor& t) {
        const double inf = std::numeric_limits<double>::infinity();
        return std::vector{
            norm(t),
            norm(t, 2, {1}, true),
            norm(t, 1, {0}),
            norm(t, inf, {1}),
            norm(t, 3.5, {0, 1})};
      }),
      kChunked,
      {kFloat32, kFloat64},
      true);
  reduction(
      "all",
      {"ditto::all(a)",
       "ditto::all(a, dim, keepdim)",
       "Tensor::all(dim, keepdim)"},
      each([](const Tensor& t) {
        Tensor some =
            t.defined() ? gt(t, 0) : t; // the bad sample's undefined t
        return std::vector{all(t), all(some, 1), all(some, 0, true), all(t, 1)};
      }),
      kChunked,
      kNumeric,
      true,
      "returns bools");
  reduction(
      "any",
      {"ditto::any(a)",
       "ditto::any(a, dim, keepdim)",
       "Tensor::any(dim, keepdim)"},
      each([](const Tensor& t) {
        Tensor some =
            t.defined() ? gt(t, 0) : t; // the bad sample's undefined t
        return std::vector{any(t), any(some, 1), any(some, 0, true), any(t, 0)};
      }),
      kChunked,
      kNumeric,
      true,
      "returns bools");
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    reduction(
        "max",
        {"ditto::max(a)",
         "ditto::max(a, dim, keepdim)",
         "Tensor::max(dim, keepdim)"},
        each([](const Tensor& t) {
          auto [v, i] = max(t, 1);
          return std::vector{v, i, max(t)};
        }),
        kExtremum,
        kNumeric,
        false);
    reduction(
        "min",
        {"ditto::min(a)",
         "ditto::min(a, dim, keepdim)",
         "Tensor::min(dim, keepdim)"},
        each([](const Tensor& t) {
          auto [v, i] = min(t, 0, true);
          return std::vector{v, i, min(t)};
        }),
        kExtremum,
        kNumeric,
        false);
    const char* index = "returns indices";
    reduction(
        "argmax",
        {"ditto::argmax(a, dim, keepdim)", "Tensor::argmax(dim, keepdim)"},
        each([](const Tensor& t) {
          return std::vector{argmax(t, 1), argmax(t)};
        }),
        kExtremum,
        kNumeric,
        false,
        index);
    reduction(
        "argmin",
        {"ditto::argmin(a, dim, keepdim)", "Tensor::argmin(dim, keepdim)"},
        each([](const Tensor& t) {
          return std::vector{argmin(t, 0, true), argmin(t)};
        }),
        kExtremum,
        kNumeric,
        false,
        index);
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "sum_to_size",
        .family = "reduction",
        .callables = {"Tensor::sum_to_size(shape)"},
        .deterministic_because = kChunked,
        .dtypes = kNumeric,
        .samples =
            [](const SampleSpec& spec) {
              const int64_t r = s::size(spec, 211, 3),
                            c = s::size(spec, 307, 4);
              Tensor x = s::varied({2, r, c}, spec.dtype, 6.0, 1);
              return std::vector<Sample>{
                  {"leading_and_inner", {x}, s::call1([c](const Tensor& t) {
                     return sum_to_size(t, {1, c});
                   })},
              };
            },
        .bad_samples =
            [] {
              return std::vector<Sample>{
                  {"not_expandable",
                   {s::varied({2, 3}, kFloat32, 2.0, 1)},
                   s::call1(
                       [](const Tensor& t) { return sum_to_size(t, {4}); })}};
            },
    });
  }
}

} // namespace ditto
