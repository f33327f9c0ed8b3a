// The records of gather and the scatters (scatter.cpp) (Note [Op records]
// in record.cpp).

#include <numeric>

#include "ditto/ops/detail/index_samples.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using s::inplace;
using s::out_of_place;
using s::values;

using ::ditto::detail::samples::kFloatingAndInt64;

// The nondeterministic paths. An out-of-place form (scatter_add, ...) runs
// its in-place op on a copy, so its record holds the same path: the same
// entry, declared with the same texts.
const NondeterministicPath kScatterAdd = {
    .entry = "scatter_add_",
    .reason =
        "the fast variant adds floating values into shared destinations with "
        "atomic adds from several threads, in whatever order they get there "
        "(for an index of fewer than 16 columns; wider ones are split by "
        "column, race free)",
    .cost =
        "0.94x the fast variant's time into 100000 rows, 0.91x into 100 (1M "
        "float32 rows of 64, 2 threads)",
};
const NondeterministicPath kScatter = {
    .entry = "scatter_",
    .reason =
        "with a tensor src and duplicate indices, the fast variant lets "
        "whichever thread writes last win (for an index of fewer than 16 "
        "columns); the deterministic one keeps the last in index order",
    .dtypes = "all",
};
const NondeterministicPath kScatterReduce = {
    .entry = "scatter_reduce_",
    .reason =
        "the fast variant combines floating values (sum, prod, mean; amax and "
        "amin through the sign of zero and NaN payloads) with atomic updates "
        "from several threads, in whatever order they get there (for an index "
        "of fewer than 16 columns)",
};

// What the deterministic variant of the scatters does (Note [Owner
// computes] and Note [Scatter by columns]).
const char* kOwnerComputesByColumns =
    "under the deterministic mode, updates are grouped by fixed destination "
    "blocks and each block applies its updates in index order (an index of "
    "16 columns or more: each column chunk in index order): the serial "
    "loop's bits at any thread count";

// An index [n, cols] of values in [0, mod). distinct: each column's values
// differ (n <= mod), for the scatters where the last write wins.
Tensor scatter_index(
    int64_t n,
    int64_t cols,
    int64_t mod,
    uint64_t seed,
    bool distinct) {
  if (!distinct) {
    return s::indices(n * cols, mod, seed).reshape({n, cols});
  }
  int64_t step = 37;
  while (mod > 0 && std::gcd(step, mod) != 1) {
    ++step;
  }
  std::vector<int64_t> v(static_cast<size_t>(n * cols));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      v[size_t(i * cols + j)] = (i * step + j * 11 + int64_t(seed)) % mod;
    }
  }
  return tensor(v, {n, cols});
}

// A call over inputs self, src, index along dim.
using DimCall = std::function<s::Call(int64_t dim)>;

