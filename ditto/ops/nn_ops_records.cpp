// The records of softmax, log_softmax, nll_loss and max_pool2d with its
// public backward (nn_ops.cpp) (Note [Op records] in record.cpp).

#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
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

const char* kMaxPoolCost =
    "1.06x the fast variant's time (32 x 64 x 56 x 56, 2 threads)";

// ---- softmax

std::vector<Sample> softmax_samples(
    const SampleSpec& spec,
    std::function<Tensor(const Tensor&, int64_t)> fn) {
  const Dtype dt = spec.dtype;
  auto along = [fn](int64_t d) {
    return s::call1([fn, d](const Tensor& x) { return fn(x, d); });
  };
  const int64_t r = s::size(spec, 317, 3), c = s::size(spec, 131, 5);
  Tensor m = s::varied({r, c}, dt, 8.0, 1);
  Tensor t3 = s::varied(
      {s::size(spec, 7, 2), s::size(spec, 33, 3), s::size(spec, 45, 4)},
      dt,
      8.0,
      2);
  std::vector<Sample> out = {
      {"rows", {m}, along(-1)},
      {"columns", {m}, along(0)},
      {"strided", {s::strided(m)}, along(1)},
      {"middle_dim", {t3}, along(1)},
      {"scalar", {s::varied({}, dt, 8.0, 3)}, along(0)},
      {"empty", {s::varied({0, c}, dt, 1.0, 4)}, along(1)},
  };
  if (!spec.small) {
    // Rows longer than a reduction chunk.
    out.push_back({"long_rows", {s::varied({3, 40000}, dt, 8.0, 5)}, along(1)});
  }
  return out;
}

void softmax_record(
    const char* name,
    std::function<Tensor(const Tensor&, int64_t)> fn) {
  register_op({
      .name = name,
      .family = "activation",
      .callables =
          {std::string("ditto::") + name + "(x, dim)",
           std::string("ditto::nn::functional::") + name + "(x, dim)"},
      .deterministic_because =
          "composed of max, exp, sum and log along dim: elementwise ops and "
          "reductions that add in a fixed order",
      .dtypes = kFloating,
      .samples =
          [fn](const SampleSpec& spec) { return softmax_samples(spec, fn); },
      .bad_samples =
          [fn] {
            return std::vector<Sample>{
                s::undefined_input(
                    s::call1([fn](const Tensor& x) { return fn(x, 0); }), 1),
                {"integer_input",
                 {s::varied({2, 3}, kInt64, 20.0, 1)},
                 s::call1([fn](const Tensor& x) { return fn(x, 1); })},
                {"dim_out_of_range",
                 {s::varied({2, 3}, kFloat32, 2.0, 1)},
                 s::call1([fn](const Tensor& x) { return fn(x, 2); })},
            };
          },
  });
}

// ---- nll_loss

// The trace of nll_loss shows (input, weight), not the target: the samples
// pass (input, target) and build any weight in the call, so the count of
// the traced inputs (an undefined weight counts) matches.
std::vector<Sample> nll_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t n = s::size(spec, 4000, 4), c = s::size(spec, 17, 5);
  Tensor lp = s::varied({n, c}, dt, 4.0, 1);
  Tensor t = s::indices(n, c, 2);
  const int64_t n4 = s::size(spec, 8, 2), c4 = s::size(spec, 7, 3),
                h = s::size(spec, 31, 2), w = s::size(spec, 29, 3);
  Tensor lp4 = s::varied({n4, c4, h, w}, dt, 4.0, 3);
  Tensor t4 = s::indices(n4 * h * w, c4, 4).reshape({n4, h, w});
  Tensor weight = s::positive({c}, dt, 5);
  auto with = [](int64_t ignore, Reduction r) {
    return s::call2([ignore, r](const Tensor& x, const Tensor& y) {
      return nll_loss(x, y, {}, ignore, r);
    });
  };
  return {
      {"mean", {lp, t}, with(-100, Reduction::Mean)},
      {"none", {lp, t}, with(-100, Reduction::None)},
      {"strided", {s::strided(lp), t}, with(-100, Reduction::Sum)},
      {"spatial_ignore_sum", {lp4, t4}, with(1, Reduction::Sum)},
      {"spatial_ignore_mean", {lp4, t4}, with(2, Reduction::Mean)},
      {"weighted_mean",
       {lp, t},
       s::call2([weight](const Tensor& x, const Tensor& y) {
         return nll_loss(x, y, weight, 0, Reduction::Mean);
       })},
      {"one_sample",
       {s::varied({c}, dt, 4.0, 6), s::indices(1, c, 3).reshape({})},
       with(-100, Reduction::Mean)},
      {"empty",
       {s::varied({0, c}, dt, 1.0, 7), s::indices(0, c)},
       with(-100, Reduction::Sum)},
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
  // The trace shows grad_out alone: the indices are built here.
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
    return Sample{label, {go}, s::call1([idx, in_sizes](const Tensor& g) {
                    return max_pool2d_backward(g, idx, in_sizes);
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

DITTO_OP_RECORDS(nn_ops) {
  softmax_record(
      "softmax", [](const Tensor& x, int64_t d) { return softmax(x, d); });
  softmax_record("log_softmax", [](const Tensor& x, int64_t d) {
    return log_softmax(x, d);
  });

  register_op({
      .name = "nll_loss",
      .family = "loss",
      .callables =
          {"ditto::nll_loss(input, target, weight, ignore_index, reduction)",
           "ditto::nn::functional::nll_loss(input, target, options)"},
      .deterministic_because =
          "one serial loop over the targets: the sum runs in double in "
          "element order",
      .dtypes = kFloating,
      .samples = nll_samples,
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& x, const Tensor& t) {
              return nll_loss(x, t);
            });
            Tensor x = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"target_out_of_range",
                 {x, tensor(std::vector<int64_t>{0, 4, 1})},
                 call},
                {"float_target", {x, s::varied({3}, kFloat32, 2.0, 2)}, call},
                {"target_shape", {x, s::indices(4, 4)}, call},
            };
          },
  });

  register_op({
      .name = "max_pool2d",
      .family = "pooling",
      .callables =
          {"ditto::max_pool2d(x, kernel_size, stride, padding, dilation, "
           "ceil_mode)",
           "ditto::max_pool2d_with_indices(x, kernel_size, stride, padding, "
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
      .callables = {"ditto::max_pool2d_backward(grad_out, indices, "
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

} // namespace ditto
