// The records of the poolings max_pool2d with its public backward,
// avg_pool2d and adaptive_avg_pool2d (pooling.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/functional/pooling.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::plane_path;
using detail::pool_bad_samples;
using detail::pool_inputs;
using detail::PoolInputs;

using ::ditto::detail::samples::kFloating;

std::vector<Sample> avg_pool_samples(const SampleSpec& spec) {
  PoolInputs p = pool_inputs(spec);
  auto pool = [](IntList k,
                 IntList st,
                 IntList pad,
                 bool ceil,
                 bool include,
                 std::optional<int64_t> div) {
    return s::call1([=](const Tensor& x) {
      return avg_pool2d(x, k, st, pad, ceil, include, div);
    });
  };
  auto k3s2p1 = pool({3}, {2}, {1}, false, true, std::nullopt);
  return {
      {"k3_s2_p1", {p.x}, k3s2p1},
      {"ceil_exclude_pad",
       {p.x},
       pool({3, 2}, {2, 2}, {1, 1}, true, false, std::nullopt)},
      {"divisor_override", {p.x}, pool({2}, {}, {0}, false, true, 3)},
      {"strided", {s::strided(p.x)}, k3s2p1},
      {"3d", {p.x3}, k3s2p1},
      {"one_plane", {p.plane}, pool({3}, {1}, {1}, false, true, std::nullopt)},
  };
}

std::vector<Sample> adaptive_pool_samples(const SampleSpec& spec) {
  PoolInputs p = pool_inputs(spec);
  auto pool = [](IntList size) {
    return s::call1(
        [size](const Tensor& x) { return adaptive_avg_pool2d(x, size); });
  };
  auto overlapping = pool({s::size(spec, 7, 3), s::size(spec, 11, 4)});
  return {
      {"overlapping", {p.x}, overlapping},
      {"global", {p.x}, pool({1})},
      {"larger", {p.x}, pool({s::size(spec, 67, 7), s::size(spec, 59, 6)})},
      {"strided", {s::strided(p.x)}, overlapping},
      {"3d", {p.x3}, overlapping},
      {"one_plane", {p.plane}, overlapping},
  };
}

const char* kMaxPoolCost =
    "1.06x the fast variant's time (32 x 64 x 56 x 56, 2 threads)";

std::vector<Sample> max_pool_samples(const SampleSpec& spec) {
  PoolInputs p = pool_inputs(spec);
  auto pool = [](IntList k, IntList st, IntList pad, IntList dil, bool ceil) {
    return s::call1(
        [=](const Tensor& x) { return max_pool2d(x, k, st, pad, dil, ceil); });
  };
  auto k3s2p1 = pool({3}, {2}, {1}, {1}, false);
  return {
      {"k3_s2_p1", {p.x}, k3s2p1},
      {"k2", {p.x}, pool({2}, {}, {0}, {1}, false)},
      {"dilated_ceil", {p.x}, pool({3, 2}, {2, 1}, {1, 0}, {2, 1}, true)},
      {"strided", {s::strided(p.x)}, k3s2p1},
      {"3d", {p.x3}, k3s2p1},
      {"one_plane", {p.plane}, pool({3}, {1}, {1}, {1}, false)},
      {"with_indices",
       {p.x},
       [](const std::vector<Tensor>& in) {
         auto [out, idx] = max_pool2d_with_indices(in[0], {3}, {2}, {1});
         return std::vector<Tensor>{out, idx};
       }},
      {"empty_batch", {s::varied({0, 3, 6, 7}, spec.dtype, 1.0, 4)}, k3s2p1},
  };
}