// Samples of a scatter with a tensor src: inputs self, src, index. An
// index of fewer than 16 columns takes the element updates (and the fast
// variant's races), a wider one the column-parallel loop.
std::vector<Sample> scatter_samples(
    const SampleSpec& spec,
    bool distinct,
    DimCall call) {
  const Dtype dt = spec.dtype;
  auto idx = [&](int64_t n, int64_t cols, int64_t mod, uint64_t seed) {
    return scatter_index(n, cols, mod, seed, distinct);
  };
  // Along dim 1: an index distinct along its rows.
  auto idx1 = [&](int64_t rows, int64_t n, int64_t mod, uint64_t seed) {
    return idx(n, rows, mod, seed).t().contiguous();
  };
  if (spec.small) {
    const int64_t n = distinct ? 4 : 7;
    return {
        {"narrow",
         {values({5, 3}, dt, 1), values({n, 4}, dt, 2), idx(n, 3, 5, 0)},
         call(0)},
        {"dim1",
         {values({3, 6}, dt, 3), values({3, 5}, dt, 4), idx1(2, 4, 6, 1)},
         call(1)},
        {"strided",
         {s::strided(values({4, 5}, dt, 5)),
          s::strided(values({4, 5}, dt, 6)),
          idx(4, 5, 4, 2)},
         call(0)},
        {"empty_index",
         {values({4, 3}, dt, 7), values({2, 3}, dt, 8), idx(0, 3, 4, 0)},
         call(0)},
    };
  }
  const int64_t n = distinct ? 3001 : 5003;
  const int64_t n1 = distinct ? 3001 : 5003;
  return {
      // 40000 element updates into 24000 destinations.
      {"narrow",
       {values({3001, 8}, dt, 1), values({n, 8}, dt, 2), idx(n, 8, 3001, 0)},
       call(0)},
      // The index smaller than src.
      {"smaller_index",
       {values({3001, 8}, dt, 3),
        values({n + 7, 9}, dt, 4),
        idx(n, 7, 3001, 1)},
       call(0)},
      // Along dim 1: 7 rows of updates, each 7 columns once moved.
      {"dim1",
       {values({11, 3001}, dt, 5),
        values({7, n1}, dt, 6),
        idx1(7, n1, 3001, 2)},
       call(1)},
      // 100 columns: the column-parallel loop.
      {"wide",
       {values({500, 100}, dt, 7),
        values({distinct ? 500 : 700, 100}, dt, 8),
        idx(distinct ? 500 : 700, 100, 500, 3)},
       call(0)},
      {"strided",
       {s::strided(values({1201, 13}, dt, 9)),
        s::strided(values({1201, 13}, dt, 10)),
        idx(1201, 13, 1201, 4)},
       call(0)},
      {"empty_index",
       {values({4, 3}, dt, 11), values({2, 3}, dt, 12), idx(0, 3, 4, 0)},
       call(0)},
  };
}

std::vector<Sample> scatter_bad(s::Call call) {
  Tensor self = s::varied({4, 3}, kFloat32, 2.0, 1);
  Tensor src = s::varied({2, 3}, kFloat32, 2.0, 2);
  return {
      {"index_out_of_range",
       {self, src, tensor<int64_t>({0, 4}, {2, 1})},
       call},
      {"index_rank", {self, src, tensor<int64_t>({0, 1})}, call},
      {"index_larger_than_src",
       {self, src, tensor<int64_t>({0, 1, 2, 3, 0, 1, 2, 3, 0}, {3, 3})},
       call},
      {"index_wider_than_self",
       {self,
        s::varied({2, 5}, kFloat32, 2.0, 3),
        tensor<int64_t>({0, 1, 2, 3, 0, 1, 2, 3}, {2, 4})},
       call},
      {"float_index", {self, src, tensor<float>({0, 1}, {2, 1})}, call},
      {"dtype_mismatch",
       {self,
        s::varied({2, 3}, kFloat64, 2.0, 2),
        tensor<int64_t>({0, 1}, {2, 1})},
       call},
      s::undefined_input(call, 3),
  };
}

// Samples of scatter_ with a value: inputs self, index (duplicates write
// the same value).
std::vector<Sample> scatter_value_samples(
    const SampleSpec& spec,
    std::function<s::Call(int64_t dim)> call) {
  const Dtype dt = spec.dtype;
  if (spec.small) {
    return {
        {"value",
         {values({5, 3}, dt, 1), scatter_index(6, 3, 5, 0, false)},
         call(0)},
        {"value_dim1",
         {values({3, 6}, dt, 2), scatter_index(2, 4, 6, 1, false)},
         call(1)},
    };
  }
  return {
      {"value",
       {values({3001, 8}, dt, 1), scatter_index(5003, 8, 3001, 0, false)},
       call(0)},
      {"value_wide",
       {values({500, 100}, dt, 2), scatter_index(700, 100, 500, 1, false)},
       call(0)},
      {"value_strided",
       {s::strided(values({1201, 13}, dt, 3)),
        scatter_index(2001, 13, 1201, 2, false)},
       call(0)},
  };
}

// ---- index_reduce_: inputs self, source, index (1-d, with duplicates).

