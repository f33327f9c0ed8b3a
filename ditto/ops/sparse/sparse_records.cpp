// The records of the sparse COO ops (sparse.cpp) (Note [Op records] in
// ditto/ops/record.cpp). The suite's inputs are strided: each sample builds
// its sparse operand from indices and values inside the call and returns
// strided results (a product, or the parts of a sparse result), so the
// suite's thread, capability and gradcheck sweeps see the sparse ops whole.

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/record.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/ops/sparse.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const char* kSortOrder =
    "entries sorted by position with PyTorch 1.13's sort (std::sort of "
    "(position, entry) pairs: a function of the positions alone) and each "
    "position's duplicates summed in that order, one thread per position "
    "(Note [Sparse entries in a fixed order])";

const char* kStoredOrder =
    "each position's entries added in their stored order by one thread "
    "(owner computes), with PyTorch's fma (Note [Sparse entries in a fixed "
    "order])";

// nnz entries of a (rows, cols) matrix, with repeated positions, in no
// order: int64 (2, nnz).
Tensor matrix_indices(int64_t nnz, int64_t rows, int64_t cols, uint64_t seed) {
  return stack({s::indices(nnz, rows, seed), s::indices(nnz, cols, seed + 7)});
}

// The same for a batch of matrices: (3, nnz).
Tensor batch_indices(
    int64_t nnz,
    int64_t batch,
    int64_t rows,
    int64_t cols,
    uint64_t seed) {
  return stack(
      {s::indices(nnz, batch, seed),
       s::indices(nnz, rows, seed + 3),
       s::indices(nnz, cols, seed + 7)});
}

std::vector<Tensor> parts(const Tensor& sp) {
  return {sp._indices(), sp._values()};
}

std::vector<NondeterministicPath> product_paths(const std::string& op) {
  return {{
      .entry = op,
      .reason =
          "the fast variant adds each entry's products into the shared "
          "output rows (and the backward into the dense operand's gradient "
          "rows) as threads get there",
      .cost = "bmm at 1% density, 2 threads: forward 0.99x, forward + backward "
              "0.81x the fast variant's time (docs/benchmarks.md)",
  }};
}

