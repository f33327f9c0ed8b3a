// The records of embedding and one_hot (embedding.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/functional/embedding.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

} // namespace

DITTO_OP_RECORDS(embedding) {
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "embedding",
        .family = "index",
        .callables =
            {"ditto::nn::functional::embedding(indices, weight, "
             "padding_idx, sparse)",
             "ditto::embedding(weight, indices, padding_idx, "
             "scale_grad_by_freq, sparse)"},
        .deterministic_because = {},
        .nondeterministic = {{
            .entry = "embedding_backward",
            .reason = "adds the output gradient into the input gradient with "
                      "index_add_ (see its entry)",
        }},
        .dtypes = kFloating,
        // The trace shows (weight, indices).
        .samples =
            [](const SampleSpec& spec) {
              const int64_t num = s::size(spec, 1000, 7),
                            dim = s::size(spec, 64, 4);
              Tensor w = s::varied({num, dim}, spec.dtype, 4.0, 1);
              const int64_t a = s::size(spec, 40, 2), b = s::size(spec, 50, 3);
              Tensor idx = s::indices(a * b, num, 2).reshape({a, b});
              Tensor few = s::indices(a * b, 3, 3);
              auto rows = [](std::optional<int64_t> pad) {
                return s::call2([pad](const Tensor& wt, const Tensor& i) {
                  return nn::functional::embedding(i, wt, pad);
                });
              };
              return std::vector<Sample>{
                  {"rows", {w, idx}, rows(std::nullopt)},
                  // The padding row gets no gradient by design (PyTorch's
                  // padding_idx), not the derivative: no gradcheck.
                  {"padding_idx", {w, idx}, rows(3), {}, false},
                  {"strided", {s::strided(w), idx}, rows(std::nullopt)},
                  {"few_rows", {w, few}, rows(std::nullopt)},
                  {"no_indices", {w, s::indices(0, num)}, rows(std::nullopt)},
              };
            },
        .bad_samples =
            [] {
              Tensor w = s::varied({5, 3}, kFloat32, 2.0, 1);
              return std::vector<Sample>{
                  {"float_indices", {w}, s::call1([](const Tensor& wt) {
                     return nn::functional::embedding(
                         s::varied({4}, kFloat32, 8.0, 2), wt);
                   })},
                  {"one_dim_weight",
                   {s::varied({5}, kFloat32, 2.0, 1)},
                   s::call1([](const Tensor& wt) {
                     return nn::functional::embedding(s::indices(4, 5), wt);
                   })},
                  {"index_out_of_range", {w}, s::call1([](const Tensor& wt) {
                     return nn::functional::embedding(
                         tensor(std::vector<int64_t>{0, 5, 1}), wt);
                   })},
              };
            },
    });
  }

  register_op({
      .name = "one_hot",
      .family = "index",
      .callables =
          {"ditto::one_hot(self, num_classes)",
           "ditto::nn::functional::one_hot(indices, num_classes)"},
      .deterministic_because =
          "each index writes a one into its own row of zeros",
      .dtypes = {kInt64},
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 20000, 7);
            auto hot = [](int64_t k) {
              return s::call1([k](const Tensor& i) { return one_hot(i, k); });
            };
            return std::vector<Sample>{
                {"inferred", {s::indices(n, 5, 1)}, hot(-1)},
                {"given",
                 {s::indices(n, 4, 2).reshape({s::size(spec, 400, 1), -1})},
                 hot(6)},
                {"strided",
                 {s::strided(s::indices(s::size(spec, 2000, 6), 3, 3)
                                 .reshape({s::size(spec, 50, 2), -1}))},
                 hot(3)},
                {"empty", {s::indices(0, 3)}, hot(3)},
            };
          },
      .bad_samples =
          [] {
            auto hot = [](int64_t k) {
              return s::call1([k](const Tensor& i) { return one_hot(i, k); });
            };
            return std::vector<Sample>{
                {"float_indices", {s::varied({4}, kFloat32, 4.0, 1)}, hot(3)},
                {"index_too_large", {s::indices(6, 5)}, hot(3)},
                {"negative_index",
                 {tensor(std::vector<int64_t>{0, -1, 2})},
                 hot(3)},
                {"empty_inferred", {s::indices(0, 3)}, hot(-1)},
            };
          },
      .not_differentiable = "integer indices in, an integer tensor out",
  });
}

} // namespace ditto::nn::functional