std::vector<Sample> index_reduce_samples(
    const SampleSpec& spec,
    bool inplace_form) {
  const Dtype dt = spec.dtype;
  auto call =
      [inplace_form](
          int64_t dim, std::string reduce, bool include_self) -> s::Call {
    if (inplace_form) {
      return inplace([=](Tensor& self, const std::vector<Tensor>& in) {
        self.index_reduce_(dim, in[2], in[1], reduce, include_self);
      });
    }
    return [=](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{
          in[0].index_reduce(dim, in[2], in[1], reduce, include_self)};
    };
  };
  const bool small = spec.small;
  const int64_t r = small ? 4 : 701, c = small ? 3 : 20;
  const int64_t n = small ? 6 : 1503;
  Tensor index = s::indices(n, r, 7);
  std::vector<Sample> out;
  for (const char* reduce : {"prod", "mean", "amax", "amin"}) {
    const bool prod = std::string(reduce) == "prod";
    // Products stay near 1 (and away from 0) in floating types.
    auto vals = [&](const Shape& sh, uint64_t seed) {
      return prod && is_floating(dt) ? s::positive(sh, dt, seed)
                                     : values(sh, dt, seed);
    };
    for (bool include_self : {true, false}) {
      out.push_back(
          {std::string(reduce) + (include_self ? "" : "_exclude_self"),
           {vals({r, c}, 1), vals({n, c}, 2), index},
           call(0, reduce, include_self)});
    }
    // Along the last dim, an int32 index.
    out.push_back(
        {std::string(reduce) + "_dim1",
         {vals({c, r}, 3), vals({c, n}, 4), index.to(kInt32)},
         call(-1, reduce, true)});
  }
  return out;
}

std::vector<Sample> index_reduce_bad(bool inplace_form) {
  auto call = [inplace_form](std::string reduce) -> s::Call {
    if (inplace_form) {
      return inplace([=](Tensor& self, const std::vector<Tensor>& in) {
        self.index_reduce_(0, in[2], in[1], reduce);
      });
    }
    return [=](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].index_reduce(0, in[2], in[1], reduce)};
    };
  };
  Tensor self = s::varied({4, 3}, kFloat32, 2.0, 1);
  Tensor src = s::varied({2, 3}, kFloat32, 2.0, 2);
  std::vector<Sample> out = {
      {"sum_reduce", {self, src, tensor<int64_t>({0, 1})}, call("sum")},
      {"index_out_of_range",
       {self, src, tensor<int64_t>({0, 4})},
       call("prod")},
      {"negative_index", {self, src, tensor<int64_t>({0, -1})}, call("amax")},
      {"index_2d", {self, src, tensor<int64_t>({0, 1}, {1, 2})}, call("amin")},
      {"float_index", {self, src, tensor({0.0f, 1.0f})}, call("mean")},
      {"index_count", {self, src, tensor<int64_t>({0, 1, 2})}, call("prod")},
      {"source_shape",
       {self, s::varied({2, 4}, kFloat32, 2.0, 2), tensor<int64_t>({0, 1})},
       call("prod")},
      {"source_dtype",
       {self, src.to(kFloat64), tensor<int64_t>({0, 1})},
       call("prod")},
  };
  return inplace_form ? out : out_of_place(out);
}

// ---- scatter_reduce_: inputs self, src, index.

