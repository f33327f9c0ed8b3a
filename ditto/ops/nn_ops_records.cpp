// The records of the NN ops: softmax, nll_loss, pooling, normalization,
// interpolation, grid sampling, embedding, conv_transpose2d, erfinv and the
// recurrent layers' ops (Note [Op records] in record.cpp).

#include <cstring>

#include "ditto/nn/functional.h"
#include "ditto/ops/detail/nn_records.h"
#include "ditto/ops/detail/rnn_ops.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/nn_ops.h"
#include "ditto/ops/record.h"

namespace ditto {

namespace detail {

std::vector<NondeterministicPath> pad_backward_paths() {
  const char* reason =
      "adds the output gradient into the input gradient with index_add_ "
      "(see its entry)";
  return {
      {.entry = "reflection_pad2d_backward", .reason = reason},
      {.entry = "replication_pad2d_backward", .reason = reason},
  };
}

} // namespace detail

namespace {

namespace s = detail::samples;

const std::vector<Dtype> kFloating = {kFloat32, kFloat64};

// Note [Plane scatters] in scatter_engine.h.
const char* kPlanes =
    "with fewer N x C planes than threads, the fast variant splits each "
    "plane's output positions between threads, which add into the input "
    "gradient with atomic adds in whatever order they get there (with as "
    "many planes as threads or more it runs the deterministic loop)";

NondeterministicPath plane_path(const char* entry, std::string cost = {}) {
  return {.entry = entry, .reason = kPlanes, .cost = std::move(cost)};
}

const char* kMaxPoolCost =
    "1.06x the fast variant's time (32 x 64 x 56 x 56, 2 threads)";

// A copy of t made without an op (the call's own running statistics, fresh
// for every call, show no other op in the trace).
// t is contiguous.
Tensor fresh(const Tensor& t) {
  Tensor out = detail::new_tensor(t.sizes(), t.dtype());
  std::memcpy(
      out.raw_data(), t.raw_data(), size_t(t.numel() * t.element_size()));
  return out;
}

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

// ---- pooling

// An (N, C, H, W) input, a 3-d one, and a single plane (fewer planes than
// threads: the backward's fast variant differs there).
struct PoolInputs {
  Tensor x, x3, plane;
};

PoolInputs pool_inputs(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  return {
      s::varied(
          {s::size(spec, 4, 1),
           s::size(spec, 8, 2),
           s::size(spec, 61, 5),
           s::size(spec, 53, 5)},
          dt,
          8.0,
          1),
      s::varied(
          {s::size(spec, 6, 2), s::size(spec, 37, 4), s::size(spec, 43, 5)},
          dt,
          8.0,
          2),
      s::varied(
          {1, 1, s::size(spec, 151, 6), s::size(spec, 149, 5)}, dt, 8.0, 3),
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

std::vector<Sample> pool_bad_samples(s::Fn1 fn) {
  return {
      s::undefined_input(s::call1(fn), 1),
      {"2d_input", {s::varied({5, 5}, kFloat32, 2.0, 1)}, s::call1(fn)},
      {"integer_input",
       {s::varied({1, 2, 5, 5}, kInt64, 20.0, 1)},
       s::call1(fn)},
      {"empty_plane",
       {s::varied({1, 2, 0, 5}, kFloat32, 1.0, 1)},
       s::call1(fn)},
  };
}

// ---- normalization

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
      {"last_dim", {m, w, b}, over({c})},
      {"last_two_dims", {x3, w2, b2}, over({h, wd})},
      {"strided", {s::strided(m), w, b}, over({c})},
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

// ---- interpolation

std::vector<Sample> upsample_samples(const SampleSpec& spec, bool bilinear) {
  const Dtype dt = spec.dtype;
  Tensor x = s::varied(
      {s::size(spec, 4, 1),
       s::size(spec, 8, 2),
       s::size(spec, 37, 3),
       s::size(spec, 29, 4)},
      dt,
      8.0,
      1);
  Tensor plane =
      s::varied({1, 1, s::size(spec, 97, 4), s::size(spec, 89, 5)}, dt, 8.0, 2);
  const InterpolateMode mode =
      bilinear ? InterpolateMode::Bilinear : InterpolateMode::Nearest;
  auto to = [](int64_t oh, int64_t ow, InterpolateMode m, bool align) {
    return s::call1(
        [=](const Tensor& t) { return upsample2d(t, oh, ow, m, align); });
  };
  auto scaled = [mode](std::vector<double> f, bool align) {
    return s::call1([=](const Tensor& t) {
      nn::functional::InterpolateOptions o;
      o.scale_factor(f).mode(mode);
      if (align) {
        o.align_corners(true);
      }
      return nn::functional::interpolate(t, o);
    });
  };
  const int64_t uh = s::size(spec, 75, 5), uw = s::size(spec, 61, 7);
  std::vector<Sample> out = {
      {"up", {x}, to(uh, uw, mode, false)},
      {"down",
       {x},
       to(s::size(spec, 17, 2), s::size(spec, 13, 3), mode, false)},
      {"scale_factor", {x}, scaled({2.5, 1.5}, false)},
      {"strided", {s::strided(x)}, to(uh, uw, mode, false)},
      {"one_plane",
       {plane},
       to(s::size(spec, 150, 7), s::size(spec, 130, 9), mode, false)},
  };
  if (bilinear) {
    out.push_back({"align_corners", {x}, to(uh, uw, mode, true)});
    out.push_back(
        {"align_corners_down",
         {x},
         to(s::size(spec, 17, 2), s::size(spec, 13, 1), mode, true)});
  } else {
    out.push_back(
        {"nearest_exact",
         {x},
         to(uh, uw, InterpolateMode::NearestExact, false)});
  }
  return out;
}

std::vector<Sample> upsample_bad_samples(InterpolateMode mode) {
  auto to = [mode](int64_t oh, int64_t ow) {
    return s::call1(
        [=](const Tensor& t) { return upsample2d(t, oh, ow, mode); });
  };
  return {
      s::undefined_input(to(4, 4), 1),
      {"3d_input", {s::varied({2, 3, 3}, kFloat32, 2.0, 1)}, to(4, 4)},
      {"zero_output", {s::varied({1, 2, 3, 3}, kFloat32, 2.0, 1)}, to(0, 4)},
      {"integer_input", {s::varied({1, 2, 3, 3}, kInt64, 20.0, 1)}, to(4, 4)},
  };
}

// ---- grid sampling

std::vector<Sample> grid_sample_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t n = s::size(spec, 2, 1);
  Tensor in = s::varied(
      {n, s::size(spec, 5, 2), s::size(spec, 37, 4), s::size(spec, 41, 5)},
      dt,
      8.0,
      1);
  const int64_t ho = s::size(spec, 29, 3), wo = s::size(spec, 31, 2);
  Tensor grid = s::varied({n, ho, wo, 2}, dt, 1.9, 2);
  Tensor wide = s::varied({n, ho, wo, 2}, dt, 2.6, 3);
  Tensor plane =
      s::varied({1, 1, s::size(spec, 53, 4), s::size(spec, 47, 3)}, dt, 8.0, 4);
  Tensor plane_grid =
      s::varied({1, s::size(spec, 97, 3), s::size(spec, 89, 3), 2}, dt, 1.9, 5);
  auto gs = [](GridSampleMode m, GridSamplePadding p, bool align) {
    return s::call2([=](const Tensor& x, const Tensor& g) {
      return grid_sample(x, g, m, p, align);
    });
  };
  const auto bil = GridSampleMode::Bilinear;
  const auto zeros = GridSamplePadding::Zeros;
  return {
      {"bilinear_zeros", {in, grid}, gs(bil, zeros, false)},
      {"bilinear_border_align",
       {in, wide},
       gs(bil, GridSamplePadding::Border, true)},
      {"bilinear_reflection",
       {in, wide},
       gs(bil, GridSamplePadding::Reflection, false)},
      {"nearest", {in, grid}, gs(GridSampleMode::Nearest, zeros, false)},
      {"strided", {s::strided(in), grid}, gs(bil, zeros, false)},
      {"one_plane", {plane, plane_grid}, gs(bil, zeros, true)},
  };
}

// ---- recurrent

std::vector<Sample> lstm_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t b = s::size(spec, 64, 3), h = s::size(spec, 300, 2);
  Tensor gates = s::varied({b, 4 * h}, dt, 6.0, 1);
  Tensor c = s::varied({b, h}, dt, 4.0, 2);
  s::Call call = [](const std::vector<Tensor>& in) {
    auto [h2, c2] = lstm_cell_gates(in[0], in[1]);
    return std::vector<Tensor>{h2, c2};
  };
  return {
      {"rows", {gates, c}, call},
      {"strided", {s::strided(gates), s::strided(c)}, call},
      {"empty",
       {s::varied({0, 4 * h}, dt, 1.0, 3), s::varied({0, h}, dt, 1.0, 4)},
       call},
  };
}

std::vector<Sample> gru_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t b = s::size(spec, 64, 3), h = s::size(spec, 300, 2);
  Tensor gi = s::varied({b, 3 * h}, dt, 6.0, 1);
  Tensor gh = s::varied({b, 3 * h}, dt, 6.0, 2);
  Tensor hh = s::varied({b, h}, dt, 2.0, 3);
  auto call = s::call3(
      [](auto& a, auto& g, auto& x) { return gru_cell_gates(a, g, x); });
  return {
      {"rows", {gi, gh, hh}, call},
      {"strided", {s::strided(gi), gh, s::strided(hh)}, call},
      {"empty",
       {s::varied({0, 3 * h}, dt, 1.0, 4),
        s::varied({0, 3 * h}, dt, 1.0, 5),
        s::varied({0, h}, dt, 1.0, 6)},
       call},
  };
}

std::vector<Sample> split_rows_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t a = s::size(spec, 300, 2), b = s::size(spec, 701, 5);
  Tensor x = s::varied({a + b, s::size(spec, 37, 3)}, dt, 8.0, 1);
  auto split = [](std::vector<int64_t> rows) {
    return [rows](const std::vector<Tensor>& in) {
      return split_rows(in[0], rows);
    };
  };
  return {
      {"blocks", {x}, split({a, 0, b})},
      {"strided", {s::strided(x)}, split({b, a})},
      {"one_block", {x}, split({a + b})},
      {"empty", {s::varied({0, 3}, dt, 1.0, 2)}, split({0, 0})},
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

  register_op({
      .name = "batch_norm",
      .family = "normalization",
      .callables =
          {"ditto::batch_norm(x, running_mean, running_var, weight, bias, "
           "training, momentum, eps)",
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
  });
  register_op({
      .name = "layer_norm",
      .family = "normalization",
      .callables =
          {"ditto::layer_norm(x, normalized_shape, weight, bias, eps)",
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
  });
  register_op({
      .name = "group_norm",
      .family = "normalization",
      .callables =
          {"ditto::group_norm(x, num_groups, weight, bias, eps)",
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
  });

  register_op({
      .name = "upsample_nearest2d",
      .family = "interpolation",
      .callables =
          {"ditto::upsample2d(x, out_h, out_w, InterpolateMode::Nearest)",
           "ditto::upsample2d(x, out_h, out_w, InterpolateMode::NearestExact)",
           "ditto::nn::functional::interpolate(x, options) (nearest modes)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("upsample_nearest2d_backward")},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) { return upsample_samples(spec, false); },
      .bad_samples =
          [] { return upsample_bad_samples(InterpolateMode::Nearest); },
  });
  register_op({
      .name = "upsample_bilinear2d",
      .family = "interpolation",
      .callables =
          {"ditto::upsample2d(x, out_h, out_w, InterpolateMode::Bilinear, "
           "align_corners)",
           "ditto::nn::functional::interpolate(x, options) (bilinear)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path("upsample_bilinear2d_backward")},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) { return upsample_samples(spec, true); },
      .bad_samples =
          [] { return upsample_bad_samples(InterpolateMode::Bilinear); },
  });

  register_op({
      .name = "grid_sample",
      .family = "interpolation",
      .callables =
          {"ditto::grid_sample(input, grid, mode, padding, "
           "align_corners)",
           "ditto::nn::functional::grid_sample(input, grid, options)"},
      .deterministic_because = {},
      .nondeterministic = {plane_path(
          "grid_sampler_2d_backward",
          "1.21x the fast variant's time (32 x 64 x 56 x 56, 2 threads)")},
      .dtypes = kFloating,
      .samples = grid_sample_samples,
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& x, const Tensor& g) {
              return grid_sample(x, g);
            });
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"batch_mismatch",
                 {s::varied({2, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat32, 1.0, 2)},
                 call},
                {"dtype_mismatch",
                 {s::varied({1, 1, 3, 3}, kFloat32, 2.0, 1),
                  s::varied({1, 2, 2, 2}, kFloat64, 1.0, 2)},
                 call},
            };
          },
  });
  register_op({
      .name = "affine_grid",
      .family = "interpolation",
      .callables =
          {"ditto::affine_grid(theta, size, align_corners)",
           "ditto::nn::functional::affine_grid(theta, size, "
           "align_corners)"},
      .deterministic_because =
          "one batched product with k = 3 (one fma chain per output element) "
          "of a base grid built elementwise",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 4, 2);
            Tensor theta = s::varied({n, 2, 3}, spec.dtype, 2.0, 1);
            auto grid = [n](int64_t h, int64_t w, bool align) {
              return s::call1([=](const Tensor& t) {
                return affine_grid(t, {n, 3, h, w}, align);
              });
            };
            const int64_t h = s::size(spec, 37, 3), w = s::size(spec, 41, 2);
            return std::vector<Sample>{
                {"grid", {theta}, grid(h, w, false)},
                {"align_corners", {theta}, grid(h, w, true)},
                {"one_row", {theta}, grid(1, w, false)},
            };
          },
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"theta_shape",
                 {s::varied({2, 3, 3}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& t) {
                   return affine_grid(t, {2, 1, 4, 4});
                 })},
                {"integer_theta",
                 {s::varied({2, 2, 3}, kInt64, 20.0, 1)},
                 s::call1([](const Tensor& t) {
                   return affine_grid(t, {2, 1, 4, 4});
                 })},
            };
          },
  });

  register_op({
      .name = "embedding",
      .family = "index",
      .callables =
          {"ditto::embedding(weight, indices, padding_idx)",
           "ditto::nn::functional::embedding(indices, weight, "
           "padding_idx)"},
      .deterministic_because = {},
      .nondeterministic = {{
          .entry = "embedding_backward",
          .reason = "adds the output gradient into the input gradient with "
                    "index_add_ (see its entry)",
      }},
      .dtypes = kFloating,
      // The trace shows weight alone: the indices are built here.
      .samples =
          [](const SampleSpec& spec) {
            const int64_t num = s::size(spec, 1000, 7),
                          dim = s::size(spec, 64, 4);
            Tensor w = s::varied({num, dim}, spec.dtype, 4.0, 1);
            const int64_t a = s::size(spec, 40, 2), b = s::size(spec, 50, 3);
            Tensor idx = s::indices(a * b, num, 2).reshape({a, b});
            Tensor few = s::indices(a * b, 3, 3);
            auto rows = [](Tensor i, std::optional<int64_t> pad) {
              return s::call1(
                  [i, pad](const Tensor& wt) { return embedding(wt, i, pad); });
            };
            return std::vector<Sample>{
                {"rows", {w}, rows(idx, std::nullopt)},
                // The padding row gets no gradient by design (PyTorch's
                // padding_idx), not the derivative: no gradcheck.
                {"padding_idx", {w}, rows(idx, 3), {}, false},
                {"strided", {s::strided(w)}, rows(idx, std::nullopt)},
                {"few_rows", {w}, rows(few, std::nullopt)},
                {"no_indices", {w}, rows(s::indices(0, num), std::nullopt)},
            };
          },
      .bad_samples =
          [] {
            Tensor w = s::varied({5, 3}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                {"float_indices", {w}, s::call1([](const Tensor& wt) {
                   return embedding(wt, s::varied({4}, kFloat32, 8.0, 2));
                 })},
                {"one_dim_weight",
                 {s::varied({5}, kFloat32, 2.0, 1)},
                 s::call1([](const Tensor& wt) {
                   return embedding(wt, s::indices(4, 5));
                 })},
                {"index_out_of_range", {w}, s::call1([](const Tensor& wt) {
                   return embedding(wt, tensor(std::vector<int64_t>{0, 5, 1}));
                 })},
            };
          },
  });

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
  });

  register_op({
      .name = "erfinv",
      .family = "elementwise",
      .callables = {"ditto::erfinv(x)"},
      .deterministic_because =
          "each output element is computed from its own input by one call, "
          "whatever the thread that runs it",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            return s::unary(
                spec,
                [](const Tensor& x) { return erfinv(x); },
                s::Domain::kUnit);
          },
      .bad_samples =
          [] {
            return std::vector{s::undefined_input(
                s::call1([](const Tensor& x) { return erfinv(x); }), 1)};
          },
  });

  const char* kRows =
      "each row is computed from its own inputs by one task, whatever the "
      "thread that runs it";
  register_op({
      .name = "lstm_cell_gates",
      .family = "rnn",
      .callables =
          {"ditto::lstm_cell_gates(gates, c)",
           "ditto::nn::LSTM, LSTMCell (each step)"},
      .deterministic_because = kRows,
      .dtypes = kFloating,
      .samples = lstm_samples,
      .bad_samples =
          [] {
            s::Call call = [](const std::vector<Tensor>& in) {
              auto [h, c] = lstm_cell_gates(in[0], in[1]);
              return std::vector<Tensor>{h, c};
            };
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"gates_not_4h",
                 {s::varied({2, 6}, kFloat32, 2.0, 1),
                  s::varied({2, 2}, kFloat32, 2.0, 2)},
                 call},
                {"c_shape",
                 {s::varied({2, 8}, kFloat32, 2.0, 1),
                  s::varied({3, 2}, kFloat32, 2.0, 2)},
                 call},
            };
          },
  });
  register_op({
      .name = "gru_cell_gates",
      .family = "rnn",
      .callables =
          {"ditto::gru_cell_gates(gi, gh, h)",
           "ditto::nn::GRU, GRUCell (each step)"},
      .deterministic_because = kRows,
      .dtypes = kFloating,
      .samples = gru_samples,
      .bad_samples =
          [] {
            auto call = s::call3([](auto& a, auto& g, auto& x) {
              return gru_cell_gates(a, g, x);
            });
            return std::vector<Sample>{
                s::undefined_input(call, 3),
                {"gh_shape",
                 {s::varied({2, 6}, kFloat32, 2.0, 1),
                  s::varied({2, 3}, kFloat32, 2.0, 2),
                  s::varied({2, 2}, kFloat32, 2.0, 3)},
                 call},
            };
          },
  });
  register_op({
      .name = "split_rows",
      .family = "rnn",
      .callables =
          {"ditto::split_rows(x, rows)",
           "ditto::nn::RNN, LSTM, GRU (the steps' rows)"},
      .deterministic_because = "each output element is copied from one input "
                               "element",
      .dtypes = {kFloat32, kFloat64, kInt64},
      .samples = split_rows_samples,
      .bad_samples =
          [] {
            return std::vector<Sample>{
                {"rows_do_not_sum",
                 {s::varied({5, 2}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& in) {
                   return split_rows(in[0], {2, 2});
                 }},
                {"negative_rows",
                 {s::varied({5, 2}, kFloat32, 2.0, 1)},
                 [](const std::vector<Tensor>& in) {
                   return split_rows(in[0], {7, -2});
                 }},
            };
          },
  });
  register_op({
      .name = "recurrent_step",
      .family = "rnn",
      .callables = {"ditto::nn::RNN, LSTM, GRU (each step: "
                    "detail::recurrent_step(input, h, w_t))"},
      .deterministic_because =
          "one addmm whose blocking depends on the shapes only (k is the "
          "hidden size, never split)",
      .dtypes = kFloating,
      // w_t is not differentiated (the carrier gives its gradient): it is
      // built here.
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t b = s::size(spec, 64, 3), r = s::size(spec, 100, 4),
                          g = s::size(spec, 400, 5);
            Tensor in = s::varied({b, g}, dt, 4.0, 1);
            Tensor h = s::varied({b, r}, dt, 2.0, 2);
            Tensor wt = s::varied({r, g}, dt, 1.0, 3);
            auto call = s::call2([wt](const Tensor& x, const Tensor& hh) {
              return detail::recurrent_step(x, hh, wt);
            });
            return std::vector<Sample>{
                {"step", {in, h}, call},
                {"strided", {s::strided(in), s::strided(h)}, call},
            };
          },
  });
  register_op({
      .name = "recurrent_weight_carrier",
      .family = "rnn",
      .callables = {"ditto::nn::RNN, LSTM, GRU (W_hh's gradient: "
                    "detail::recurrent_weight_carrier(base, weight, rows))"},
      .deterministic_because = "a copy of base",
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            const int64_t b = s::size(spec, 320, 3), g = s::size(spec, 400, 4),
                          r = s::size(spec, 100, 2);
            Tensor base = s::varied({b, g}, dt, 4.0, 1);
            Tensor w = s::varied({g, r}, dt, 1.0, 2);
            // weight's gradient is g^T *rows by design, not the derivative
            // of the copy: gradcheck leaves weight alone.
            s::Call call = [](const std::vector<Tensor>& in) {
              return std::vector<Tensor>{detail::recurrent_weight_carrier(
                  in[0], in[1], std::make_shared<Tensor>())};
            };
            return std::vector<Sample>{
                {"carrier", {base, w}, call, {1}},
                {"strided", {s::strided(base), w}, call, {1}},
            };
          },
  });
}

} // namespace ditto
