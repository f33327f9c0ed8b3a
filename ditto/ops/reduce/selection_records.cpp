// The records of the order statistics kthvalue, median, nanmedian, mode
// and topk (selection.cpp) (Note [Op records] in ditto/ops/record.cpp).

#include <cmath>

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"
#include "ditto/ops/selection.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const char* kRows =
    "each row is chosen by one task with PyTorch's algorithm for the op (a "
    "quickselect, std::nth_element, std::sort or std::partial_sort over "
    "(value, index) pairs): the same element for any thread count";

// Inputs: distinct values (gradcheck sees a smooth op), many ties (small
// integers: the tie rules), and NaNs in a floating input.
struct SelectInputs {
  Tensor distinct, ties, nans, row;
};

SelectInputs select_inputs(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const Shape sizes = {s::size(spec, 7, 2), s::size(spec, 301, 5)};
  Tensor ties = s::varied(sizes, kInt64, 8.0, 2).to(dt);
  Tensor nans = s::varied(sizes, dt, 8.0, 3);
  if (is_floating(dt)) {
    // About every fifth element NaN.
    Tensor mask = s::varied(sizes, kInt64, 10.0, 4).eq(0);
    nans = where(mask, full({}, std::nan(""), dt), nans);
  }
  return {
      s::varied(sizes, dt, 8.0, 1),
      ties,
      nans,
      s::varied({s::size(spec, 20001, 9)}, dt, 8.0, 5)};
}

std::vector<Sample> pair_samples(
    const SampleSpec& spec,
    const std::function<
        std::pair<Tensor, Tensor>(const Tensor&, int64_t, bool)>& fn) {
  SelectInputs in = select_inputs(spec);
  auto call = [fn](int64_t dim, bool keep) {
    return [fn, dim, keep](const std::vector<Tensor>& x) {
      auto [v, i] = fn(x[0], dim, keep);
      return std::vector<Tensor>{v, i};
    };
  };
  std::vector<Sample> out = {
      {"last_dim", {in.distinct}, call(-1, false)},
      {"dim0_keepdim", {in.distinct}, call(0, true)},
      {"strided", {s::strided(in.distinct)}, call(1, false)},
      {"long_row", {in.row}, call(0, false)},
  };
  for (auto [label, x] :
       {std::pair{"ties", in.ties}, std::pair{"nans", in.nans}}) {
    Sample smp{label, {x}, call(-1, false)};
    smp.gradcheck = false;
    out.push_back(smp);
  }
  return out;
}

std::vector<Sample> bad_select(const std::function<void(const Tensor&)>& fn) {
  return {
      s::undefined_input(
          s::call1([fn](const Tensor& x) {
            fn(x);
            return x;
          }),
          1),
      {"out_of_range",
       {s::varied({3, 4}, kFloat32, 2.0, 1)},
       s::call1([fn](const Tensor& x) {
         fn(x);
         return x;
       })},
  };
}

} // namespace