std::vector<Sample> scatter_reduce_samples(
    const SampleSpec& spec,
    bool inplace_form) {
  const Dtype dt = spec.dtype;
  auto call =
      [inplace_form](
          int64_t dim, std::string reduce, bool include_self) -> s::Call {
    if (inplace_form) {
      return inplace([=](Tensor& self, const std::vector<Tensor>& in) {
        self.scatter_reduce_(dim, in[2], in[1], reduce, include_self);
      });
    }
    return [=](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{
          in[0].scatter_reduce(dim, in[2], in[1], reduce, include_self)};
    };
  };
  const bool small = spec.small;
  const int64_t r = small ? 5 : 3001, c = small ? 3 : 8;
  const int64_t n = small ? 7 : 5003;
  Tensor self = values({r, c}, dt, 1);
  Tensor src = values({n, c}, dt, 2);
  Tensor index = scatter_index(n, c, r, 0, false);
  // Products stay near 1 (and away from 0) in floating types.
  Tensor pself = is_floating(dt) ? s::positive({r, c}, dt, 3) : self;
  Tensor psrc = is_floating(dt) ? s::positive({n, c}, dt, 4) : src;
  std::vector<Sample> out;
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    const bool prod = std::string(reduce) == "prod";
    for (bool include_self : {true, false}) {
      out.push_back(
          {std::string(reduce) + (include_self ? "" : "_exclude_self"),
           {prod ? pself : self, prod ? psrc : src, index},
           call(0, reduce, include_self)});
    }
  }
  const int64_t w = small ? 4 : 100, wr = small ? 3 : 500, wn = small ? 5 : 700;
  out.push_back(
      {"wide_mean",
       {values({wr, w}, dt, 5),
        values({wn, w}, dt, 6),
        scatter_index(wn, w, wr, 1, false)},
       call(0, "mean", true)});
  // src larger than the index: only its index-shaped corner is reduced,
  // and the rest of src gets a zero gradient.
  out.push_back(
      {"dim1_amax",
       {values({small ? 3 : 11, small ? 6 : 3001}, dt, 7),
        values({small ? 3 : 7, small ? 5 : 5003}, dt, 8),
        scatter_index(
            small ? 4 : 5003, small ? 2 : 7, small ? 6 : 3001, 2, false)
            .t()
            .contiguous()},
       call(1, "amax", true)});
  // The same along dim 1 with src of the index's shape.
  out.push_back(
      {"dim1_amin",
       {values({small ? 3 : 11, small ? 6 : 3001}, dt, 11),
        values({small ? 2 : 7, small ? 4 : 5003}, dt, 12),
        scatter_index(
            small ? 4 : 5003, small ? 2 : 7, small ? 6 : 3001, 3, false)
            .t()
            .contiguous()},
       call(1, "amin", true)});
  out.push_back(
      {"strided_sum",
       {s::strided(self), s::strided(src), index},
       call(0, "sum", true)});
  out.push_back(
      {"empty_index",
       {values({4, 3}, dt, 9),
        values({2, 3}, dt, 10),
        scatter_index(0, 3, 4, 0, false)},
       call(0, "prod", true)});
  return out;
}

} // namespace

