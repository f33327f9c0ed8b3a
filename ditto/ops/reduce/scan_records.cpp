// The records of the scans cumsum, cumprod (and their in-place forms),
// logcumsumexp, cummax and cummin (scan.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include <cmath>

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"
#include "ditto/ops/scan.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const char* kBlocks =
    "each row is one serial chain up to 16384 elements (PyTorch's loop); a "
    "longer row runs in blocks of 16384 whose totals are folded in order "
    "and whose chains continue from those offsets: the cut depends on the "
    "row's length alone, so the bits do not depend on the thread count";

const char* kExtremes =
    "each row is one serial loop (PyTorch's): the same values and indices "
    "for any thread count";

using ScanFn = std::function<std::vector<Tensor>(const Tensor&, int64_t)>;

// Samples of a scan: along the last dim, dim 0, a middle dim wider than a
// lane group, a non-contiguous input, a 0-dim and a zero-size input, a row
// longer than two blocks; values from make(shape, seed).
std::vector<Sample> scan_samples(
    const SampleSpec& spec,
    const ScanFn& fn,
    const std::function<Tensor(const Shape&, uint64_t)>& make) {
  auto call = [fn](int64_t dim) {
    return [fn, dim](const std::vector<Tensor>& x) { return fn(x[0], dim); };
  };
  const Tensor m = make({s::size(spec, 7, 2), s::size(spec, 301, 5)}, 1);
  return {
      {"last_dim", {m}, call(-1)},
      {"dim0", {m}, call(0)},
      {"strided", {s::strided(m)}, call(1)},
      {"middle_dim",
       {make({2, s::size(spec, 50, 3), s::size(spec, 40, 2)}, 2)},
       call(1)},
      {"scalar", {make({}, 3)}, call(0)},
      {"zero_size", {make({0, 3}, 4)}, call(0)},
      {"long_row", {make({s::size(spec, 40001, 6)}, 5)}, call(0)},
  };
}

std::vector<Sample> scan_bad(const ScanFn& fn) {
  auto at = [fn](int64_t dim) {
    return [fn, dim](const std::vector<Tensor>& x) { return fn(x[0], dim); };
  };
  return {
      s::undefined_input(at(0), 1),
      {"dim_out_of_range", {s::varied({3, 4}, kFloat32, 2.0, 1)}, at(2)},
  };
}

std::vector<Tensor> one(const Tensor& t) {
  return {t};
}

std::vector<Tensor> two(const std::pair<Tensor, Tensor>& p) {
  return {p.first, p.second};
}

void register_sum_or_prod(bool prod) {
  auto fn = [prod](const Tensor& x, int64_t d) {
    return one(prod ? cumprod(x, d) : cumsum(x, d));
  };
  // Products of many values near 1 stay finite; sums take any values.
  auto make = [prod](Dtype dt) {
    return [prod, dt](const Shape& shape, uint64_t seed) {
      return prod && is_floating(dt) ? s::varied(shape, dt, 0.25, seed, 1.0)
                                     : s::varied(shape, dt, 8.0, seed);
    };
  };
  const std::string name = prod ? "cumprod" : "cumsum";
  register_op({
      .name = name,
      .family = "reduction",
      .callables =
          {"ditto::" + name + "(a, dim, dtype)",
           "Tensor::" + name + "(dim, dtype)"},
      .deterministic_because = kBlocks,
      .dtypes = s::kEveryDtype,
      .samples =
          [fn, make, prod](const SampleSpec& spec) {
            auto out = scan_samples(spec, fn, make(spec.dtype));
            // Another result dtype: float32 and float64 swapped, int32
            // from the integers.
            const Dtype to = spec.dtype == kFloat32 ? kFloat64
                : spec.dtype == kFloat64            ? kFloat32
                                                    : kInt32;
            Sample cast{
                "dtype",
                {s::varied({3, s::size(spec, 301, 4)}, spec.dtype, 8.0, 7)},
                [prod, to](const std::vector<Tensor>& x) {
                  return one(prod ? cumprod(x[0], 1, to) : cumsum(x[0], 1, to));
                }};
            cast.gradcheck = to != kFloat32; // float32 rounding
            out.push_back(cast);
            if (prod && is_floating(spec.dtype)) {
              // Zeros in the rows: the backward's three parts around the
              // first zero of a row.
              out.push_back(
                  {"zeros",
                   {s::varied({4, s::size(spec, 301, 6)}, kInt64, 5.0, 8)
                        .to(spec.dtype)},
                   [](const std::vector<Tensor>& x) {
                     return one(cumprod(x[0], 1));
                   }});
            }
            return out;
          },
      .bad_samples =
          [fn, prod] {
            auto out = scan_bad(fn);
            out.push_back(
                {"bool_result",
                 {s::varied({3}, kFloat32, 2.0, 1)},
                 [prod](const std::vector<Tensor>& x) {
                   return one(
                       prod ? cumprod(x[0], 0, kBool) : cumsum(x[0], 0, kBool));
                 }});
            return out;
          },
  });
  register_op({
      .name = name + "_",
      .family = "reduction",
      .callables = {"Tensor::" + name + "_(dim)"},
      .deterministic_because = kBlocks,
      .dtypes = s::kNumeric,
      .samples =
          [prod, make](const SampleSpec& spec) {
            const Tensor x = make(spec.dtype)({3, s::size(spec, 301, 4)}, 9);
            return std::vector<Sample>{
                {"rows", {x}, [prod](const std::vector<Tensor>& in) {
                   Tensor t = in[0];
                   prod ? t.cumprod_(1) : t.cumsum_(1);
                   return one(t);
                 }}};
          },
      .bad_samples =
          [prod] {
            return std::vector<Sample>{
                {"dim_out_of_range",
                 {s::varied({3, 4}, kFloat32, 2.0, 1)},
                 [prod](const std::vector<Tensor>& in) {
                   Tensor t = in[0];
                   prod ? t.cumprod_(3) : t.cumsum_(3);
                   return one(t);
                 }}};
          },
      .inplace = true,
  });
}

} // namespace

