// The records of the poolings over one, two and three dims (max with its
// public backwards, average, adaptive average and max; max unpooling's are
// in max_unpool_records.cpp) (pooling.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include <cmath>

#include "ditto/nn/functional/pooling.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;
using detail::max_pool_backward_path;
using detail::nd_bad_samples;
using detail::nd_inputs;
using detail::NdInputs;
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

using PoolFn = std::function<
    Tensor(const Tensor&, IntList, IntList, IntList, IntList, bool)>;

std::vector<Sample> max_nd_samples(const SampleSpec& spec, int n, PoolFn f) {
  NdInputs p = nd_inputs(spec, n);
  auto pool = [f](IntList k, IntList st, IntList pad, IntList dil, bool ceil) {
    return s::call1(
        [=](const Tensor& x) { return f(x, k, st, pad, dil, ceil); });
  };
  auto k3s2p1 = pool({3}, {2}, {1}, {1}, false);
  IntList k = n == 1 ? IntList{3} : IntList{2, 3, 2};
  IntList st = n == 1 ? IntList{2} : IntList{1, 2, 2};
  IntList pad = n == 1 ? IntList{1} : IntList{1, 1, 0};
  IntList dil = n == 1 ? IntList{2} : IntList{1, 1, 2};
  return {
      {"k3_s2_p1", {p.x}, k3s2p1},
      {"k2", {p.x}, pool({2}, {}, {0}, {1}, false)},
      {"dilated_ceil", {p.x}, pool(k, st, pad, dil, true)},
      {"strided", {s::strided(p.x)}, k3s2p1},
      {"unbatched", {p.unbatched}, k3s2p1},
      {"one_plane", {p.plane}, pool({3}, {1}, {1}, {1}, false)},
  };
}

using AvgFn =
    std::function<Tensor(const Tensor&, IntList, IntList, IntList, bool, bool)>;

std::vector<Sample> avg_nd_samples(const SampleSpec& spec, int n, AvgFn f) {
  NdInputs p = nd_inputs(spec, n);
  auto pool = [f](IntList k, IntList st, IntList pad, bool ceil, bool include) {
    return s::call1(
        [=](const Tensor& x) { return f(x, k, st, pad, ceil, include); });
  };
  auto k3s2p1 = pool({3}, {2}, {1}, false, true);
  IntList k = n == 1 ? IntList{3} : IntList{3, 2, 3};
  IntList st = n == 1 ? IntList{2} : IntList{2, 2, 1};
  IntList pad = n == 1 ? IntList{1} : IntList{1, 1, 0};
  return {
      {"k3_s2_p1", {p.x}, k3s2p1},
      {"ceil_exclude_pad", {p.x}, pool(k, st, pad, true, false)},
      {"strided", {s::strided(p.x)}, k3s2p1},
      {"unbatched", {p.unbatched}, k3s2p1},
      {"one_plane", {p.plane}, pool({3}, {1}, {1}, false, true)},
  };
}

using AdaptiveFn = std::function<Tensor(const Tensor&, IntList)>;

std::vector<Sample> adaptive_nd_samples(
    const SampleSpec& spec,
    int n,
    AdaptiveFn f) {
  NdInputs p = nd_inputs(spec, n);
  auto pool = [f](IntList size) {
    return s::call1([=](const Tensor& x) { return f(x, size); });
  };
  auto sizes = [n](IntList v) { return IntList(v.end() - n, v.end()); };
  auto overlapping = pool(
      sizes({s::size(spec, 4, 2), s::size(spec, 7, 3), s::size(spec, 67, 4)}));
  return {
      {"overlapping", {p.x}, overlapping},
      {"global", {p.x}, pool({1})},
      {"larger",
       {p.x},
       pool(sizes(
           {s::size(spec, 13, 4),
            s::size(spec, 11, 5),
            s::size(spec, 331, 7)}))},
      {"strided", {s::strided(p.x)}, overlapping},
      {"unbatched", {p.unbatched}, overlapping},
      {"one_plane", {p.plane}, overlapping},
  };
}

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

std::vector<Sample> max_pool3d_backward_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  auto sample =
      [dt](const char* label, Shape in_sizes, Shape out, int64_t seed) {
        const int64_t planes = in_sizes[0] * in_sizes[1];
        const int64_t plane = in_sizes[2] * in_sizes[3] * in_sizes[4];
        Shape go_sizes = {in_sizes[0], in_sizes[1], out[0], out[1], out[2]};
        Tensor go = s::varied(go_sizes, dt, 4.0, seed);
        Tensor idx = s::indices(planes * out[0] * out[1] * out[2], plane, seed)
                         .reshape(go_sizes);
        return Sample{
            label,
            {go, idx},
            s::call2([in_sizes](const Tensor& g, const Tensor& i) {
              return max_pool3d_backward(g, i, in_sizes);
            })};
      };
  return {
      sample(
          "planes",
          {s::size(spec, 2, 1), s::size(spec, 5, 2), 9, 8, s::size(spec, 7, 3)},
          {4, s::size(spec, 4, 2), 3},
          1),
      // Many additions into few elements of one plane.
      sample(
          "one_plane",
          {1, 1, 3, 4, s::size(spec, 5, 2)},
          {s::size(spec, 21, 2), s::size(spec, 23, 3), s::size(spec, 25, 2)},
          2),
  };
}