DITTO_OP_RECORDS(scatter) {
  // ---- gather

  register_op({
      .name = "gather",
      .family = "scatter",
      .callables = s::callables(
          "ditto::gather(self, dim, index)", "Tensor::gather(dim, index)"),
      .deterministic_because =
          "a gather: every output element is read once from its source",
      .nondeterministic =
          {{.entry = "gather_backward",
            .reason =
                "adds the output gradient into the input gradient with scatter_add_ (see its entry)"}},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [](int64_t dim) {
              return s::call2([dim](const Tensor& a, const Tensor& i) {
                return gather(a, dim, i);
              });
            };
            const bool small = spec.small;
            const int64_t r = small ? 5 : 3001, c = small ? 3 : 13;
            const int64_t n = small ? 7 : 5003;
            Tensor self = values({r, c}, dt, 1);
            return std::vector<Sample>{
                {"rows", {self, scatter_index(n, c, r, 0, false)}, call(0)},
                {"narrower_index",
                 {self, scatter_index(n, c - 1, r, 1, false)},
                 call(0)},
                {"dim1",
                 {values({small ? 3 : 300, small ? 6 : 50}, dt, 2),
                  scatter_index(
                      small ? 3 : 300,
                      small ? 4 : 80,
                      small ? 6 : 50,
                      2,
                      false)},
                 call(-1)},
                {"strided",
                 {s::strided(self), scatter_index(n, c, r, 3, false)},
                 call(0)},
                {"empty_index",
                 {self, scatter_index(0, c, r, 0, false)},
                 call(0)},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& a, const Tensor& i) {
              return gather(a, 0, i);
            });
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"out_of_range", {self, tensor<int64_t>({3}, {1, 1})}, call},
                {"index_rank", {self, tensor<int64_t>({0})}, call},
                {"index_wider_than_self",
                 {self, tensor<int64_t>({0, 0, 0, 0, 0}, {1, 5})},
                 call},
                {"float_index", {self, tensor<float>({0}, {1, 1})}, call},
                s::undefined_input(call, 2),
            };
          },
  });

  // ---- scatter_add_ / scatter_add

  DimCall add_ = [](int64_t dim) {
    return inplace([dim](Tensor& self, const std::vector<Tensor>& in) {
      self.scatter_add_(dim, in[2], in[1]);
    });
  };
  DimCall add = [](int64_t dim) -> s::Call {
    return [dim](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].scatter_add(dim, in[2], in[1])};
    };
  };
  register_op({
      .name = "scatter_add_",
      .family = "scatter",
      .callables = {"Tensor::scatter_add_(dim, index, src)"},
      .deterministic_because = kOwnerComputesByColumns,
      .nondeterministic = {kScatterAdd},
      .dtypes = kFloatingAndInt64,
      .samples =
          [add_](const SampleSpec& spec) {
            return scatter_samples(spec, false, add_);
          },
      .bad_samples = [add_] { return scatter_bad(add_(0)); },
      .inplace = true,
  });
  register_op({
      .name = "scatter_add",
      .family = "scatter",
      .callables = s::callables(
          "ditto::scatter_add(self, dim, index, src)",
          "Tensor::scatter_add(dim, index, src)"),
      .deterministic_because = kOwnerComputesByColumns,
      .nondeterministic = {kScatterAdd},
      .dtypes = kFloatingAndInt64,
      .samples =
          [add](const SampleSpec& spec) {
            return out_of_place(scatter_samples(spec, false, add));
          },
      .bad_samples = [add] { return out_of_place(scatter_bad(add(0))); },
  });

  // ---- scatter_ / scatter, with a tensor src or a value

  DimCall src_ = [](int64_t dim) {
    return inplace([dim](Tensor& self, const std::vector<Tensor>& in) {
      self.scatter_(dim, in[2], in[1]);
    });
  };
  DimCall src = [](int64_t dim) -> s::Call {
    return [dim](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].scatter(dim, in[2], in[1])};
    };
  };
  DimCall value_ = [](int64_t dim) {
    return inplace([dim](Tensor& self, const std::vector<Tensor>& in) {
      self.scatter_(dim, in[1], 2);
    });
  };
  DimCall value = [](int64_t dim) -> s::Call {
    return [dim](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].scatter(dim, in[1], 2)};
    };
  };
  // A tensor src with distinct indices per column: with duplicates the
  // fast variant's last write differs (as its path says). Values write the
  // same value at duplicates: every variant agrees.
  auto scatter_all =
      [](const SampleSpec& spec, DimCall with_src, DimCall with_value) {
        std::vector<Sample> out = scatter_samples(spec, true, with_src);
        for (Sample& sm : scatter_value_samples(spec, with_value)) {
          out.push_back(std::move(sm));
        }
        return out;
      };
  register_op({
      .name = "scatter_",
      .family = "scatter",
      .callables =
          {"Tensor::scatter_(dim, index, src)",
           "Tensor::scatter_(dim, index, value)"},
      .deterministic_because = kOwnerComputesByColumns,
      .nondeterministic = {kScatter},
      .dtypes = kFloatingAndInt64,
      .samples =
          [src_, value_, scatter_all](const SampleSpec& spec) {
            return scatter_all(spec, src_, value_);
          },
      .bad_samples =
          [src_, value_] {
            std::vector<Sample> out = scatter_bad(src_(0));
            out.push_back(
                {"value_index_out_of_range",
                 {s::varied({4, 3}, kFloat32, 2.0, 1),
                  tensor<int64_t>({4}, {1, 1})},
                 value_(0)});
            return out;
          },
      .inplace = true,
  });
  register_op({
      .name = "scatter",
      .family = "scatter",
      .callables =
          {"ditto::scatter(self, dim, index, src)",
           "ditto::scatter(self, dim, index, value)",
           "Tensor::scatter(dim, index, src)",
           "Tensor::scatter(dim, index, value)"},
      .deterministic_because = kOwnerComputesByColumns,
      .nondeterministic = {kScatter},
      .dtypes = kFloatingAndInt64,
      .samples =
          [src, value, scatter_all](const SampleSpec& spec) {
            return out_of_place(scatter_all(spec, src, value));
          },
      .bad_samples = [src] { return out_of_place(scatter_bad(src(0))); },
  });

  // ---- scatter_reduce_ / scatter_reduce

  auto reduce_bad = [](bool inplace_form) {
    s::Call call = inplace_form
        ? inplace([](Tensor& self, const std::vector<Tensor>& in) {
            self.scatter_reduce_(0, in[2], in[1], "median");
          })
        : s::Call([](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{
                in[0].scatter_reduce(0, in[2], in[1], "median")};
          });
    Tensor self = s::varied({4, 3}, kFloat32, 2.0, 1);
    std::vector<Sample> out = {
        {"unknown_reduce",
         {self,
          s::varied({2, 3}, kFloat32, 2.0, 2),
          tensor<int64_t>({0, 1}, {2, 1})},
         call}};
    s::Call sum = inplace_form
        ? inplace([](Tensor& self, const std::vector<Tensor>& in) {
            self.scatter_reduce_(0, in[2], in[1], "sum");
          })
        : s::Call([](const std::vector<Tensor>& in) {
            return std::vector<Tensor>{
                in[0].scatter_reduce(0, in[2], in[1], "sum")};
          });
    for (Sample& sm : scatter_bad(sum)) {
      out.push_back(std::move(sm));
    }
    return inplace_form ? out : out_of_place(out);
  };
  register_op({
      .name = "scatter_reduce_",
      .family = "scatter",
      .callables =
          {"Tensor::scatter_reduce_(dim, index, src, reduce, include_self)"},
      .deterministic_because = kOwnerComputesByColumns,
      .nondeterministic = {kScatterReduce},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            return scatter_reduce_samples(spec, true);
          },
      .bad_samples = [reduce_bad] { return reduce_bad(true); },
      .inplace = true,
  });
  register_op({
      .name = "scatter_reduce",
      .family = "scatter",
      .callables =
          {"ditto::scatter_reduce(self, dim, index, src, reduce, include_self)",
           "Tensor::scatter_reduce(dim, index, src, reduce, include_self)"},
      .deterministic_because = kOwnerComputesByColumns,
      .nondeterministic = {kScatterReduce},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            return out_of_place(scatter_reduce_samples(spec, false));
          },
      .bad_samples = [reduce_bad] { return reduce_bad(false); },
  });
  const char* kIndexReduce =
      "scatter_reduce_ with the index expanded to source's shape (its "
      "deterministic variant under the deterministic mode: each destination "
      "block applies its updates in index order)";
  register_op({
      .name = "index_reduce_",
      .family = "scatter",
      .callables =
          {"Tensor::index_reduce_(dim, index, source, reduce, include_self)"},
      .deterministic_because = kIndexReduce,
      .nondeterministic = {kScatterReduce},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            return index_reduce_samples(spec, true);
          },
      .bad_samples = [] { return index_reduce_bad(true); },
      .inplace = true,
  });
  register_op({
      .name = "index_reduce",
      .family = "scatter",
      .callables =
          {"ditto::index_reduce(self, dim, index, source, reduce, "
           "include_self)",
           "Tensor::index_reduce(dim, index, source, reduce, include_self)"},
      .deterministic_because = kIndexReduce,
      .nondeterministic = {kScatterReduce},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            return out_of_place(index_reduce_samples(spec, false));
          },
      .bad_samples = [] { return index_reduce_bad(false); },
  });
}

} // namespace ditto
