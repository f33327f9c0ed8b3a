// The records of the matrix products (linalg.cpp) (Note [Op records] in
// record.cpp).

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;

using ::ditto::detail::samples::kFloating;

// The split-K path of every product (Note [Split-K] in linalg.cpp): mm,
// bmm (of one batch), matmul, addmm and linear run it, so each record holds
// it, the same entry declared with the same texts.
const NondeterministicPath kSplitK = {
    .entry = "matmul (split-K)",
    .reason =
        "the fast variant adds the partial products of the k chunks into the "
        "output in whatever order threads finish them (outputs of at most 2 "
        "tiles with k >= 16384)",
};
const char* kGemm =
    "each output tile is computed whole by one thread, its k loop in a fixed "
    "order; under the deterministic mode the split-K partials are added in "
    "chunk order";

using ::ditto::detail::samples::unit_values;

// [m, k] @ [k, n] with k past the split-K threshold and an output of one
// tile: cheap (about 1M multiply-adds) and split into 5 chunks.
constexpr int64_t kSplitM = 9, kSplitKDepth = 16411, kSplitN = 7;
// Rows enough for an output of more than the split's two tiles (R8 (c)).
constexpr int64_t kSplitRows = 400;

} // namespace

DITTO_OP_RECORDS(linalg) {
  // ---- products

  auto product_bad = [](s::Fn2 fn) {
    return std::vector<Sample>{
        {"inner_mismatch",
         {s::varied({3, 4}, kFloat32, 2.0, 1),
          s::varied({5, 2}, kFloat32, 2.0, 2)},
         s::call2(fn)},
        {"dtype_mismatch",
         {s::varied({3, 4}, kFloat32, 2.0, 1),
          s::varied({4, 2}, kFloat64, 2.0, 2)},
         s::call2(fn)},
        {"int",
         {s::varied({3, 4}, kInt64, 20.0, 1),
          s::varied({4, 2}, kInt64, 20.0, 2)},
         s::call2(fn)},
        s::undefined_input(s::call2(fn), 2),
    };
  };

  register_op({
      .name = "mm",
      .family = "linalg",
      .callables = s::callables("ditto::mm(a, b)", "Tensor::mm(b)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return mm(a, b); });
            const int64_t m = s::size(spec, 70, 3), k = s::size(spec, 300, 4),
                          n = s::size(spec, 45, 5);
            Tensor a = unit_values({m, k}, dt, 1),
                   b = unit_values({k, n}, dt, 2);
            std::vector<Sample> out = {
                s::batched({"matrix", {a, b}, call}, {0}),
                s::batched({"transposed_b", {a, s::strided(b)}, call}, {0}),
                s::batched({"transposed_a", {s::strided(a), b}, call}, {0}),
                {"empty_k",
                 {unit_values({m, 0}, dt, 3), unit_values({0, n}, dt, 4)},
                 call},
                {"empty_m", {unit_values({0, k}, dt, 5), b}, call},
            };
            if (!spec.small) {
              // Several row bands and column tiles.
              out.push_back(s::batched(
                  {"tiles",
                   {unit_values({211, 31}, dt, 6),
                    unit_values({31, 290}, dt, 7)},
                   call},
                  {0}));
              out.push_back(s::batched(
                  {"split_k",
                   {unit_values({kSplitM, kSplitKDepth}, dt, 8),
                    unit_values({kSplitKDepth, kSplitN}, dt, 9)},
                   call},
                  {0}));
              // R8 (c): more rows than the split's tiles, the same chain.
              out.push_back(s::batched(
                  {"split_k_rows",
                   {unit_values({kSplitRows, kSplitKDepth}, dt, 10),
                    unit_values({kSplitKDepth, kSplitN}, dt, 11)},
                   call},
                  {0}));
            }
            return out;
          },
      .bad_samples =
          [product_bad] {
            std::vector<Sample> out = product_bad(
                [](const Tensor& a, const Tensor& b) { return mm(a, b); });
            out.push_back(
                {"3d",
                 {s::varied({2, 3, 4}, kFloat32, 2.0, 1),
                  s::varied({4, 2}, kFloat32, 2.0, 2)},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return mm(a, b);
                 })});
            return out;
          },
  });

  register_op({
      .name = "bmm",
      .family = "linalg",
      .callables = s::callables("ditto::bmm(a, b)", "Tensor::bmm(b)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return bmm(a, b); });
            const int64_t bs = s::size(spec, 3, 2), m = s::size(spec, 70, 3),
                          k = s::size(spec, 100, 4), n = s::size(spec, 45, 2);
            Tensor a = unit_values({bs, m, k}, dt, 1),
                   b = unit_values({bs, k, n}, dt, 2);
            std::vector<Sample> out = {
                {"batch", {a, b}, call},
                {"transposed_b", {a, s::strided(b)}, call},
                {"transposed_a", {s::strided(a), b}, call},
                {"empty_batch",
                 {unit_values({0, m, k}, dt, 3), unit_values({0, k, n}, dt, 4)},
                 call},
            };
            if (!spec.small) {
              out.push_back(
                  {"split_k_one_batch",
                   {unit_values({1, kSplitM, kSplitKDepth}, dt, 5),
                    unit_values({1, kSplitKDepth, kSplitN}, dt, 6)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [] {
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return bmm(a, b); });
            return std::vector<Sample>{
                {"batch_mismatch",
                 {s::varied({2, 3, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 4, 2}, kFloat32, 2.0, 2)},
                 call},
                {"2d",
                 {s::varied({3, 4}, kFloat32, 2.0, 1),
                  s::varied({4, 2}, kFloat32, 2.0, 2)},
                 call},
                s::undefined_input(call, 2),
            };
          },
  });

  register_op({
      .name = "matmul",
      .family = "linalg",
      .callables = s::callables("ditto::matmul(a, b)", "Tensor::matmul(b)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
            const bool small = spec.small;
            const int64_t m = small ? 3 : 70, k = small ? 4 : 300,
                          n = small ? 2 : 45;
            Tensor a = unit_values({m, k}, dt, 1),
                   b = unit_values({k, n}, dt, 2);
            std::vector<Sample> out = {
                s::batched({"matrix", {a, b}, call}, {0}),
                s::batched({"transposed_b", {a, s::strided(b)}, call}, {0}),
                {"dot",
                 {unit_values({k}, dt, 3), unit_values({k}, dt, 4)},
                 call},
                {"vector_matrix", {unit_values({k}, dt, 5), b}, call},
                {"matrix_vector", {a, unit_values({k}, dt, 6)}, call},
                // Batch dims broadcast both ways: [2, 1] with [3].
                s::batched(
                    {"broadcast_batch",
                     {unit_values(
                          {2, 1, small ? 2 : 30, small ? 3 : 40}, dt, 7),
                      unit_values({3, small ? 3 : 40, small ? 2 : 20}, dt, 8)},
                     call},
                    {0}),
                s::batched(
                    {"batch_matrix", {unit_values({2, m, k}, dt, 9), b}, call},
                    {0}),
                {"empty", {unit_values({0, k}, dt, 10), b}, call},
            };
            if (!spec.small) {
              out.push_back(
                  {"split_k",
                   {unit_values({kSplitM, kSplitKDepth}, dt, 11),
                    unit_values({kSplitKDepth, kSplitN}, dt, 12)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [product_bad] {
            std::vector<Sample> out = product_bad(
                [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
            out.push_back(
                {"batch_not_broadcastable",
                 {s::varied({2, 3, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 4, 2}, kFloat32, 2.0, 2)},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return matmul(a, b);
                 })});
            return out;
          },
  });

  register_op({
      .name = "addmm",
      .family = "linalg",
      .callables = s::callables(
          "ditto::addmm(input, a, b, beta, alpha)",
          "Tensor::addmm(a, b, beta, alpha)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [](double beta, double alpha) {
              return s::call3(
                  [=](const Tensor& i, const Tensor& a, const Tensor& b) {
                    return addmm(i, a, b, beta, alpha);
                  });
            };
            const int64_t m = s::size(spec, 70, 3), k = s::size(spec, 300, 4),
                          n = s::size(spec, 45, 5);
            Tensor a = unit_values({m, k}, dt, 1),
                   b = unit_values({k, n}, dt, 2);
            std::vector<Sample> out = {
                {"row_bias", {unit_values({n}, dt, 3), a, b}, call(1, 1)},
                {"full_input",
                 {unit_values({m, n}, dt, 4), a, b},
                 call(0.5, 2)},
                {"column_input",
                 {unit_values({m, 1}, dt, 5), s::strided(a), b},
                 call(1, -1)},
                {"transposed_b",
                 {unit_values({n}, dt, 6), a, s::strided(b)},
                 call(2, 1)},
                // beta = 0: input is not read (nor differentiated).
                {"beta_zero",
                 {unit_values({m, n}, dt, 7), a, b},
                 call(0, 1),
                 {0}},
                {"empty_k",
                 {unit_values({n}, dt, 8),
                  unit_values({m, 0}, dt, 9),
                  unit_values({0, n}, dt, 10)},
                 call(1, 1)},
            };
            if (!spec.small) {
              out.push_back(
                  {"split_k",
                   {unit_values({kSplitN}, dt, 11),
                    unit_values({kSplitM, kSplitKDepth}, dt, 12),
                    unit_values({kSplitKDepth, kSplitN}, dt, 13)},
                   call(1, 1)});
            }
            return out;
          },
      .bad_samples =
          [] {
            auto call =
                s::call3([](const Tensor& i, const Tensor& a, const Tensor& b) {
                  return addmm(i, a, b);
                });
            return std::vector<Sample>{
                {"input_not_broadcastable",
                 {s::varied({3}, kFloat32, 2.0, 1),
                  s::varied({2, 4}, kFloat32, 2.0, 2),
                  s::varied({4, 5}, kFloat32, 2.0, 3)},
                 call},
                {"input_dtype",
                 {s::varied({5}, kFloat64, 2.0, 1),
                  s::varied({2, 4}, kFloat32, 2.0, 2),
                  s::varied({4, 5}, kFloat32, 2.0, 3)},
                 call},
                {"inner_mismatch",
                 {s::varied({5}, kFloat32, 2.0, 1),
                  s::varied({2, 4}, kFloat32, 2.0, 2),
                  s::varied({3, 5}, kFloat32, 2.0, 3)},
                 call},
                s::undefined_input(call, 3),
            };
          },
  });

  register_op({
      .name = "linear",
      .family = "linalg",
      .callables = {"ditto::linear(x, weight, bias)"},
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call =
                s::call3([](const Tensor& x, const Tensor& w, const Tensor& b) {
                  return linear(x, w, b);
                });
            const bool small = spec.small;
            const int64_t m = small ? 3 : 70, k = small ? 4 : 300,
                          n = small ? 2 : 45;
            Tensor x = unit_values({m, k}, dt, 1),
                   w = unit_values({n, k}, dt, 2);
            Tensor b = unit_values({n}, dt, 3);
            std::vector<Sample> out = {
                s::batched({"matrix", {x, w, b}, call}, {0}),
                s::batched(
                    {"batch", {unit_values({2, m, k}, dt, 4), w, b}, call},
                    {0}),
                {"vector", {unit_values({k}, dt, 5), w, b}, call},
                s::batched(
                    {"strided_weight", {x, s::strided(w), b}, call}, {0}),
                {"empty", {unit_values({0, k}, dt, 6), w, b}, call},
            };
            out.push_back({"no_bias", {x, w, Tensor()}, call});
            if (!spec.small) {
              out.push_back(
                  {"split_k",
                   {unit_values({kSplitM, kSplitKDepth}, dt, 7),
                    unit_values({kSplitN, kSplitKDepth}, dt, 8),
                    unit_values({kSplitN}, dt, 9)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [] {
            auto call =
                s::call3([](const Tensor& x, const Tensor& w, const Tensor& b) {
                  return linear(x, w, b);
                });
            return std::vector<Sample>{
                {"in_features_mismatch",
                 {s::varied({2, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 5}, kFloat32, 2.0, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 call},
                {"bias_size",
                 {s::varied({2, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 4}, kFloat32, 2.0, 2),
                  s::varied({4}, kFloat32, 2.0, 3)},
                 call},
                {"3d_weight",
                 {s::varied({2, 4}, kFloat32, 2.0, 1),
                  s::varied({1, 3, 4}, kFloat32, 2.0, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 call},
                s::undefined_input(call, 3),
            };
          },
  });
}

} // namespace ditto
