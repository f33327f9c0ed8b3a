// The records of the index ops of index.cpp (Note [Op records] in
// record.cpp): index_select, take, the in-place index_add_, index_copy_,
// put_ and their out-of-place forms.

#include "ditto/ops/detail/index_samples.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using s::distinct;
using s::inplace;
using s::kGather;
using s::kOwnerComputes;
using s::out_of_place;
using s::values;

using ::ditto::detail::samples::kFloatingAndInt64;

// The nondeterministic paths. An out-of-place form (index_add, put, ...)
// runs its in-place op on a copy, so its record holds the same path: the
// same entry, declared with the same texts.
const NondeterministicPath kIndexAdd = {
    .entry = "index_add_",
    .reason =
        "the fast variant adds floating source rows into shared destination "
        "rows from several threads, in whatever order they get there",
    .cost =
        "1.35x the fast variant's time into 100000 rows, 0.54x into 100 (1M "
        "float32 rows of 64, 2 threads)",
};
const NondeterministicPath kIndexCopy = {
    .entry = "index_copy_",
    .reason =
        "with duplicate indices, the fast variant lets whichever thread writes "
        "last win; the deterministic one keeps the last in index order",
    .dtypes = "all",
};
const NondeterministicPath kPut = {
    .entry = "put_",
    .reason = "as index_put_, on the flattened tensor",
    .dtypes = "all",
};

// A call over inputs self, source, index along dim.
using RowsCall = std::function<s::Call(int64_t dim)>;

// ---- index_add_ / index_copy_: inputs self, source, index.

std::vector<Sample> index_rows_samples(
    const SampleSpec& spec,
    bool duplicates,
    RowsCall call) {
  const Dtype dt = spec.dtype;
  auto idx = [&](int64_t n, int64_t mod, uint64_t seed) {
    return duplicates ? s::indices(n, mod, seed) : distinct(n, mod, seed);
  };
  if (spec.small) {
    const int64_t n = duplicates ? 7 : 4;
    return {
        {"rows",
         {values({5, 3}, dt, 1), values({n, 3}, dt, 2), idx(n, 5, 0)},
         call(0)},
        {"dim1",
         {values({3, 6}, dt, 3), values({3, 4}, dt, 4), idx(4, 6, 1)},
         call(1)},
        {"strided",
         {s::strided(values({4, 5}, dt, 5)),
          values({3, 5}, dt, 6),
          idx(3, 4, 2)},
         call(0)},
        {"vector",
         {values({9}, dt, 7), values({6}, dt, 8), idx(6, 9, 3)},
         call(0)},
        {"empty_index",
         {values({4, 3}, dt, 9), values({0, 3}, dt, 10), idx(0, 4, 0)},
         call(0)},
    };
  }
  // Destination blocks of 16384 / row length keys: several of them; rows
  // of 13 (updated under a lock by the fast variant) and of 1 (atomics).
  const int64_t n = duplicates ? 5003 : 3001;
  const int64_t nv = duplicates ? 45007 : 30011;
  return {
      {"rows",
       {values({3001, 13}, dt, 1), values({n, 13}, dt, 2), idx(n, 3001, 0)},
       call(0)},
      {"dim1",
       {values({67, 401}, dt, 3), values({67, 389}, dt, 4), idx(389, 401, 1)},
       call(1)},
      {"strided",
       {s::strided(values({1203, 29}, dt, 5)),
        s::strided(values({1100, 29}, dt, 6)),
        idx(1100, 1203, 2)},
       call(0)},
      {"vector",
       {values({30011}, dt, 7), values({nv}, dt, 8), idx(nv, 30011, 3)},
       call(0)},
      {"empty_index",
       {values({4, 3}, dt, 9), values({0, 3}, dt, 10), idx(0, 4, 0)},
       call(0)},
  };
}

std::vector<Sample> index_rows_bad(RowsCall make) {
  s::Call call = make(0);
  Tensor self = s::varied({4, 3}, kFloat32, 2.0, 1);
  return {
      {"index_out_of_range",
       {self, s::varied({2, 3}, kFloat32, 2.0, 2), tensor<int64_t>({1, 4})},
       call},
      {"source_rows_mismatch",
       {self, s::varied({3, 3}, kFloat32, 2.0, 2), tensor<int64_t>({1, 2})},
       call},
      {"source_cols_mismatch",
       {self, s::varied({2, 2}, kFloat32, 2.0, 2), tensor<int64_t>({1, 2})},
       call},
      {"float_index",
       {self, s::varied({2, 3}, kFloat32, 2.0, 2), tensor<float>({1, 2})},
       call},
      {"dtype_mismatch",
       {self, s::varied({2, 3}, kFloat64, 2.0, 2), tensor<int64_t>({1, 2})},
       call},
      s::undefined_input(call, 3),
  };
}

// ---- put_: inputs self, source, index (flat positions, negative ones
// counting from the end). accumulate adds (duplicates allowed), otherwise
// distinct positions.