DITTO_OP_RECORDS(selection) {
  register_op({
      .name = "kthvalue",
      .family = "reduction",
      .callables =
          {"ditto::kthvalue(a, k, dim, keepdim)",
           "Tensor::kthvalue(k, dim, keepdim)"},
      .deterministic_because = kRows,
      .dtypes = s::kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t k = s::size(spec, 100, 2);
            return pair_samples(
                spec, [k](const Tensor& x, int64_t d, bool keep) {
                  return kthvalue(
                      x,
                      std::min<int64_t>(
                          k, x.dim() ? x.size(d < 0 ? d + x.dim() : d) : 1),
                      d,
                      keep);
                });
          },
      .bad_samples =
          [] { return bad_select([](const Tensor& x) { kthvalue(x, 5, 1); }); },
  });
  for (bool nan : {false, true}) {
    register_op({
        .name = nan ? "nanmedian" : "median",
        .family = "reduction",
        .callables =
            {nan ? "ditto::nanmedian(a)" : "ditto::median(a)",
             nan ? "ditto::nanmedian(a, dim, keepdim)"
                 : "ditto::median(a, dim, keepdim)",
             nan ? "Tensor::nanmedian(dim, keepdim)"
                 : "Tensor::median(dim, keepdim)"},
        .deterministic_because = kRows,
        .dtypes = s::kFloatingAndInt64,
        .samples =
            [nan](const SampleSpec& spec) {
              auto out = pair_samples(
                  spec, [nan](const Tensor& x, int64_t d, bool keep) {
                    return nan ? nanmedian(x, d, keep) : median(x, d, keep);
                  });
              SelectInputs in = select_inputs(spec);
              auto all = [nan](const Tensor& x) {
                return nan ? nanmedian(x) : median(x);
              };
              out.push_back({"all", {in.distinct}, s::call1(all)});
              Sample ties{"all_ties", {in.ties}, s::call1(all)};
              ties.gradcheck = false;
              out.push_back(ties);
              return out;
            },
        .bad_samples =
            [nan] {
              auto empty = [nan](const Tensor& x) {
                return nan ? nanmedian(x) : median(x);
              };
              return std::vector<Sample>{
                  s::undefined_input(s::call1(empty), 1),
                  {"empty",
                   {s::varied({0, 3}, kFloat32, 2.0, 1)},
                   s::call1(empty)},
                  {"empty_dim",
                   {s::varied({0, 3}, kFloat32, 2.0, 1)},
                   [nan](const std::vector<Tensor>& x) {
                     auto [v, i] = nan ? nanmedian(x[0], 0) : median(x[0], 0);
                     return std::vector<Tensor>{v, i};
                   }},
              };
            },
    });
  }
  register_op({
      .name = "mode",
      .family = "reduction",
      .callables =
          {"ditto::mode(a, dim, keepdim)", "Tensor::mode(dim, keepdim)"},
      .deterministic_because = kRows,
      .dtypes = s::kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            return pair_samples(
                spec, [](const Tensor& x, int64_t d, bool keep) {
                  return mode(x, d, keep);
                });
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"empty_dim",
                 {s::varied({0, 3}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& x) {
                   auto [v, i] = mode(x[0], 0);
                   return std::vector<Tensor>{v, i};
                 }},
            };
          },
  });
  for (bool nan : {false, true}) {
    const std::string name = nan ? "nanquantile" : "quantile";
    auto fn = [nan](
                  const Tensor& x,
                  const Tensor& q,
                  std::optional<int64_t> dim,
                  bool keep,
                  const char* mode) {
      return nan ? nanquantile(x, q, dim, keep, mode)
                 : quantile(x, q, dim, keep, mode);
    };
    register_op({
        .name = name,
        .family = "reduction",
        .callables =
            {"ditto::" + name + "(a, q, dim, keepdim, interpolation)",
             "Tensor::" + name + "(q, dim, keepdim, interpolation)"},
        .deterministic_because =
            "a stable sort of each row, then gathers and elementwise "
            "arithmetic: no sums across elements",
        .samples =
            [fn](const SampleSpec& spec) {
              SelectInputs in = select_inputs(spec);
              const Dtype dt = spec.dtype;
              const Tensor qs = tensor(std::vector<double>{
                                           0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0})
                                    .to(dt);
              const Tensor half = full({}, 0.5, dt);
              auto with = [fn](
                              std::optional<int64_t> dim,
                              bool keep,
                              const char* mode) {
                return [fn, dim, keep, mode](const std::vector<Tensor>& x) {
                  return std::vector<Tensor>{fn(x[0], x[1], dim, keep, mode)};
                };
              };
              std::vector<Sample> out = {
                  {"all",
                   {in.distinct, qs},
                   with(std::nullopt, false, "linear")},
                  {"dim_keepdim", {in.distinct, qs}, with(0, true, "linear")},
                  {"strided",
                   {s::strided(in.distinct), half},
                   with(1, false, "linear")},
                  {"long_row", {in.row, qs}, with(0, false, "linear")},
              };
              for (const char* mode :
                   {"lower", "higher", "nearest", "midpoint"}) {
                out.push_back({mode, {in.distinct, qs}, with(-1, false, mode)});
              }
              for (auto [label, x] :
                   {std::pair{"ties", in.ties}, std::pair{"nans", in.nans}}) {
                Sample smp{label, {x, qs}, with(-1, false, "linear")};
                smp.gradcheck = false;
                out.push_back(smp);
              }
              for (Sample& smp : out) {
                smp.constant_inputs = {1}; // q gets no gradient
              }
              return out;
            },
        .bad_samples =
            [fn] {
              const Tensor x = s::varied({3, 4}, kFloat32, 2.0, 1);
              auto call = [fn](const char* mode) {
                return [fn, mode](const std::vector<Tensor>& in) {
                  return std::vector<Tensor>{
                      fn(in[0], in[1], std::nullopt, false, mode)};
                };
              };
              return std::vector<Sample>{
                  {"q_above_one", {x, full({}, 1.5, kFloat32)}, call("linear")},
                  {"q_dtype", {x, full({}, 0.5, kFloat64)}, call("linear")},
                  {"q_two_dims",
                   {x, full({2, 2}, 0.5, kFloat32)},
                   call("linear")},
                  {"interpolation",
                   {x, full({}, 0.5, kFloat32)},
                   call("cubic")},
                  {"integer_input",
                   {s::varied({3}, kInt64, 8.0, 1), full({}, 0.5, kFloat32)},
                   call("linear")},
                  {"empty",
                   {s::varied({0, 3}, kFloat32, 2.0, 1),
                    full({}, 0.5, kFloat32)},
                   call("linear")},
              };
            },
    });
  }
  register_op({
      .name = "topk",
      .family = "reduction",
      .callables =
          {"ditto::topk(a, k, dim, largest, sorted)",
           "Tensor::topk(k, dim, largest, sorted)"},
      .deterministic_because = kRows,
      .dtypes = s::kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            auto out =
                pair_samples(spec, [](const Tensor& x, int64_t d, bool keep) {
                  const int64_t n =
                      x.dim() ? x.size(d < 0 ? d + x.dim() : d) : 1;
                  return topk(x, std::min<int64_t>(3, n), d, !keep, true);
                });
            SelectInputs in = select_inputs(spec);
            // k large against the row: nth_element and sort.
            out.push_back(
                {"many", {in.distinct}, [](const std::vector<Tensor>& x) {
                   auto [v, i] = topk(x[0], x[0].size(-1) / 2 + 1);
                   return std::vector<Tensor>{v, i};
                 }});
            Sample ties{
                "many_ties_unsorted",
                {in.ties},
                [](const std::vector<Tensor>& x) {
                  auto [v, i] =
                      topk(x[0], x[0].size(-1) / 2 + 1, -1, false, false);
                  return std::vector<Tensor>{v, i};
                }};
            ties.gradcheck = false;
            out.push_back(ties);
            return out;
          },
      .bad_samples =
          [] { return bad_select([](const Tensor& x) { topk(x, 5, 1); }); },
  });
}

} // namespace ditto