void register_sparse_records() {
  register_op({
      .name = "sparse_coo_tensor",
      .family = "sparse",
      .callables =
          {"ditto::sparse_coo_tensor(indices, values, size)",
           "ditto::sparse_coo_tensor(indices, values)"},
      .deterministic_because =
          "copies the indices after checking them; keeps the values",
      .dtypes = s::kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 3001, 6);
            Tensor idx = matrix_indices(n, 37, 53, 1);
            Tensor vals = s::varied({n}, spec.dtype, 4.0, 2);
            Tensor rows = s::varied({n, 3}, spec.dtype, 4.0, 3);
            return std::vector<Sample>{
                {"matrix",
                 {idx, vals},
                 [](const std::vector<Tensor>& x) {
                   return parts(sparse_coo_tensor(x[0], x[1], {37, 53}));
                 }},
                {"inferred_size",
                 {idx, vals},
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       sparse_coo_tensor(x[0], x[1]).to_dense()};
                 }},
                {"dense_dim",
                 {s::indices(n, 41, 4).unsqueeze(0), rows},
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       sparse_coo_tensor(x[0], x[1], {41, 3}).to_dense()};
                 }},
            };
          },
      .bad_samples =
          [] {
            Tensor idx = matrix_indices(4, 3, 5, 1);
            Tensor vals = s::varied({4}, kFloat32, 2.0, 2);
            auto with = [](Shape size) {
              return [size](const std::vector<Tensor>& x) {
                return std::vector<Tensor>{
                    sparse_coo_tensor(x[0], x[1], size).to_dense()};
              };
            };
            return std::vector<Sample>{
                {"index_out_of_range", {idx, vals}, with({2, 5})},
                {"negative_index", {neg(idx), vals}, with({3, 5})},
                {"float_indices", {idx.to(kFloat32), vals}, with({3, 5})},
                {"nnz_mismatch", {idx, vals.narrow(0, 0, 3)}, with({3, 5})},
                {"one_dim_indices", {idx.select(0, 0), vals}, with({3, 5})},
                {"rank", {idx, vals}, with({3})},
                {"huge_size",
                 {idx, vals},
                 with({int64_t(1) << 40, int64_t(1) << 40})},
                {"dense_size", {idx, vals.unsqueeze(1)}, with({3, 5, 2})},
                s::undefined_input(
                    [](const std::vector<Tensor>& x) {
                      return parts(sparse_coo_tensor(x[0], x[1], {3, 5}));
                    },
                    2),
            };
          },
      .not_differentiable = {},
      .sparse = true,
  });
  register_op({
      .name = "_values",
      .family = "sparse",
      .callables =
          {"Tensor::_values()",
           "Tensor::values()",
           "Tensor::_indices()",
           "Tensor::indices()"},
      .deterministic_because = "returns the stored parts",
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 500, 5);
            return std::vector<Sample>{
                {"values_times_two",
                 {matrix_indices(n, 11, 13, 5),
                  s::varied({n}, spec.dtype, 4.0, 6)},
                 [](const std::vector<Tensor>& x) {
                   Tensor sp = sparse_coo_tensor(x[0], x[1], {11, 13});
                   return std::vector<Tensor>{
                       mul(sp._values(), 2.0), sp.coalesce().values()};
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"strided",
                 {s::varied({2, 2}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) { return x._values(); })},
                {"uncoalesced",
                 {matrix_indices(6, 2, 2, 1), s::varied({6}, kFloat32, 2.0, 2)},
                 s::call2([](const Tensor& i, const Tensor& v) {
                   return sparse_coo_tensor(i, v, {2, 2}).values();
                 })},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "coalesce",
      .family = "sparse",
      .callables = {"Tensor::coalesce()"},
      .deterministic_because = kSortOrder,
      .dtypes = s::kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 20001, 9);
            return std::vector<Sample>{
                {"duplicates",
                 {matrix_indices(n, 61, 17, 7),
                  s::varied({n}, spec.dtype, 4.0, 8)},
                 [](const std::vector<Tensor>& x) {
                   return parts(
                       sparse_coo_tensor(x[0], x[1], {61, 17}).coalesce());
                 }},
                {"rows",
                 {s::indices(n, 29, 9).unsqueeze(0),
                  s::varied({n, 4}, spec.dtype, 4.0, 10)},
                 [](const std::vector<Tensor>& x) {
                   return parts(
                       sparse_coo_tensor(x[0], x[1], {29, 4}).coalesce());
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"strided",
                 {s::varied({2, 2}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) { return x.coalesce(); })},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "to_dense",
      .family = "sparse",
      .callables = {"Tensor::to_dense()"},
      .deterministic_because = kStoredOrder,
      .dtypes = s::kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 20001, 9);
            return std::vector<Sample>{
                {"duplicates",
                 {matrix_indices(n, 61, 17, 11),
                  s::varied({n}, spec.dtype, 4.0, 12)},
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       sparse_coo_tensor(x[0], x[1], {61, 17}).to_dense()};
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{s::undefined_input(
                s::call1([](const Tensor& x) { return x.to_dense(); }), 1)};
          },
      .sparse = true,
  });
  register_op({
      .name = "to_sparse",
      .family = "sparse",
      .callables = {"Tensor::to_sparse()", "Tensor::to_sparse(sparse_dim)"},
      .deterministic_because =
          "entries in row-major order of the positions, each copied",
      .dtypes = s::kEveryDtype,
      .samples =
          [](const SampleSpec& spec) {
            // About half the elements zero (integer truncation, and relu).
            Tensor m = s::varied(
                {s::size(spec, 301, 4), s::size(spec, 67, 5)},
                spec.dtype,
                3.0,
                14);
            if (is_floating(spec.dtype)) {
              m = relu(m);
            }
            return std::vector<Sample>{
                // Zeros are kinks: no gradient reaches a dropped element.
                {"all_dims",
                 {m},
                 [](const std::vector<Tensor>& x) {
                   return parts(x[0].to_sparse());
                 },
                 {},
                 false},
                {"rows",
                 {m},
                 [](const std::vector<Tensor>& x) {
                   return parts(x[0].to_sparse(1));
                 },
                 {},
                 false},
                {"round_trip",
                 {s::strided(m)},
                 s::call1(
                     [](const Tensor& x) { return x.to_sparse().to_dense(); }),
                 {},
                 false},
                {"no_zeros",
                 {s::positive({5, 7}, spec.dtype, 15)},
                 s::call1([](const Tensor& x) {
                   return mul(x.to_sparse().to_dense(), 2);
                 })},
            };
          },
      .bad_samples =
          [] {
            Tensor m = s::varied({2, 3}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"sparse_dim", {m}, s::call1([](const Tensor& x) {
                   return x.to_sparse(3).to_dense();
                 })},
                {"already_sparse", {m}, s::call1([](const Tensor& x) {
                   return x.to_sparse().to_sparse().to_dense();
                 })},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "sparse_mm",
      .family = "sparse",
      .callables =
          {"ditto::sparse::mm(sparse, dense)", "ditto::mm(sparse, dense)"},
      .nondeterministic = product_paths("sparse_mm"),
      .samples =
          [](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 257, 4), k = s::size(spec, 193, 3),
                          m = s::size(spec, 65, 2), n = s::size(spec, 5003, 7);
            return std::vector<Sample>{
                {"uncoalesced",
                 {matrix_indices(n, r, k, 15),
                  s::varied({n}, spec.dtype, 2.0, 16),
                  s::varied({k, m}, spec.dtype, 2.0, 17)},
                 [r, k](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       mm(sparse_coo_tensor(x[0], x[1], {r, k}), x[2])};
                 }},
                {"coalesced_strided_dense",
                 {matrix_indices(n, r, k, 18),
                  s::varied({n}, spec.dtype, 2.0, 19),
                  s::strided(s::varied({k, m}, spec.dtype, 2.0, 20))},
                 [r, k](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{sparse::mm(
                       sparse_coo_tensor(x[0], x[1], {r, k}).coalesce(), x[2])};
                 }},
            };
          },
      .bad_samples =
          [] {
            Tensor idx = matrix_indices(4, 3, 5, 1);
            Tensor vals = s::varied({4}, kFloat32, 2.0, 2);
            auto with = [](Tensor dense) {
              return [dense](const std::vector<Tensor>& x) {
                return std::vector<Tensor>{
                    sparse::mm(sparse_coo_tensor(x[0], x[1], {3, 5}), dense)};
              };
            };
            return std::vector<Sample>{
                {"inner_size", {idx, vals}, with(zeros({4, 2}))},
                {"dtype", {idx, vals}, with(zeros({5, 2}, kFloat64))},
                {"rank", {idx, vals}, with(zeros({5}))},
                {"dense_first",
                 {zeros({3, 5}), zeros({5, 2})},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return sparse::mm(a, b);
                 })},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "sparse_addmm",
      .family = "sparse",
      .callables =
          {"ditto::sparse::addmm(input, sparse, dense, beta, alpha)",
           "ditto::addmm(input, sparse, dense, beta, alpha)"},
      .nondeterministic = product_paths("sparse_addmm"),
      .samples =
          [](const SampleSpec& spec) {
            const int64_t r = s::size(spec, 131, 4), k = s::size(spec, 97, 3),
                          m = s::size(spec, 33, 2), n = s::size(spec, 2001, 6);
            auto with = [r, k](double beta, double alpha) {
              return [r, k, beta, alpha](const std::vector<Tensor>& x) {
                return std::vector<Tensor>{addmm(
                    x[0],
                    sparse_coo_tensor(x[1], x[2], {r, k}),
                    x[3],
                    beta,
                    alpha)};
              };
            };
            std::vector<Tensor> in = {
                s::varied({m}, spec.dtype, 2.0, 21),
                matrix_indices(n, r, k, 22),
                s::varied({n}, spec.dtype, 2.0, 23),
                s::varied({k, m}, spec.dtype, 2.0, 24)};
            return std::vector<Sample>{
                {"broadcast_input", in, with(0.5, -1.5)},
                {"beta_zero", in, with(0.0, 2.0)},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"input_size",
                 {zeros({4}),
                  matrix_indices(4, 3, 5, 1),
                  s::varied({4}, kFloat32, 2.0, 2),
                  zeros({5, 2})},
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{sparse::addmm(
                       x[0], sparse_coo_tensor(x[1], x[2], {3, 5}), x[3])};
                 }},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "sparse_bmm",
      .family = "sparse",
      .callables =
          {"ditto::bmm(sparse, dense)", "ditto::sparse_bmm(sparse, dense)"},
      .nondeterministic = product_paths("sparse_bmm"),
      .samples =
          [](const SampleSpec& spec) {
            const int64_t b = s::size(spec, 4, 2), r = s::size(spec, 129, 3),
                          k = s::size(spec, 97, 3), m = s::size(spec, 33, 2),
                          n = s::size(spec, 3001, 6);
            return std::vector<Sample>{
                {"batches",
                 {batch_indices(n, b, r, k, 25),
                  s::varied({n}, spec.dtype, 2.0, 26),
                  s::varied({b, k, m}, spec.dtype, 2.0, 27)},
                 [b, r, k](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       bmm(sparse_coo_tensor(x[0], x[1], {b, r, k}), x[2])};
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"batch_size",
                 {batch_indices(4, 2, 3, 5, 1),
                  s::varied({4}, kFloat32, 2.0, 2)},
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       bmm(sparse_coo_tensor(x[0], x[1], {2, 3, 5}),
                           zeros({3, 5, 2}))};
                 }},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "sparse_add",
      .family = "sparse",
      .callables =
          {"ditto::add(dense, sparse, alpha)",
           "ditto::add(sparse, sparse, alpha)"},
      .deterministic_because =
          "dense + sparse: each position's entries added in stored order by "
          "one thread (owner computes), with PyTorch's fma; sparse + sparse "
          "concatenates the entries",
      .dtypes = s::kNumeric,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 5001, 7);
            std::vector<Tensor> in = {
                s::varied({41, 23}, spec.dtype, 4.0, 30),
                matrix_indices(n, 41, 23, 31),
                s::varied({n}, spec.dtype, 4.0, 32)};
            return std::vector<Sample>{
                {"dense_plus_sparse",
                 in,
                 [](const std::vector<Tensor>& x) {
                   return std::vector<Tensor>{
                       add(x[0], sparse_coo_tensor(x[1], x[2], {41, 23}), 3)};
                 }},
                {"sparse_plus_sparse",
                 in,
                 [](const std::vector<Tensor>& x) {
                   Tensor sp = sparse_coo_tensor(x[1], x[2], {41, 23});
                   return std::vector<Tensor>{
                       add(sp, x[0].to_sparse()).to_dense()};
                 }},
            };
          },
      .bad_samples =
          [] {
            Tensor idx = matrix_indices(4, 3, 5, 1);
            Tensor vals = s::varied({4}, kFloat32, 2.0, 2);
            auto with = [](Tensor dense, bool sparse_first) {
              return [dense, sparse_first](const std::vector<Tensor>& x) {
                Tensor sp = sparse_coo_tensor(x[0], x[1], {3, 5});
                return std::vector<Tensor>{
                    sparse_first ? add(sp, dense) : add(dense, sp)};
              };
            };
            return std::vector<Sample>{
                {"sparse_plus_dense", {idx, vals}, with(zeros({3, 5}), true)},
                {"sizes", {idx, vals}, with(zeros({3, 6}), false)},
                {"broadcast", {idx, vals}, with(zeros({5}), false)},
                {"dtypes", {idx, vals}, with(zeros({3, 5}, kFloat64), false)},
            };
          },
      .sparse = true,
  });
  register_op({
      .name = "sparse_add_",
      .family = "sparse",
      .callables = {"Tensor::add_(sparse, alpha)"},
      .deterministic_because = kStoredOrder,
      .dtypes = s::kNumeric,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 5001, 7);
            return std::vector<Sample>{
                {"rows",
                 {s::varied({41, 23}, spec.dtype, 4.0, 33),
                  s::indices(n, 41, 34).unsqueeze(0),
                  s::varied({n, 23}, spec.dtype, 4.0, 35)},
                 [](const std::vector<Tensor>& x) {
                   Tensor self = x[0];
                   self.add_(sparse_coo_tensor(x[1], x[2], {41, 23}), -2);
                   return std::vector<Tensor>{self};
                 }},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"sizes",
                 {zeros({3, 6}),
                  matrix_indices(4, 3, 5, 1),
                  s::varied({4}, kFloat32, 2.0, 2)},
                 [](const std::vector<Tensor>& x) {
                   Tensor self = x[0];
                   self.add_(sparse_coo_tensor(x[1], x[2], {3, 5}));
                   return std::vector<Tensor>{self};
                 }},
            };
          },
      .not_differentiable =
          "an in-place sum with a sparse operand is not recorded (optimizer "
          "steps run it without grad)",
      .inplace = true,
      .sparse = true,
  });
  register_op({
      .name = "sparse_zero",
      .family = "sparse",
      .callables = {"Tensor::zero_() on a sparse tensor"},
      .deterministic_because = "drops every entry",
      .samples =
          [](const SampleSpec& spec) {
            return std::vector<Sample>{
                {"entries",
                 {matrix_indices(9, 3, 5, 36),
                  s::varied({9}, spec.dtype, 4.0, 37)},
                 [](const std::vector<Tensor>& x) {
                   Tensor sp = sparse_coo_tensor(x[0], x[1], {3, 5});
                   sp.zero_();
                   return std::vector<Tensor>{sp.to_dense(), sp._values()};
                 }},
            };
          },
      .bad_samples = [] { return std::vector<Sample>{}; },
      .not_differentiable = "a constant result",
      .sparse = true,
  });
}

} // namespace

DITTO_OP_RECORDS(sparse) {
  register_sparse_records();
}

} // namespace ditto