// The records of the 1-d and 3-d poolings (n dims).
void register_nd_pooling(int n) {
  const std::string d = std::to_string(n) + "d";
  const std::string f = "ditto::nn::functional::";
  const std::string max = "max_pool" + d;
  std::vector<std::string> max_callables = {
      f + max + "(x, kernel_size, stride, padding, dilation, ceil_mode)",
      f + max +
          "_with_indices(x, kernel_size, stride, padding, dilation, "
          "ceil_mode)",
      "ditto::" + max +
          "(x, kernel_size, stride, padding, dilation, "
          "ceil_mode)",
      "ditto::" + max +
          "_with_indices(x, kernel_size, stride, padding, dilation, "
          "ceil_mode)"};
  PoolFn max_fn = n == 1
      ? PoolFn([](const Tensor& x,
                  IntList k,
                  IntList st,
                  IntList pad,
                  IntList dil,
                  bool ceil) { return max_pool1d(x, k, st, pad, dil, ceil); })
      : PoolFn([](const Tensor& x,
                  IntList k,
                  IntList st,
                  IntList pad,
                  IntList dil,
                  bool ceil) { return max_pool3d(x, k, st, pad, dil, ceil); });
  register_op({
      .name = max,
      .family = "pooling",
      .callables = max_callables,
      .deterministic_because = {},
      .nondeterministic = {max_pool_backward_path(n == 3 ? 3 : 2)},
      .dtypes = kFloating,
      .samples =
          [n, max_fn](const SampleSpec& spec) {
            return max_nd_samples(spec, n, max_fn);
          },
      .bad_samples =
          [n, max_fn] {
            auto out = nd_bad_samples(n, [max_fn](const Tensor& x) {
              return max_fn(x, {2}, {}, {0}, {1}, false);
            });
            out.push_back(
                {"padding_over_half_kernel",
                 {s::varied(Shape(size_t(n + 2), 5), kFloat32, 2.0, 1)},
                 s::call1([max_fn](const Tensor& x) {
                   return max_fn(x, {2}, {1}, {2}, {1}, false);
                 })});
            return out;
          },
  });

  const std::string avg = "avg_pool" + d;
  const std::string avg_args = n == 1
      ? "(x, kernel_size, stride, padding, ceil_mode, count_include_pad)"
      : "(x, kernel_size, stride, padding, ceil_mode, count_include_pad, "
        "divisor_override)";
  AvgFn avg_fn = n == 1 ? AvgFn([](const Tensor& x,
                                   IntList k,
                                   IntList st,
                                   IntList pad,
                                   bool ceil,
                                   bool include) {
    return avg_pool1d(x, k, st, pad, ceil, include);
  })
                        : AvgFn([](const Tensor& x,
                                   IntList k,
                                   IntList st,
                                   IntList pad,
                                   bool ceil,
                                   bool include) {
                            return avg_pool3d(x, k, st, pad, ceil, include);
                          });
  register_op({
      .name = avg,
      .family = "pooling",
      .callables = {f + avg + avg_args, "ditto::" + avg + avg_args},
      .deterministic_because = {},
      .nondeterministic = {plane_path((avg + "_backward").c_str())},
      .dtypes = kFloating,
      .samples =
          [n, avg_fn](const SampleSpec& spec) {
            auto out = avg_nd_samples(spec, n, avg_fn);
            if (n == 3) {
              out.push_back(
                  {"divisor_override",
                   {nd_inputs(spec, 3).x},
                   s::call1([](const Tensor& x) {
                     return avg_pool3d(x, {3, 2, 2}, {1}, {0}, false, true, 5);
                   })});
            }
            return out;
          },
      .bad_samples =
          [n, avg_fn] {
            return nd_bad_samples(n, [avg_fn](const Tensor& x) {
              return avg_fn(x, {2}, {}, {0}, false, true);
            });
          },
  });

  const std::string aavg = "adaptive_avg_pool" + d;
  AdaptiveFn aavg_fn = n == 1 ? AdaptiveFn([](const Tensor& x, IntList s) {
    return adaptive_avg_pool1d(x, s);
  })
                              : AdaptiveFn([](const Tensor& x, IntList s) {
                                  return adaptive_avg_pool3d(x, s);
                                });
  register_op({
      .name = aavg,
      .family = "pooling",
      .callables =
          {f + aavg + "(x, output_size)",
           "ditto::" + aavg + "(x, output_size)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path((aavg + "_backward").c_str())},
      .dtypes = kFloating,
      .samples =
          [n, aavg_fn](const SampleSpec& spec) {
            return adaptive_nd_samples(spec, n, aavg_fn);
          },
      .bad_samples =
          [n, aavg_fn] {
            return nd_bad_samples(
                n, [aavg_fn](const Tensor& x) { return aavg_fn(x, {2}); });
          },
  });
}

// The records of adaptive max pooling (n dims).
void register_adaptive_max(int n) {
  const std::string d = std::to_string(n) + "d";
  const std::string f = "ditto::nn::functional::";
  const std::string amax = "adaptive_max_pool" + d;
  using AmaxFn = std::tuple<Tensor, Tensor> (*)(const Tensor&, const IntArg&);
  static const AmaxFn kAmax[] = {
      nullptr,
      &::ditto::adaptive_max_pool1d,
      &::ditto::adaptive_max_pool2d,
      &::ditto::adaptive_max_pool3d};
  const AmaxFn amax_fn = kAmax[n];
  const std::string backward =
      n == 3 ? "max_pool3d_backward" : "max_pool2d_backward";
  register_op({
      .name = amax,
      .family = "pooling",
      .callables =
          {f + amax + "(x, output_size)",
           f + amax + "_with_indices(x, output_size)",
           "ditto::" + amax + "(x, output_size)"},
      .deterministic_because = {},
      .nondeterministic =
          {{.entry = backward,
            .reason = "the backward is " + backward + "'s (see its entry)"}},
      .dtypes = kFloating,
      .samples =
          [n, amax_fn](const SampleSpec& spec) {
            auto out = adaptive_nd_samples(
                spec, n, [amax_fn](const Tensor& x, IntList s) {
                  return std::get<0>(amax_fn(x, s));
                });
            out.push_back(
                {"with_indices",
                 {nd_inputs(spec, n).x},
                 [amax_fn](const std::vector<Tensor>& in) {
                   auto [o, i] = amax_fn(in[0], {3});
                   return std::vector<Tensor>{o, i};
                 }});
            return out;
          },
      .bad_samples =
          [n, amax_fn] {
            return nd_bad_samples(n, [amax_fn](const Tensor& x) {
              return std::get<0>(amax_fn(x, {2}));
            });
          },
  });
}

} // namespace