std::vector<Sample> max_pool_backward_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  // The trace shows (grad_out, indices).
  auto sample = [dt](
                    const char* label,
                    Shape in_sizes,
                    int64_t oh,
                    int64_t ow,
                    int64_t seed) {
    const int64_t planes = in_sizes[0] * in_sizes[1];
    const int64_t hw = in_sizes[2] * in_sizes[3];
    Tensor go = s::varied({in_sizes[0], in_sizes[1], oh, ow}, dt, 4.0, seed);
    Tensor idx = s::indices(planes * oh * ow, hw, seed)
                     .reshape({in_sizes[0], in_sizes[1], oh, ow});
    return Sample{
        label,
        {go, idx},
        s::call2([in_sizes](const Tensor& g, const Tensor& i) {
          return max_pool2d_backward(g, i, in_sizes);
        })};
  };
  return {
      sample(
          "planes",
          {s::size(spec, 4, 1),
           s::size(spec, 8, 2),
           s::size(spec, 61, 5),
           s::size(spec, 53, 5)},
          s::size(spec, 30, 2),
          s::size(spec, 26, 3),
          1),
      // Many additions into few elements of one plane.
      sample(
          "one_plane",
          {1, 1, s::size(spec, 17, 3), s::size(spec, 13, 3)},
          s::size(spec, 151, 4),
          s::size(spec, 149, 5),
          2),
  };
}

} // namespace

DITTO_OP_RECORDS(pool) {
  register_op({
      .name = "avg_pool2d",
      .family = "pooling",
      .callables = {"ditto::nn::functional::avg_pool2d(x, kernel_size, stride, "
                    "padding, ceil_mode, count_include_pad, divisor_override)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("avg_pool2d_backward")},
      .dtypes = kFloating,
      .samples = avg_pool_samples,
      .bad_samples =
          [] {
            auto out = pool_bad_samples(
                [](const Tensor& x) { return avg_pool2d(x, {2}); });
            out.push_back(
                {"zero_divisor",
                 {s::varied({1, 2, 5, 5}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return avg_pool2d(x, {2}, {}, {0}, false, true, 0);
                 })});
            return out;
          },
  });
  register_op({
      .name = "adaptive_avg_pool2d",
      .family = "pooling",
      .callables = {"ditto::nn::functional::adaptive_avg_pool2d(x, "
                    "output_size)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("adaptive_avg_pool2d_backward")},
      .dtypes = kFloating,
      .samples = adaptive_pool_samples,
      .bad_samples =
          [] {
            auto out = pool_bad_samples(
                [](const Tensor& x) { return adaptive_avg_pool2d(x, {2}); });
            out.push_back(
                {"zero_output",
                 {s::varied({1, 2, 5, 5}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return adaptive_avg_pool2d(x, {0, 2});
                 })});
            return out;
          },
  });

  register_op({
      .name = "max_pool2d",
      .family = "pooling",
      .callables =
          {"ditto::max_pool2d(x, kernel_size, stride, padding, dilation, "
           "ceil_mode)",
           "ditto::nn::functional::max_pool2d_with_indices(x, kernel_size, stride, padding, "
           "dilation, ceil_mode)",
           "ditto::nn::functional::max_pool2d(x, kernel_size, stride, "
           "padding, dilation, ceil_mode)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("max_pool2d_backward", kMaxPoolCost)},
      .dtypes = kFloating,
      .samples = max_pool_samples,
      .bad_samples =
          [] {
            auto out = pool_bad_samples(
                [](const Tensor& x) { return max_pool2d(x, {2}); });
            out.push_back(
                {"padding_over_half_kernel",
                 {s::varied({1, 2, 5, 5}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& x) {
                   return max_pool2d(x, {2}, {1}, {2});
                 })});
            return out;
          },
  });
  register_op({
      .name = "max_pool2d_backward",
      .family = "pooling",
      .callables =
          {"ditto::nn::functional::max_pool2d_backward(grad_out, indices, "
           "input_sizes)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("max_pool2d_backward", kMaxPoolCost)},
      .dtypes = kFloating,
      .samples = max_pool_backward_samples,
      .bad_samples =
          [] {
            Tensor go = s::varied({1, 2, 2, 2}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"index_out_of_range", {go}, s::call1([](const Tensor& g) {
                   Tensor idx =
                       tensor(std::vector<int64_t>{0, 1, 9, 2, 3, 4, 5, 6})
                           .reshape({1, 2, 2, 2});
                   return max_pool2d_backward(g, idx, {1, 2, 3, 3});
                 })},
                {"indices_shape", {go}, s::call1([](const Tensor& g) {
                   return max_pool2d_backward(
                       g, s::indices(8, 9), {1, 2, 3, 3});
                 })},
            };
          },
      .not_differentiable =
          "a gradient: its own backward (double backward) is not recorded",
  });
}

} // namespace ditto::nn::functional