std::vector<Sample> put_samples(
    const SampleSpec& spec,
    bool accumulate,
    s::Call call) {
  const Dtype dt = spec.dtype;
  auto idx = [&](int64_t n, int64_t mod, uint64_t seed) {
    return accumulate ? s::indices(n, mod, seed) : distinct(n, mod, seed);
  };
  const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 5);
  const int64_t n =
      accumulate ? s::size(spec, 40009, 9) : s::size(spec, 30011, 7);
  const std::string tag = accumulate ? "" : "_assign";
  Tensor self = values({r, c}, dt, 1);
  return {
      {"flat" + tag, {self, values({n}, dt, 2), idx(n, r * c, 0)}, call},
      {"shaped_index" + tag,
       {self,
        values({n}, dt, 4).reshape({1, n}),
        idx(n, r * c, 1).reshape({1, n})},
       call},
      {"negative" + tag,
       {self, values({n}, dt, 5), idx(n, r * c, 3).sub(r * c)},
       call},
      {"strided" + tag,
       {s::strided(self), values({n}, dt, 6), idx(n, r * c, 2)},
       call},
      {"empty_index" + tag, {self, values({0}, dt, 7), idx(0, r * c, 0)}, call},
  };
}

std::vector<Sample> put_bad(s::Call call) {
  Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
  return {
      {"index_out_of_range",
       {self, s::varied({2}, kFloat32, 2.0, 2), tensor<int64_t>({0, 12})},
       call},
      {"count_mismatch",
       {self, s::varied({3}, kFloat32, 2.0, 2), tensor<int64_t>({0, 1})},
       call},
      {"float_index",
       {self, s::varied({2}, kFloat32, 2.0, 2), tensor<float>({0, 1})},
       call},
      s::undefined_input(call, 3),
  };
}

} // namespace

