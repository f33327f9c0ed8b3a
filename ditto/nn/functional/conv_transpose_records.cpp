// The records of conv_transpose1d, 2d and 3d (conv_transpose.cpp)
// (Note [Op records] in ditto/ops/record.cpp).

#include "ditto/nn/functional/conv.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

} // namespace

DITTO_OP_RECORDS(conv_transpose) {
  register_op({
      .name = "conv_transpose2d",
      .family = "conv",
      .callables = {"ditto::conv_transpose2d(x, weight, bias, stride, "
                    "padding, output_padding, groups, dilation)"},
      .deterministic_because = {},
      .nondeterministic = {{
          .entry = "conv_transpose2d_backward",
          .reason = "the weight gradient is conv2d_backward_weight's (see "
                    "its entry)",
      }},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t n = s::size(spec, 4, 1), cin = s::size(spec, 6, 2);
            Tensor x = s::varied(
                {n, cin, s::size(spec, 23, 3), s::size(spec, 19, 3)},
                dt,
                4.0,
                1);
            const int64_t co = s::size(spec, 5, 2);
            Tensor w = s::varied({cin, co, 3, 3}, dt, 1.0, 2);
            Tensor b = s::varied({co}, dt, 1.0, 3);
            Tensor wg = s::varied({cin, 2, 3, 2}, dt, 1.0, 4);
            Tensor bg = s::varied({4}, dt, 1.0, 5);
            auto s2 = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose2d(in, wt, bs, {2}, {1}, {1});
            });
            auto grouped = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose2d(
                  in, wt, bs, {1, 2}, {1, 0}, {0}, 2, {2, 1});
            });
            return std::vector<Sample>{
                {"stride2_output_padding", {x, w, b}, s2},
                {"groups_dilation", {x, wg, bg}, grouped},
                {"strided", {s::strided(x), w, b}, s2},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose2d(in, wt, bs);
            });
            return std::vector<Sample>{
                {"channels",
                 {s::varied({1, 3, 4, 4}, kFloat32, 2.0, 1),
                  s::varied({2, 2, 3, 3}, kFloat32, 1.0, 2),
                  s::varied({2}, kFloat32, 1.0, 3)},
                 call},
                {"output_padding",
                 {s::varied({1, 2, 4, 4}, kFloat32, 2.0, 1),
                  s::varied({2, 2, 3, 3}, kFloat32, 1.0, 2),
                  s::varied({2}, kFloat32, 1.0, 3)},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return conv_transpose2d(in, wt, bs, {1}, {0}, {1});
                 })},
            };
          },
      .grad_fn = "ConvolutionBackward0",
  });
  register_op({
      .name = "conv_transpose1d",
      .family = "conv",
      .callables = {"ditto::conv_transpose1d(x, weight, bias, stride, "
                    "padding, output_padding, groups, dilation)"},
      .deterministic_because = {},
      .nondeterministic = {{
          .entry = "conv_transpose2d_backward",
          .reason = "conv_transpose2d's over a height of 1 (see its entry)",
      }},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t n = s::size(spec, 4, 1), cin = s::size(spec, 6, 2);
            Tensor x = s::varied({n, cin, s::size(spec, 29, 5)}, dt, 4.0, 1);
            const int64_t co = s::size(spec, 5, 2);
            Tensor w = s::varied({cin, co, 3}, dt, 1.0, 2);
            Tensor b = s::varied({co}, dt, 1.0, 3);
            Tensor wg = s::varied({cin, 2, 2}, dt, 1.0, 4);
            Tensor bg = s::varied({4}, dt, 1.0, 5);
            auto s2 = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose1d(in, wt, bs, {2}, {1}, {1});
            });
            auto grouped = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose1d(in, wt, bs, {1}, {1}, {0}, 2, {2});
            });
            return std::vector<Sample>{
                {"stride2_output_padding", {x, w, b}, s2},
                {"groups_dilation", {x, wg, bg}, grouped},
                {"strided", {s::strided(x), w, b}, s2},
            };
          },
      .bad_samples =
          [] {
            Tensor x = s::varied({1, 2, 5}, kFloat32, 2.0, 1);
            Tensor w = s::varied({2, 2, 3}, kFloat32, 1.0, 2);
            Tensor b = s::varied({2}, kFloat32, 1.0, 3);
            return std::vector<Sample>{
                {"channels",
                 {s::varied({1, 3, 5}, kFloat32, 2.0, 1), w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return conv_transpose1d(in, wt, bs);
                 })},
                {"output_padding",
                 {x, w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return conv_transpose1d(in, wt, bs, {1}, {0}, {1});
                 })},
                {"two_strides",
                 {x, w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return conv_transpose1d(in, wt, bs, {1, 2});
                 })},
                {"4d_input",
                 {x.unsqueeze(2), w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return conv_transpose1d(in, wt, bs);
                 })},
            };
          },
  });
  register_op({
      .name = "conv_transpose3d",
      .family = "conv",
      .callables = {"ditto::conv_transpose3d(x, weight, bias, stride, "
                    "padding, output_padding, groups, dilation)"},
      .deterministic_because =
          "conv3d_backward_input forward, conv3d and conv3d_backward_weight "
          "backward: each a fixed-order sum on one thread per element (Note "
          "[conv3d's one chain])",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t n = s::size(spec, 2, 1), cin = s::size(spec, 4, 2);
            Tensor x = s::varied(
                {n,
                 cin,
                 s::size(spec, 5, 2),
                 s::size(spec, 6, 3),
                 s::size(spec, 4, 2)},
                dt,
                4.0,
                1);
            const int64_t co = s::size(spec, 3, 2);
            Tensor w = s::varied({cin, co, 3, 3, 3}, dt, 1.0, 2);
            Tensor b = s::varied({co}, dt, 1.0, 3);
            Tensor wg = s::varied({cin, 2, 2, 3, 2}, dt, 1.0, 4);
            Tensor bg = s::varied({4}, dt, 1.0, 5);
            auto s2 = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose3d(in, wt, bs, {2}, {1}, {1});
            });
            auto unit = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose3d(in, wt, bs, {1}, {1});
            });
            auto grouped = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose3d(
                  in, wt, bs, {1, 2, 1}, {1, 0, 0}, {0}, 2, {2, 1, 1});
            });
            return std::vector<Sample>{
                {"stride2_output_padding", {x, w, b}, s2},
                {"unit_stride", {x, w, b}, unit},
                {"groups_dilation", {x, wg, bg}, grouped},
                {"strided", {s::strided(x), w, b}, s2},
            };
          },
      .bad_samples =
          [] {
            auto call = s::call3([](auto& in, auto& wt, auto& bs) {
              return conv_transpose3d(in, wt, bs);
            });
            return std::vector<Sample>{
                {"channels",
                 {s::varied({1, 3, 4, 4, 4}, kFloat32, 2.0, 1),
                  s::varied({2, 2, 3, 3, 3}, kFloat32, 1.0, 2),
                  s::varied({2}, kFloat32, 1.0, 3)},
                 call},
                {"output_padding",
                 {s::varied({1, 2, 4, 4, 4}, kFloat32, 2.0, 1),
                  s::varied({2, 2, 3, 3, 3}, kFloat32, 1.0, 2),
                  s::varied({2}, kFloat32, 1.0, 3)},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return conv_transpose3d(in, wt, bs, {1}, {0}, {1});
                 })},
                {"rank",
                 {s::varied({1, 2, 4, 4}, kFloat32, 2.0, 1),
                  s::varied({2, 2, 3, 3, 3}, kFloat32, 1.0, 2),
                  s::varied({2}, kFloat32, 1.0, 3)},
                 call},
            };
          },
      .grad_fn = "ConvolutionBackward0",
  });
}

} // namespace ditto::nn::functional
