// The records of the normalizations batch_norm, layer_norm, group_norm and
// normalize (normalization.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include <cstring>

#include "ditto/nn/functional/normalization.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

// A copy of t made without an op (the call's own running statistics, fresh
// for every call, show no other op in the trace).
// t is contiguous.
Tensor fresh(const Tensor& t) {
  Tensor out = detail::new_tensor(t.sizes(), t.dtype());
  std::memcpy(
      out.raw_data(), t.raw_data(), size_t(t.numel() * t.element_size()));
  return out;
}

// ---- normalization

std::vector<Sample> instance_norm_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const bool small = spec.small;
  const int64_t c = s::size(spec, 5, 2);
  Tensor x = s::varied(
      {s::size(spec, 3, 2), c, s::size(spec, 31, 3), s::size(spec, 29, 2)},
      dt,
      6.0,
      1,
      0.5);
  Tensor x1 =
      s::varied({s::size(spec, 4, 2), c, s::size(spec, 2001, 5)}, dt, 6.0, 2);
  Tensor x3 = s::varied(
      {2, c, s::size(spec, 7, 2), s::size(spec, 8, 2), s::size(spec, 9, 2)},
      dt,
      6.0,
      3);
  Tensor w = s::positive({c}, dt, 4);
  Tensor b = s::varied({c}, dt, 2.0, 5);
  Tensor rm = s::varied({c}, dt, 1.0, 6);
  Tensor rv = s::positive({c}, dt, 7);
  auto plain = s::call1([](const Tensor& in) { return instance_norm(in); });
  auto affine = s::call3([](auto& in, auto& wt, auto& bs) {
    return instance_norm(in, {}, {}, wt, bs, true, 0.1, 1e-5);
  });
  // Running statistics: fresh ones each call, updated in place; full-sized
  // samples return them too.
  s::Call running = [rm, rv, small](const std::vector<Tensor>& in) {
    Tensor m = fresh(rm), v = fresh(rv);
    Tensor y = instance_norm(in[0], m, v, in[1], in[2], true, 0.2, 1e-5);
    return small ? std::vector<Tensor>{y} : std::vector<Tensor>{y, m, v};
  };
  auto eval = s::call3([rm, rv](auto& in, auto& wt, auto& bs) {
    return instance_norm(in, fresh(rm), fresh(rv), wt, bs, false, 0.1, 1e-5);
  });
  return {
      {"plain", {x}, plain},
      {"affine", {x, w, b}, affine},
      {"running", {x, w, b}, running},
      {"eval", {x, w, b}, eval},
      {"1d", {x1}, plain},
      {"3d", {x3, w, b}, running},
      {"strided", {s::strided(x)}, plain},
  };
}

std::vector<Sample> batch_norm_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const bool small = spec.small;
  const int64_t c = s::size(spec, 13, 3);
  Tensor x = s::varied(
      {s::size(spec, 8, 2), c, s::size(spec, 31, 2), s::size(spec, 29, 3)},
      dt,
      6.0,
      1,
      0.5);
  Tensor x2 = s::varied({s::size(spec, 4000, 5), c}, dt, 6.0, 2);
  Tensor x3 =
      s::varied({s::size(spec, 16, 2), c, s::size(spec, 301, 4)}, dt, 6.0, 3);
  Tensor w = s::positive({c}, dt, 4);
  Tensor b = s::varied({c}, dt, 2.0, 5);
  Tensor rm = s::varied({c}, dt, 1.0, 6);
  Tensor rv = s::positive({c}, dt, 7);
  auto train = s::call3([](auto& in, auto& wt, auto& bs) {
    return batch_norm(in, {}, {}, wt, bs, true, 0.1, 1e-5);
  });
  // Training with running statistics: fresh ones each call, updated in
  // place; full-sized samples return them too (gradcheck would see them
  // depend on x without a gradient).
  s::Call running = [rm, rv, small](const std::vector<Tensor>& in) {
    Tensor m = fresh(rm), v = fresh(rv);
    Tensor y = batch_norm(in[0], m, v, in[1], in[2], true, 0.1, 1e-5);
    return small ? std::vector<Tensor>{y} : std::vector<Tensor>{y, m, v};
  };
  auto eval = s::call3([rm, rv](auto& in, auto& wt, auto& bs) {
    return batch_norm(in, rm, rv, wt, bs, false, 0.1, 1e-5);
  });
  return {
      {"train", {x, w, b}, train},
      {"train_running", {x, w, b}, running},
      {"eval", {x, w, b}, eval},
      {"2d", {x2, w, b}, running},
      {"strided", {s::strided(x3), w, b}, train},
      {"eval_empty", {s::varied({0, c, 4}, dt, 1.0, 8), w, b}, eval},
  };
}