DITTO_OP_RECORDS(index) {
  // ---- gathers

  register_op({
      .name = "index_select",
      .family = "index",
      .callables = s::callables(
          "ditto::index_select(self, dim, index)",
          "Tensor::index_select(dim, index)"),
      .deterministic_because = kGather,
      .nondeterministic =
          {{.entry = "index_select_backward",
            .reason =
                "adds the output gradient into the input gradient with index_add_ (see its entry)"}},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [](int64_t dim) {
              return s::call2([dim](const Tensor& a, const Tensor& i) {
                return index_select(a, dim, i);
              });
            };
            const int64_t r = s::size(spec, 1201, 5), c = s::size(spec, 37, 3);
            const int64_t n = s::size(spec, 3001, 7);
            Tensor self = values({r, c}, dt, 1);
            return std::vector<Sample>{
                {"rows", {self, s::indices(n, r, 0)}, call(0)},
                {"columns",
                 {values({s::size(spec, 301, 3), s::size(spec, 97, 6)}, dt, 2),
                  s::indices(s::size(spec, 173, 4), s::size(spec, 97, 6), 1)},
                 call(-1)},
                {"strided", {s::strided(self), s::indices(n, r, 2)}, call(0)},
                {"scalar_index",
                 {self, tensor<int64_t>({2}).reshape({})},
                 call(0)},
                {"empty_index", {self, s::indices(0, r)}, call(0)},
                {"empty_self",
                 {values({0, c}, dt, 3), s::indices(4, c)},
                 call(1)},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& a, const Tensor& i) {
              return index_select(a, 0, i);
            });
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"out_of_range", {self, tensor<int64_t>({0, 3})}, call},
                {"negative", {self, tensor<int64_t>({-1})}, call},
                {"2d_index", {self, tensor<int64_t>({0, 1}, {1, 2})}, call},
                {"float_index", {self, tensor<float>({0, 1})}, call},
                s::undefined_input(call, 2),
            };
          },
  });

  register_op({
      .name = "take",
      .family = "index",
      .callables =
          s::callables("ditto::take(self, index)", "Tensor::take(index)"),
      .deterministic_because = kGather,
      .nondeterministic =
          {{.entry = "take_backward",
            .reason =
                "adds the output gradient into the input gradient with put_ (see its entry)"}},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& i) { return take(a, i); });
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            const int64_t n = s::size(spec, 70001, 9);
            Tensor self = values({r, c}, dt, 1);
            return std::vector<Sample>{
                {"flat", {self, s::indices(n, r * c, 0)}, call},
                {"shaped_index",
                 {self, s::indices(3 * (n / 4), r * c, 1).reshape({3, n / 4})},
                 call},
                {"negative", {self, s::indices(n, r * c, 2).sub(r * c)}, call},
                {"strided", {s::strided(self), s::indices(n, r * c, 3)}, call},
                {"empty_index", {self, s::indices(0, 1)}, call},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call2(
                [](const Tensor& a, const Tensor& i) { return take(a, i); });
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"out_of_range", {self, tensor<int64_t>({12})}, call},
                {"negative_out_of_range", {self, tensor<int64_t>({-13})}, call},
                {"float_index", {self, tensor<float>({0})}, call},
                s::undefined_input(call, 2),
            };
          },
  });

  // ---- index_add_ / index_copy_ and their out-of-place forms

  RowsCall add_ = [](int64_t dim) {
    return inplace([dim](Tensor& self, const std::vector<Tensor>& in) {
      self.index_add_(dim, in[2], in[1], 2);
    });
  };
  RowsCall add = [](int64_t dim) -> s::Call {
    return [dim](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].index_add(dim, in[2], in[1], 2)};
    };
  };
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "index_add_",
        .family = "index",
        .callables = {"Tensor::index_add_(dim, index, source, alpha)"},
        .deterministic_because = kOwnerComputes,
        .nondeterministic = {kIndexAdd},
        .dtypes = kFloatingAndInt64,
        .samples =
            [add_](const SampleSpec& spec) {
              return index_rows_samples(spec, true, add_);
            },
        .bad_samples = [add_] { return index_rows_bad(add_); },
        .inplace = true,
    });
  }
  register_op({
      .name = "index_add",
      .family = "index",
      .callables = s::callables(
          "ditto::index_add(self, dim, index, source, alpha)",
          "Tensor::index_add(dim, index, source, alpha)"),
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexAdd},
      .dtypes = kFloatingAndInt64,
      .samples =
          [add](const SampleSpec& spec) {
            return out_of_place(index_rows_samples(spec, true, add));
          },
      .bad_samples = [add] { return out_of_place(index_rows_bad(add)); },
  });

  RowsCall copy_ = [](int64_t dim) {
    return inplace([dim](Tensor& self, const std::vector<Tensor>& in) {
      self.index_copy_(dim, in[2], in[1]);
    });
  };
  RowsCall copy = [](int64_t dim) -> s::Call {
    return [dim](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].index_copy(dim, in[2], in[1])};
    };
  };
  // Distinct indices: with duplicates the fast variant's last write
  // differs (as its path says); duplicates that write equal rows agree.
  auto copy_samples = [](const SampleSpec& spec, RowsCall call) {
    std::vector<Sample> out = index_rows_samples(spec, false, call);
    if (!spec.small) {
      Tensor i = s::indices(5003, 3001, 0);
      Tensor base = values({3001, 13}, spec.dtype, 2);
      out.push_back(
          {"duplicates_equal_rows",
           {values({3001, 13}, spec.dtype, 1), index_select(base, 0, i), i},
           call(0)});
    }
    return out;
  };
  register_op({
      .name = "index_copy_",
      .family = "index",
      .callables = {"Tensor::index_copy_(dim, index, source)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexCopy},
      .dtypes = kFloatingAndInt64,
      .samples =
          [copy_, copy_samples](const SampleSpec& spec) {
            return copy_samples(spec, copy_);
          },
      .bad_samples = [copy_] { return index_rows_bad(copy_); },
      .inplace = true,
  });
  register_op({
      .name = "index_copy",
      .family = "index",
      .callables = s::callables(
          "ditto::index_copy(self, dim, index, source)",
          "Tensor::index_copy(dim, index, source)"),
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexCopy},
      .dtypes = kFloatingAndInt64,
      .samples =
          [copy, copy_samples](const SampleSpec& spec) {
            return out_of_place(copy_samples(spec, copy));
          },
      .bad_samples = [copy] { return out_of_place(index_rows_bad(copy)); },
  });

  // ---- put_ / put

  auto put_ = [](bool accumulate) {
    return inplace([accumulate](Tensor& self, const std::vector<Tensor>& in) {
      self.put_(in[2], in[1], accumulate);
    });
  };
  auto put = [](bool accumulate) -> s::Call {
    return [accumulate](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{in[0].put(in[2], in[1], accumulate)};
    };
  };
  auto put_both = [](const SampleSpec& spec, auto make) {
    std::vector<Sample> out = put_samples(spec, true, make(true));
    for (Sample& sm : put_samples(spec, false, make(false))) {
      out.push_back(std::move(sm));
    }
    return out;
  };
  register_op({
      .name = "put_",
      .family = "index",
      .callables = {"Tensor::put_(index, source, accumulate)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kPut},
      .dtypes = kFloatingAndInt64,
      .samples = [put_, put_both](
                     const SampleSpec& spec) { return put_both(spec, put_); },
      .bad_samples = [put_] { return put_bad(put_(false)); },
      .inplace = true,
  });
  register_op({
      .name = "put",
      .family = "index",
      .callables = s::callables(
          "ditto::put(self, index, source, accumulate)",
          "Tensor::put(index, source, accumulate)"),
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kPut},
      .dtypes = kFloatingAndInt64,
      .samples =
          [put, put_both](const SampleSpec& spec) {
            return out_of_place(put_both(spec, put));
          },
      .bad_samples = [put] { return out_of_place(put_bad(put(false))); },
  });
}

} // namespace ditto
