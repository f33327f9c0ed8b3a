// The records of the index ops (Note [Op records] in record.cpp):
// index_select, take, index, masked_select, the in-place index_add_,
// index_copy_, index_put_, put_, masked_fill_ and their out-of-place forms.

#include <numeric>

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const std::vector<Dtype> kDtypes = {kFloat32, kFloat64, kInt64};

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
const NondeterministicPath kIndexPut = {
    .entry = "index_put_",
    .reason =
        "accumulate=true: the fast variant adds floating values from several "
        "threads in whatever order they get there; accumulate=false with "
        "duplicate indices: whichever thread writes last wins (the "
        "deterministic variant keeps the last in index order)",
    .dtypes = "all",
};
const NondeterministicPath kPut = {
    .entry = "put_",
    .reason = "as index_put_, on the flattened tensor",
    .dtypes = "all",
};

// What the deterministic variant of the scatters does (Note [Owner
// computes] in scatter_engine.h).
const char* kOwnerComputes =
    "under the deterministic mode, updates are grouped by fixed destination "
    "blocks and each block applies its updates in index order: the serial "
    "loop's bits at any thread count";

const char* kGather =
    "a gather: every output element is copied once from its source";

// n distinct indices in [0, mod) (n <= mod), scrambled: for the ops where
// the last write wins, whose fast variant differs with duplicates.
Tensor distinct(int64_t n, int64_t mod, uint64_t seed = 0) {
  int64_t step = 37;
  while (mod > 0 && std::gcd(step, mod) != 1) {
    ++step;
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[size_t(i)] = (i * step + int64_t(seed) * 11) % mod;
  }
  return tensor(v);
}

// Values of dtype dt (integers wide enough not to be all zero).
Tensor values(const Shape& shape, Dtype dt, uint64_t seed) {
  return s::varied(shape, dt, is_floating(dt) ? 4.0 : 40.0, seed);
}

s::Call inplace(std::function<void(Tensor&, const std::vector<Tensor>&)> fn) {
  return [fn = std::move(fn)](const std::vector<Tensor>& in) {
    Tensor self = in[0];
    fn(self, in);
    return std::vector<Tensor>{self};
  };
}

// The samples of an out-of-place form, from its samples over the
// in-place op's inputs: the form's frame is given self alone, so the other
// tensors become constants of the call.
std::vector<Sample> out_of_place(std::vector<Sample> samples) {
  for (Sample& sm : samples) {
    std::vector<Tensor> rest = sm.inputs;
    s::Call inner = sm.call;
    sm.inputs = {rest[0]};
    sm.call = [inner, rest](const std::vector<Tensor>& in) {
      std::vector<Tensor> args = rest;
      args[0] = in[0];
      return inner(args);
    };
  }
  return samples;
}

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

// ---- masked_fill_: inputs self, mask (broadcast to self).

