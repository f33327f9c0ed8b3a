// The records of the counting ops bincount, histc and embedding_bag
// (counting.cpp) (Note [Op records] in record.cpp).

#include "ditto/ops/detail/index_samples.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using s::values;

using ::ditto::detail::samples::kFloating;

// The nondeterministic paths.
const NondeterministicPath kBincount = {
    .entry = "bincount",
    .reason =
        "with floating weights, the fast variant adds weights into shared bins "
        "with atomic adds from several threads, in whatever order they get "
        "there (counts without weights are integers: exact)",
};
const NondeterministicPath kEmbeddingBag = {
    .entry = "embedding_bag",
    .reason =
        "mode sum or mean: the fast variant adds the rows of a bag from "
        "several threads, in whatever order they get there (mode max always "
        "runs in index order)",
};

// ---- embedding_bag: inputs input, weight, offsets, per_sample_weights.

// Offsets of bags over n indices: sorted, from 0, some bags empty.
Tensor bag_offsets(int64_t bags, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(bags));
  for (int64_t b = 0; b < bags; ++b) {
    v[size_t(b)] = b % 9 == 8 ? v[size_t(b - 1)] : b * n / bags;
  }
  return tensor(v);
}

s::Call embedding_bag_call(
    std::string mode,
    bool include_last_offset = false,
    std::optional<int64_t> padding_idx = std::nullopt) {
  return [=](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{embedding_bag(
        in[0], in[1], in[2], mode, in[3], include_last_offset, padding_idx)};
  };
}

} // namespace

