// The records of the average poolings avg_pool2d and adaptive_avg_pool2d
// (pool.cpp) (Note [Op records] in record.cpp).

#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/nn_ops.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
using detail::plane_path;
using detail::pool_bad_samples;
using detail::pool_inputs;
using detail::PoolInputs;

const std::vector<Dtype> kFloating = {kFloat32, kFloat64};

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

} // namespace

DITTO_OP_RECORDS(pool) {
  register_op({
      .name = "avg_pool2d",
      .family = "pooling",
      .callables =
          {"ditto::avg_pool2d(x, kernel_size, stride, padding, ceil_mode, "
           "count_include_pad, divisor_override)",
           "ditto::nn::functional::avg_pool2d(...)"},
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
      .callables =
          {"ditto::adaptive_avg_pool2d(x, output_size)",
           "ditto::nn::functional::adaptive_avg_pool2d(x, "
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
}

} // namespace ditto