// layer_norm and group_norm trace (x, weight, bias), an undefined weight
// or bias included: their samples give both.
std::vector<Sample> layer_norm_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 113, 3), c = s::size(spec, 307, 5);
  Tensor m = s::varied({r, c}, dt, 6.0, 1, 1.0);
  Tensor w = s::positive({c}, dt, 2);
  Tensor b = s::varied({c}, dt, 2.0, 3);
  const int64_t h = s::size(spec, 61, 3), wd = s::size(spec, 53, 4);
  Tensor x3 = s::varied({s::size(spec, 8, 2), h, wd}, dt, 6.0, 4);
  Tensor w2 = s::positive({h, wd}, dt, 5);
  Tensor b2 = s::varied({h, wd}, dt, 2.0, 6);
  auto over = [](Shape shape) {
    return s::call3([shape](auto& x, auto& wt, auto& bs) {
      return layer_norm(x, shape, wt, bs, 1e-5);
    });
  };
  return {
      s::batched({"last_dim", {m, w, b}, over({c})}, {0}),
      s::batched({"last_two_dims", {x3, w2, b2}, over({h, wd})}, {0}),
      s::batched({"strided", {s::strided(m), w, b}, over({c})}, {0}),
      {"empty", {s::varied({0, c}, dt, 1.0, 7), w, b}, over({c})},
  };
}

std::vector<Sample> group_norm_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t c = s::size(spec, 12, 4);
  Tensor x = s::varied(
      {s::size(spec, 4, 2), c, s::size(spec, 31, 2), s::size(spec, 29, 2)},
      dt,
      6.0,
      1,
      -0.5);
  Tensor x3 =
      s::varied({s::size(spec, 8, 2), c, s::size(spec, 401, 3)}, dt, 6.0, 2);
  Tensor w = s::positive({c}, dt, 3);
  Tensor b = s::varied({c}, dt, 2.0, 4);
  auto groups = [](int64_t g) {
    return s::call3([g](auto& in, auto& wt, auto& bs) {
      return group_norm(in, g, wt, bs, 1e-5);
    });
  };
  return {
      {"two_groups", {x, w, b}, groups(2)},
      {"one_channel_each", {x, w, b}, groups(c)},
      {"strided", {s::strided(x3), w, b}, groups(2)},
      {"empty_batch", {s::varied({0, c, 3}, dt, 1.0, 5), w, b}, groups(2)},
  };
}

} // namespace