DITTO_OP_RECORDS(counting) {
  register_op({
      .name = "bincount",
      .family = "scatter",
      .callables = s::callables(
          "ditto::bincount(input, weights, minlength)",
          "Tensor::bincount(weights, minlength)"),
      .deterministic_because =
          "under the deterministic mode, weights are added into fixed blocks "
          "of bins, each in index order; counts without weights are integers",
      .nondeterministic = {kBincount},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [](int64_t minlength) {
              return s::call2([minlength](const Tensor& x, const Tensor& w) {
                return bincount(x, w, minlength);
              });
            };
            const int64_t n = s::size(spec, 40009, 9);
            const int64_t bins = s::size(spec, 1000, 4);
            Tensor x = s::indices(n, bins, 0);
            Tensor w = s::varied({n}, dt, 4.0, 1);
            std::vector<Sample> out = {
                {"weighted", {x, w}, call(0)},
                {"minlength", {x, w}, call(bins + 7)},
                {"int32_input",
                 {s::indices(n, bins, 1).to(kInt32), w},
                 call(0)},
                {"strided_weights", {x, s::strided(w)}, call(0)},
                {"empty",
                 {s::indices(0, 1), s::varied({0}, dt, 1.0, 2)},
                 call(5)},
            };
            out.push_back({"unweighted", {x, Tensor()}, call(0)});
            return out;
          },
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& x, const Tensor& w) {
              return bincount(x, w);
            });
            auto neg = s::call2([](const Tensor& x, const Tensor& w) {
              return bincount(x, w, -1);
            });
            Tensor w = s::varied({3}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"negative_value", {tensor<int64_t>({0, -1, 2}), w}, call},
                {"2d_input", {tensor<int64_t>({0, 1, 2}, {1, 3}), w}, call},
                {"float_input", {tensor<float>({0, 1, 2}), w}, call},
                {"weights_size", {tensor<int64_t>({0, 1}), w}, call},
                {"negative_minlength", {tensor<int64_t>({0, 1, 2}), w}, neg},
            };
          },
      .not_differentiable = "counts: bincount has no derivative (as PyTorch)",
  });

  register_op({
      .name = "histc",
      .family = "scatter",
      .callables = s::callables(
          "ditto::histc(input, bins, min, max)",
          "Tensor::histc(bins, min, max)"),
      .deterministic_because =
          "integer counts per fixed chunk of 16384 elements, summed exactly",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [](int64_t bins, double lo, double hi) {
              return s::call1(
                  [=](const Tensor& x) { return histc(x, bins, lo, hi); });
            };
            Tensor x = s::varied(
                {s::size(spec, 3, 2), s::size(spec, 40000, 9)}, dt, 6.0, 1);
            return std::vector<Sample>{
                {"data_range", {x}, call(97, 0, 0)},
                // Values outside [-2, 2.5] are not counted.
                {"given_range", {x}, call(7, -2, 2.5)},
                {"strided", {s::strided(x)}, call(13, -3, 3)},
                {"empty", {s::varied({0, 3}, dt, 1.0, 2)}, call(5, 0, 0)},
            };
          },
      .bad_samples =
          [] {
            Tensor x = s::varied({5}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"zero_bins", {x}, s::call1([](const Tensor& t) {
                   return histc(t, 0);
                 })},
                {"min_above_max", {x}, s::call1([](const Tensor& t) {
                   return histc(t, 5, 2, 1);
                 })},
                {"int_input",
                 {s::varied({5}, kInt64, 20.0, 1)},
                 s::call1([](const Tensor& t) { return histc(t); })},
                s::undefined_input(
                    s::call1([](const Tensor& t) { return histc(t); }), 1),
            };
          },
      .not_differentiable = "counts: histc has no derivative (as PyTorch)",
  });

  register_op({
      .name = "embedding_bag",
      .family = "scatter",
      .callables = {"ditto::embedding_bag(input, weight, offsets, mode, "
                    "per_sample_weights, include_last_offset, padding_idx)"},
      .deterministic_because =
          "under the deterministic mode, the rows of each bag are added in "
          "index order by the thread that owns the bag",
      .nondeterministic = {kEmbeddingBag},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const bool small = spec.small;
            const int64_t rows = small ? 6 : 1000, dims = small ? 3 : 13;
            const int64_t n = small ? 9 : 20011, bags = small ? 4 : 3001;
            Tensor weight = values({rows, dims}, dt, 1);
            Tensor input = s::indices(n, rows, 0);
            Tensor offsets = bag_offsets(bags, n);
            Tensor psw = values({n}, dt, 2);
            const int64_t b2 = small ? 3 : 2003, l2 = small ? 2 : 7;
            Tensor input2 = s::indices(b2 * l2, rows, 1).reshape({b2, l2});
            std::vector<Sample> out = {
                {"sum_weighted",
                 {input, weight, offsets, psw},
                 embedding_bag_call("sum")},
                {"include_last_offset",
                 {input, weight, offsets, psw},
                 embedding_bag_call("sum", true)},
                {"strided_weight",
                 {input, s::strided(weight), offsets, psw},
                 embedding_bag_call("sum")},
            };
            // Without per-sample weights (modes mean and max take none),
            // and 2-d input without offsets.
            for (Sample sm : std::vector<Sample>{
                     {"sum",
                      {input, weight, offsets, Tensor()},
                      embedding_bag_call("sum")},
                     {"mean",
                      {input, weight, offsets, Tensor()},
                      embedding_bag_call("mean")},
                     {"max",
                      {input, weight, offsets, Tensor()},
                      embedding_bag_call("max")},
                     {"2d_input",
                      {input2, weight, Tensor(), Tensor()},
                      embedding_bag_call("mean")},
                     {"padding_idx",
                      {input, weight, offsets, Tensor()},
                      embedding_bag_call("mean", false, 2)},
                 }) {
              out.push_back(sm);
            }
            return out;
          },
      .bad_samples =
          [] {
            Tensor w = s::varied({4, 3}, kFloat32, 2.0, 1);
            Tensor in = tensor<int64_t>({0, 1, 2, 3});
            Tensor off = tensor<int64_t>({0, 2});
            Tensor psw = s::varied({4}, kFloat32, 2.0, 2);
            return std::vector<Sample>{
                {"index_out_of_range",
                 {tensor<int64_t>({0, 4}), w, tensor<int64_t>({0}), Tensor()},
                 embedding_bag_call("sum")},
                {"unknown_mode",
                 {in, w, off, Tensor()},
                 embedding_bag_call("median")},
                {"offsets_not_from_0",
                 {in, w, tensor<int64_t>({1, 2}), Tensor()},
                 embedding_bag_call("sum")},
                {"offsets_decreasing",
                 {in, w, tensor<int64_t>({0, 3, 2}), Tensor()},
                 embedding_bag_call("sum")},
                {"offsets_past_end",
                 {in, w, tensor<int64_t>({0, 5}), Tensor()},
                 embedding_bag_call("sum")},
                {"weights_with_mean",
                 {in, w, off, psw},
                 embedding_bag_call("mean")},
                {"1d_without_offsets",
                 {in, w, Tensor(), Tensor()},
                 embedding_bag_call("sum")},
                {"2d_with_offsets",
                 {in.reshape({2, 2}), w, off, Tensor()},
                 embedding_bag_call("sum")},
                {"padding_idx_out_of_range",
                 {in, w, off, Tensor()},
                 embedding_bag_call("sum", false, 4)},
            };
          },
  });
}

} // namespace ditto
