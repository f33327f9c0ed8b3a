// The records of the advanced indexing ops of advanced_index.cpp (Note
// [Op records] in record.cpp): index, the in-place index_put_ and its
// out-of-place form.

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

// The nondeterministic path. index_put runs index_put_ on a copy, so its
// record holds the same path: the same entry, declared with the same texts.
const NondeterministicPath kIndexPut = {
    .entry = "index_put_",
    .reason =
        "accumulate=true: the fast variant adds floating values from several "
        "threads in whatever order they get there; accumulate=false with "
        "duplicate indices: whichever thread writes last wins (the "
        "deterministic variant keeps the last in index order)",
    .dtypes = "all",
};

// ---- index_put_: inputs self, values; the indices are constants of the
// call (the op's frame is given self and values).

using PutCall = std::function<s::Call(std::vector<Tensor> indices)>;

std::vector<Sample> index_put_samples(
    const SampleSpec& spec,
    bool accumulate,
    PutCall call) {
  const Dtype dt = spec.dtype;
  auto idx = [&](int64_t n, int64_t mod, uint64_t seed) {
    return accumulate ? s::indices(n, mod, seed) : distinct(n, mod, seed);
  };
  const bool small = spec.small;
  const std::string tag = accumulate ? "" : "_assign";
  const int64_t r = small ? 5 : 3001, c = small ? 3 : 13;
  const int64_t n = small ? (accumulate ? 7 : 4) : (accumulate ? 5003 : 3001);
  Tensor self = values({r, c}, dt, 1);
  // (row, column) pairs: distinct when the rows are.
  const int64_t p = small ? 4 : 2003;
  Tensor rows = idx(p, r, 2);
  Tensor cols = s::indices(p, c, 3);
  // Two index tensors that broadcast: [q, 1] rows by [k] columns.
  const int64_t q = small ? 3 : 701, k = small ? 2 : 11;
  Tensor brows = idx(q, r, 4).reshape({q, 1});
  Tensor bcols = distinct(k, c, 5);
  // A mask over the first two dims of a 3-d tensor.
  const int64_t d0 = small ? 4 : 97, d1 = small ? 3 : 61, d2 = small ? 2 : 7;
  Tensor mask = s::varied({d0, d1}, kBool, 2.0, 6);
  const int64_t nnz = mask.to(kInt64).sum().item<int64_t>();
  return {
      {"rows" + tag, {self, values({n, c}, dt, 7)}, call({idx(n, r, 0)})},
      {"rows_broadcast_values" + tag,
       {self, values({c}, dt, 8)},
       call({idx(n, r, 0)})},
      {"pairs" + tag, {self, values({p}, dt, 9)}, call({rows, cols})},
      {"broadcast_indices" + tag,
       {self, values({q, k}, dt, 10)},
       call({brows, bcols})},
      // A full slice first: the indexed dim is not the first.
      {"slice_then_index" + tag,
       {self, values({r, k}, dt, 11)},
       call({Tensor(), bcols})},
      {"mask" + tag,
       {values({d0, d1, d2}, dt, 12), values({nnz, d2}, dt, 13)},
       call({mask})},
      {"strided" + tag,
       {s::strided(self), values({n, c}, dt, 14)},
       call({idx(n, r, 0)})},
      {"empty_index" + tag,
       {self, values({0, c}, dt, 15)},
       call({idx(0, r, 0)})},
  };
}

std::vector<Sample> index_put_bad(PutCall call) {
  Tensor self = s::varied({4, 3}, kFloat32, 2.0, 1);
  return {
      {"index_out_of_range",
       {self, s::varied({2, 3}, kFloat32, 2.0, 2)},
       call({tensor<int64_t>({0, 4})})},
      {"values_shape_mismatch",
       {self, s::varied({3, 3}, kFloat32, 2.0, 2)},
       call({tensor<int64_t>({0, 1})})},
      {"too_many_indices",
       {self, s::varied({2}, kFloat32, 2.0, 2)},
       call(
           {tensor<int64_t>({0, 1}),
            tensor<int64_t>({0, 1}),
            tensor<int64_t>({0, 1})})},
      {"float_index",
       {self, s::varied({2, 3}, kFloat32, 2.0, 2)},
       call({tensor<float>({0, 1})})},
      {"mask_shape_mismatch",
       {self, s::varied({3}, kFloat32, 2.0, 2)},
       call({tensor<bool>({true, false, true})})},
      {"dtype_mismatch",
       {self, s::varied({2, 3}, kFloat64, 2.0, 2)},
       call({tensor<int64_t>({0, 1})})},
  };
}

} // namespace