std::vector<Sample> masked_fill_samples(const SampleSpec& spec, s::Call call) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
  Tensor self = values({r, c}, dt, 1);
  std::vector<Sample> out = {
      {"same_shape", {self, s::varied({r, c}, kBool, 2.0, 2)}, call},
      {"broadcast_row", {self, s::varied({c}, kBool, 2.0, 3)}, call},
      {"broadcast_col", {self, s::varied({r, 1}, kBool, 2.0, 4)}, call},
      {"strided",
       {s::strided(self), s::strided(s::varied({r, c}, kBool, 2.0, 5))},
       call},
      {"empty", {values({0, c}, dt, 6), s::varied({c}, kBool, 2.0, 7)}, call},
  };
  if (!spec.small) {
    out.push_back(
        {"long",
         {values({70001}, dt, 8), s::varied({70001}, kBool, 2.0, 9)},
         call});
  }
  return out;
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
      .dtypes = kDtypes,
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
      .dtypes = kDtypes,
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
      .dtypes = kDtypes,
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

  register_op({
      .name = "masked_select",
      .family = "index",
      .callables = s::callables(
          "ditto::masked_select(self, mask)", "Tensor::masked_select(mask)"),
      .deterministic_because =
          "counts per fixed chunk of 16384 elements, then each chunk copies "
          "its elements to its own prefix offset",
      .dtypes = kDtypes,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2([](const Tensor& a, const Tensor& m) {
              return masked_select(a, m);
            });
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
            Tensor self = values({r, c}, dt, 1);
            Tensor mask = s::varied({r, c}, kBool, 2.0, 2);
            return std::vector<Sample>{
                {"same_shape", {self, mask}, call},
                {"broadcast_mask", {self, s::varied({c}, kBool, 2.0, 3)}, call},
                {"broadcast_self", {values({c}, dt, 4), mask}, call},
                {"strided", {s::strided(self), s::strided(mask)}, call},
                {"empty",
                 {values({0, c}, dt, 5), s::varied({c}, kBool, 2.0, 6)},
                 call},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& a, const Tensor& m) {
              return masked_select(a, m);
            });
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"float_mask",
                 {self, s::varied({3, 4}, kFloat32, 2.0, 2)},
                 call},
                {"not_broadcastable",
                 {self, s::varied({3}, kBool, 2.0, 2)},
                 call},
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
  register_op({
      .name = "index_add_",
      .family = "index",
      .callables = {"Tensor::index_add_(dim, index, source, alpha)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexAdd},
      .dtypes = kDtypes,
      .samples =
          [add_](const SampleSpec& spec) {
            return index_rows_samples(spec, true, add_);
          },
      .bad_samples = [add_] { return index_rows_bad(add_); },
      .inplace = true,
  });
  register_op({
      .name = "index_add",
      .family = "index",
      .callables = {"Tensor::index_add(dim, index, source, alpha)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexAdd},
      .dtypes = kDtypes,
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
      .dtypes = kDtypes,
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
      .callables = {"Tensor::index_copy(dim, index, source)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexCopy},
      .dtypes = kDtypes,
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
      .dtypes = kDtypes,
      .samples = [put_, put_both](
                     const SampleSpec& spec) { return put_both(spec, put_); },
      .bad_samples = [put_] { return put_bad(put_(false)); },
      .inplace = true,
  });
  register_op({
      .name = "put",
      .family = "index",
      .callables = {"Tensor::put(index, source, accumulate)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kPut},
      .dtypes = kDtypes,
      .samples =
          [put, put_both](const SampleSpec& spec) {
            return out_of_place(put_both(spec, put));
          },
      .bad_samples = [put] { return out_of_place(put_bad(put(false))); },
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
      .dtypes = kDtypes,
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
      .callables = {"Tensor::index_put(indices, values, accumulate)"},
      .deterministic_because = kOwnerComputes,
      .nondeterministic = {kIndexPut},
      .dtypes = kDtypes,
      .samples =
          [index_put, index_put_both](const SampleSpec& spec) {
            return out_of_place(index_put_both(spec, index_put));
          },
      .bad_samples =
          [index_put] { return out_of_place(index_put_bad(index_put(false))); },
  });

  // ---- masked_fill_ / masked_fill

  register_op({
      .name = "masked_fill_",
      .family = "index",
      .callables = {"Tensor::masked_fill_(mask, value)"},
      .deterministic_because =
          "each element is written once, from its own mask element",
      .dtypes = kDtypes,
      .samples =
          [](const SampleSpec& spec) {
            return masked_fill_samples(
                spec, inplace([](Tensor& self, const std::vector<Tensor>& in) {
                  self.masked_fill_(in[1], 2);
                }));
          },
      .bad_samples =
          [] {
            auto call =
                inplace([](Tensor& self, const std::vector<Tensor>& in) {
                  self.masked_fill_(in[1], 2);
                });
            Tensor self = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"float_mask",
                 {self, s::varied({3, 4}, kFloat32, 2.0, 2)},
                 call},
                {"mask_not_broadcastable",
                 {self, s::varied({3}, kBool, 2.0, 2)},
                 call},
                {"mask_larger_than_self",
                 {s::varied({4}, kFloat32, 2.0, 1),
                  s::varied({3, 4}, kBool, 2.0, 2)},
                 call},
                {"expanded_self",
                 {s::varied({1, 4}, kFloat32, 2.0, 1).expand({3, 4}),
                  s::varied({3, 4}, kBool, 2.0, 2)},
                 call},
            };
          },
      .inplace = true,
  });
  register_op({
      .name = "masked_fill",
      .family = "index",
      .callables = {"Tensor::masked_fill(mask, value)"},
      .deterministic_because =
          "masked_fill_ on a copy: each element is written once, from its own "
          "mask element",
      .dtypes = kDtypes,
      .samples =
          [](const SampleSpec& spec) {
            return out_of_place(
                masked_fill_samples(spec, [](const std::vector<Tensor>& in) {
                  return std::vector<Tensor>{in[0].masked_fill(in[1], 2)};
                }));
          },
  });
}

} // namespace ditto