DITTO_OP_RECORDS(scan) {
  register_sum_or_prod(false);
  register_sum_or_prod(true);
  register_op({
      .name = "logcumsumexp",
      .family = "reduction",
      .callables = {"ditto::logcumsumexp(a, dim)", "Tensor::logcumsumexp(dim)"},
      .deterministic_because = kBlocks,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto out = scan_samples(
                spec,
                [](const Tensor& x, int64_t d) {
                  return one(logcumsumexp(x, d));
                },
                [dt](const Shape& shape, uint64_t seed) {
                  return s::varied(shape, dt, 8.0, seed);
                });
            const double inf = INFINITY;
            Sample special{
                "infinities_and_nan",
                {tensor(
                     std::vector<double>{
                         -inf, -inf, 1.0, inf, 2.0, inf, std::nan(""), 3.0},
                     {8})
                     .to(dt)},
                [](const std::vector<Tensor>& x) {
                  return one(logcumsumexp(x[0], 0));
                }};
            special.gradcheck = false;
            out.push_back(special);
            return out;
          },
      .bad_samples =
          [] {
            auto out = scan_bad([](const Tensor& x, int64_t d) {
              return one(logcumsumexp(x, d));
            });
            out.push_back(
                {"integer",
                 {s::varied({3}, kInt64, 8.0, 1)},
                 [](const std::vector<Tensor>& x) {
                   return one(logcumsumexp(x[0], 0));
                 }});
            return out;
          },
  });
  for (bool max : {true, false}) {
    auto fn = [max](const Tensor& x, int64_t d) {
      return two(max ? cummax(x, d) : cummin(x, d));
    };
    const std::string name = max ? "cummax" : "cummin";
    register_op({
        .name = name,
        .family = "reduction",
        .callables =
            {"ditto::" + name + "(a, dim)", "Tensor::" + name + "(dim)"},
        .deterministic_because = kExtremes,
        .dtypes = s::kEveryDtype,
        .samples =
            [fn](const SampleSpec& spec) {
              const Dtype dt = spec.dtype;
              auto out = scan_samples(
                  spec, fn, [dt](const Shape& shape, uint64_t seed) {
                    return s::varied(shape, dt, 8.0, seed);
                  });
              // Ties (small integers) and NaNs: the index rules.
              const Shape sizes = {3, s::size(spec, 301, 9)};
              Tensor ties = s::varied(sizes, kInt64, 6.0, 10).to(dt);
              Sample tied{"ties", {ties}, [fn](const std::vector<Tensor>& x) {
                            return fn(x[0], 1);
                          }};
              tied.gradcheck = false;
              out.push_back(tied);
              if (is_floating(dt)) {
                Tensor mask = s::varied(sizes, kInt64, 10.0, 11).eq(0);
                Sample nans{
                    "nans",
                    {where(mask, full({}, std::nan(""), dt), ties)},
                    [fn](const std::vector<Tensor>& x) { return fn(x[0], 1); }};
                nans.gradcheck = false;
                out.push_back(nans);
              }
              return out;
            },
        .bad_samples = [fn] { return scan_bad(fn); },
    });
  }
}

} // namespace ditto