DITTO_OP_RECORDS(advanced_index) {
  register_op({
      .name = "index",
      .family = "index",
      .callables =
          s::callables("ditto::index(self, indices)", "Tensor::index(indices)"),
      .deterministic_because = kGather,
      .nondeterministic =
          {{.entry = "index_backward",
            .reason =
                "adds the output gradient into the input gradient with index_put_ (see its entry)"}},
      .dtypes = kFloatingAndInt64,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            // The index tensors are inputs (the op's frame is given self
            // and each index).
            auto call = [](const std::vector<Tensor>& in) {
              std::vector<Tensor> idx(in.begin() + 1, in.end());
              return std::vector<Tensor>{index(in[0], idx)};
            };
            const bool small = spec.small;
            const int64_t r = small ? 5 : 1201, c = small ? 3 : 37;
            const int64_t n = small ? 7 : 3001;
            Tensor m = values({r, c}, dt, 1);
            const int64_t a = small ? 3 : 41, b = small ? 4 : 53,
                          k = small ? 2 : 19;
            Tensor t3 = values({a, b, k}, dt, 2);
            Tensor mask = s::varied({r, c}, kBool, 2.0, 3);
            std::vector<Sample> out = {
                {"rows", {m, s::indices(n, r, 0)}, call},
                {"pairs", {m, s::indices(n, r, 1), s::indices(n, c, 2)}, call},
                // Dims 0 and 1, broadcast [q, 1] by [p].
                {"broadcast",
                 {t3,
                  s::indices(small ? 3 : 300, a, 3).reshape({-1, 1}),
                  s::indices(small ? 2 : 7, b, 4)},
                 call},
                {"mask", {m, mask}, call},
                {"int32_index", {m, s::indices(n, r, 7).to(kInt32)}, call},
                {"negative", {m, s::indices(n, r, 8).sub(r)}, call},
                {"strided", {s::strided(m), s::indices(n, r, 9)}, call},
                {"empty_index", {m, s::indices(0, r)}, call},
            };
            // Adjacent dims 1 and 2 after a full slice: the index dims
            // sit at dim 1.
            out.push_back(
                {"slice_then_adjacent",
                 {t3,
                  Tensor(),
                  s::indices(small ? 3 : 300, b, 3).reshape({-1, 1}),
                  s::indices(small ? 2 : 7, k, 4)},
                 call});
            // Dims 0 and 2, not adjacent: the index dims lead.
            out.push_back(
                {"apart",
                 {t3, s::indices(n, a, 5), Tensor(), s::indices(n, k, 6)},
                 call});
            return out;
          },
      .bad_samples =
          [] {
            auto call = [](const std::vector<Tensor>& in) {
              std::vector<Tensor> idx(in.begin() + 1, in.end());
              return std::vector<Tensor>{index(in[0], idx)};
            };
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"out_of_range", {self, tensor<int64_t>({3})}, call},
                {"too_many_indices",
                 {self,
                  tensor<int64_t>({0}),
                  tensor<int64_t>({0}),
                  tensor<int64_t>({0})},
                 call},
                {"not_broadcastable",
                 {self, tensor<int64_t>({0, 1}), tensor<int64_t>({0, 1, 2})},
                 call},
                {"float_index", {self, tensor<float>({0})}, call},
                {"mask_shape_mismatch",
                 {self, tensor<bool>({true, false})},
                 call},
            };
          },
  });

  // ---- index_put_ / index_put

  auto index_put_ = [](bool accumulate) -> PutCall {
    return [accumulate](std::vector<Tensor> indices) {
      return inplace(
          [accumulate, indices](Tensor& self, const std::vector<Tensor>& in) {
            self.index_put_(indices, in[1], accumulate);
          });
    };
  };
  auto index_put = [](bool accumulate) -> PutCall {
    return [accumulate](std::vector<Tensor> indices) -> s::Call {
      return [accumulate, indices](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0].index_put(indices, in[1], accumulate)};
      };
    };
  };
  auto index_put_both = [](const SampleSpec& spec, auto make) {
    std::vector<Sample> out = index_put_samples(spec, true, make(true));
    for (Sample& sm : index_put_samples(spec, false, make(false))) {
      out.push_back(std::move(sm));
    }
    return out;
  };
  register_op({
      .name = "index_put_",
      .family = "index",
      .callables = {"Tensor::index_put_(indices, values, accumulate)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexPut},
      .dtypes = kFloatingAndInt64,
      .samples =
          [index_put_, index_put_both](const SampleSpec& spec) {
            return index_put_both(spec, index_put_);
          },
      .bad_samples = [index_put_] { return index_put_bad(index_put_(false)); },
      .inplace = true,
  });
  register_op({
      .name = "index_put",
      .family = "index",
      .callables = s::callables(
          "ditto::index_put(self, indices, values, accumulate)",
          "Tensor::index_put(indices, values, accumulate)"),
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexPut},
      .dtypes = kFloatingAndInt64,
      .samples =
          [index_put, index_put_both](const SampleSpec& spec) {
            return out_of_place(index_put_both(spec, index_put));
          },
      .bad_samples =
          [index_put] { return out_of_place(index_put_bad(index_put(false))); },
  });
}

} // namespace ditto