DITTO_OP_RECORDS(norm) {
  register_op({
      .name = "instance_norm",
      .family = "normalization",
      .callables =
          {"ditto::instance_norm(input, weight, bias, running_mean, "
           "running_var, use_input_stats, momentum, eps, cudnn_enabled)",
           "ditto::nn::functional::instance_norm(...)",
           "ditto::nn::InstanceNorm1d(num_features)",
           "ditto::nn::InstanceNorm2d(num_features)",
           "ditto::nn::InstanceNorm3d(num_features)"},
      .deterministic_because =
          "batch_norm of the (1, N * C, ...) view, PyTorch's construction: "
          "each plane reduced by one task, its sums in double in memory "
          "order",
      .dtypes = kFloating,
      .samples = instance_norm_samples,
      .bad_samples =
          [] {
            Tensor x = s::varied({2, 3, 4}, kFloat32, 2.0, 1);
            Tensor w = s::positive({3}, kFloat32, 2);
            return std::vector<Sample>{
                s::undefined_input(
                    s::call1([](auto& in) { return instance_norm(in); }), 1),
                {"eval_without_running_stats", {x}, s::call1([](auto& in) {
                   return instance_norm(in, {}, {}, {}, {}, false);
                 })},
                {"weight_size", {x}, s::call1([](auto& in) {
                   return instance_norm(
                       in, {}, {}, s::positive({4}, kFloat32, 2), {});
                 })},
                {"one_spatial_element",
                 {s::varied({2, 3, 1}, kFloat32, 2.0, 3)},
                 s::call1([](auto& in) { return instance_norm(in); })},
                {"one_dim_input",
                 {s::varied({3}, kFloat32, 2.0, 4)},
                 s::call1([](auto& in) { return instance_norm(in); })},
            };
          },
  });
  register_op({
      .name = "batch_norm",
      .family = "normalization",
      .callables =
          {"ditto::batch_norm(input, weight, bias, running_mean, running_var, "
           "training, momentum, eps, cudnn_enabled)",
           "ditto::nn::functional::batch_norm(...)"},
      .deterministic_because =
          "each channel is reduced by one task, its sums in double in "
          "memory order",
      .dtypes = kFloating,
      .samples = batch_norm_samples,
      .bad_samples =
          [] {
            Tensor x = s::varied({2, 3, 4}, kFloat32, 2.0, 1);
            Tensor w = s::positive({3}, kFloat32, 2);
            Tensor b = s::varied({3}, kFloat32, 2.0, 3);
            return std::vector<Sample>{
                s::undefined_input(
                    s::call3([](auto& in, auto& wt, auto& bs) {
                      return batch_norm(in, {}, {}, wt, bs, true, 0.1, 1e-5);
                    }),
                    3),
                {"running_stats_size",
                 {x, w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   Tensor rm = s::varied({4}, kFloat32, 1.0, 4);
                   Tensor rv = s::positive({4}, kFloat32, 5);
                   return batch_norm(in, rm, rv, wt, bs, true, 0.1, 1e-5);
                 })},
                {"one_dim_input",
                 {s::varied({3}, kFloat32, 2.0, 6), w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return batch_norm(in, {}, {}, wt, bs, true, 0.1, 1e-5);
                 })},
                {"integer_input",
                 {s::varied({2, 3, 4}, kInt64, 20.0, 7), w, b},
                 s::call3([](auto& in, auto& wt, auto& bs) {
                   return batch_norm(in, {}, {}, wt, bs, true, 0.1, 1e-5);
                 })},
            };
          },
      .grad_fn = "NativeBatchNormBackward0",
  });
  register_op({
      .name = "layer_norm",
      .family = "normalization",
      .callables =
          {"ditto::layer_norm(input, normalized_shape, weight, bias, eps, "
           "cudnn_enable)",
           "ditto::nn::functional::layer_norm(...)"},
      .deterministic_because =
          "composed of mean, elementwise ops and sqrt: means that add in a "
          "fixed order",
      .dtypes = kFloating,
      .samples = layer_norm_samples,
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"shape_mismatch",
                 {s::varied({2, 3}, kFloat32, 2.0, 1),
                  s::positive({4}, kFloat32, 2),
                  s::varied({4}, kFloat32, 2.0, 3)},
                 s::call3([](auto& x, auto& w, auto& b) {
                   return layer_norm(x, {4}, w, b);
                 })},
                {"weight_shape",
                 {s::varied({2, 3}, kFloat32, 2.0, 1),
                  s::positive({2}, kFloat32, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 s::call3([](auto& x, auto& w, auto& b) {
                   return layer_norm(x, {3}, w, b);
                 })},
            };
          },
      .grad_fn = "NativeLayerNormBackward0",
  });
  register_op({
      .name = "group_norm",
      .family = "normalization",
      .callables =
          {"ditto::group_norm(input, num_groups, weight, bias, eps, "
           "cudnn_enabled)",
           "ditto::nn::functional::group_norm(...)"},
      .deterministic_because =
          "composed of mean, elementwise ops and sqrt: means that add in a "
          "fixed order",
      .dtypes = kFloating,
      .samples = group_norm_samples,
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"groups_do_not_divide",
                 {s::varied({2, 6, 3}, kFloat32, 2.0, 1),
                  s::positive({6}, kFloat32, 2),
                  s::varied({6}, kFloat32, 2.0, 3)},
                 s::call3([](auto& x, auto& w, auto& b) {
                   return group_norm(x, 4, w, b);
                 })},
                {"one_dim_input",
                 {s::varied({6}, kFloat32, 2.0, 1),
                  s::positive({6}, kFloat32, 2),
                  s::varied({6}, kFloat32, 2.0, 3)},
                 s::call3([](auto& x, auto& w, auto& b) {
                   return group_norm(x, 2, w, b);
                 })},
            };
          },
      .grad_fn = "NativeGroupNormBackward0",
  });

  register_op({
      .name = "normalize",
      .family = "normalization",
      .callables =
          {"ditto::nn::functional::normalize(x, dim, eps)",
           "ditto::nn::functional::normalize(x, p, dim, eps)",
           "ditto::nn::functional::normalize(x, options)"},
      .deterministic_because =
          "composed of elementwise ops and a sum along dim that adds in a "
          "fixed order",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 5);
            Tensor m = s::varied({r, c}, dt, 6.0, 1);
            Tensor t3 = s::varied(
                {s::size(spec, 8, 2),
                 s::size(spec, 33, 3),
                 s::size(spec, 45, 4)},
                dt,
                6.0,
                2);
            auto along = [](int64_t d) {
              return s::call1([d](const Tensor& x) { return normalize(x, d); });
            };
            std::vector<Sample> out = {
                {"rows", {m}, along(1)},
                {"columns", {m}, along(0)},
                {"strided", {s::strided(m)}, along(-1)},
                {"middle_dim", {t3}, along(1)},
                {"empty", {s::varied({0, c}, dt, 1.0, 3)}, along(1)},
            };
            if (!spec.small) {
              out.push_back(
                  {"long_rows", {s::varied({3, 40000}, dt, 6.0, 4)}, along(1)});
            }
            return out;
          },
      .bad_samples =
          [] {
            return std::vector{s::undefined_input(
                s::call1([](const Tensor& x) { return normalize(x); }), 1)};
          },
  });
}

} // namespace ditto::nn::functional