DITTO_OP_RECORDS(pool) {
  for (int n : {1, 3}) {
    register_nd_pooling(n);
  }
  for (int n : {1, 2, 3}) {
    register_adaptive_max(n);
  }
  register_op({
      .name = "max_pool3d_backward",
      .family = "pooling",
      .callables =
          {"ditto::nn::functional::max_pool3d_backward(grad_out, indices, "
           "input_sizes)",
           "ditto::max_pool3d_with_indices_backward(grad_output, self, "
           "kernel_size, stride, padding, dilation, ceil_mode, indices)"},
      .deterministic_because = {},
      .nondeterministic = {max_pool_backward_path(3)},
      .dtypes = kFloating,
      .samples = max_pool3d_backward_samples,
      .bad_samples =
          [] {
            Tensor go = s::varied({1, 2, 2, 2, 1}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"index_out_of_range", {go}, s::call1([](const Tensor& g) {
                   Tensor idx =
                       tensor(std::vector<int64_t>{0, 1, 18, 2, 3, 4, 5, 6})
                           .reshape({1, 2, 2, 2, 1});
                   return max_pool3d_backward(g, idx, {1, 2, 3, 3, 2});
                 })},
                {"indices_shape", {go}, s::call1([](const Tensor& g) {
                   return max_pool3d_backward(
                       g, s::indices(8, 9), {1, 2, 3, 3, 2});
                 })},
            };
          },
      .not_differentiable =
          "a gradient: its own backward (double backward) is not recorded",
  });
  register_op({
      .name = "avg_pool2d",
      .family = "pooling",
      .callables =
          {"ditto::avg_pool2d(x, kernel_size, stride, padding, "
           "ceil_mode, count_include_pad, divisor_override)",
           "ditto::nn::functional::avg_pool2d(x, kernel_size, stride, "
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

  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "max_pool2d",
        .family = "pooling",
        .callables =
            {"ditto::max_pool2d(x, kernel_size, stride, padding, dilation, "
             "ceil_mode)",
             "ditto::max_pool2d_with_indices(x, kernel_size, stride, padding, "
             "dilation, ceil_mode)",
             "ditto::nn::functional::max_pool2d_with_indices(x, kernel_size, stride, padding, "
             "dilation, ceil_mode)",
             "ditto::nn::functional::max_pool2d(x, kernel_size, stride, "
             "padding, dilation, ceil_mode)"},
        .deterministic_because = {},
        .nondeterministic = {max_pool_backward_path(2)},
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
        .grad_fn = "MaxPool2DWithIndicesBackward0",
    });
  }
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "max_pool2d_backward",
        .family = "pooling",
        .callables =
            {"ditto::nn::functional::max_pool2d_backward(grad_out, indices, "
             "input_sizes)",
             "ditto::max_pool2d_with_indices_backward(grad_output, self, "
             "kernel_size, stride, padding, dilation, ceil_mode, indices)"},
        .deterministic_because = {},
        .nondeterministic = {max_pool_backward_path(2)},
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
}

} // namespace ditto::nn::functional
