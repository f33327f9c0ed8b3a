// The records of the convolutions and their public backward ops (conv.cpp)
// (Note [Op records] in record.cpp).

#include "ditto/ops/conv.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;

using ::ditto::detail::samples::kFloating;

// conv2d_backward_weight's fast algorithm (chosen by benchmark mode or
// forced); conv1d_backward_weight runs conv2d_backward_weight.
const NondeterministicPath kConvBackwardWeight = {
    .entry = "conv2d_backward_weight",
    .reason =
        "the fast algorithm adds the weight-gradient partials of sample chunks "
        "into the gradient in whatever order threads finish them (also "
        "conv1d_backward_weight)",
    .cost =
        "0.96x the fast variant's time (batch 64, 32 to 64 channels, 14 x 14, "
        "2 threads)",
};

using ::ditto::detail::samples::unit_values;

struct ConvArgs {
  IntList stride, padding, dilation;
  int64_t groups = 1;
};

// A convolution case: input [n, c, h, w] (h absent for conv1d), weight
// [o, c / groups, kh, kw].
struct ConvCase {
  std::string label;
  Shape input, weight;
  ConvArgs args;
  bool bias = true;
};

// Output size along one dim.
int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

Shape out_shape(const ConvCase& c) {
  Shape out = {c.input[0], c.weight[0]};
  const size_t sp = c.input.size() - 2;
  for (size_t k = 0; k < sp; ++k) {
    out.push_back(out_size(
        c.input[2 + k],
        c.weight[2 + k],
        c.args.stride[k],
        c.args.padding[k],
        c.args.dilation[k]));
  }
  return out;
}

std::vector<ConvCase> conv2d_cases(bool small) {
  if (small) {
    return {
        {"basic", {2, 2, 4, 5}, {3, 2, 2, 2}, {{1, 1}, {0, 0}, {1, 1}, 1}},
        {"stride_padding",
         {1, 2, 5, 4},
         {2, 2, 3, 3},
         {{2, 1}, {1, 1}, {1, 1}, 1}},
        {"groups_dilation",
         {1, 4, 5, 5},
         {2, 2, 2, 2},
         {{1, 1}, {0, 1}, {2, 1}, 2}},
        {"pointwise", {2, 3, 3, 3}, {2, 3, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1}},
    };
  }
  return {
      // im2col GEMM, about 1M multiply-adds.
      {"basic", {4, 6, 23, 29}, {8, 6, 3, 3}, {{1, 1}, {0, 0}, {1, 1}, 1}},
      {"stride_padding",
       {3, 5, 31, 26},
       {7, 5, 3, 3},
       {{2, 1}, {1, 2}, {1, 1}, 1}},
      {"groups_dilation",
       {2, 8, 27, 25},
       {6, 4, 3, 2},
       {{1, 1}, {2, 1}, {2, 1}, 2}},
      // 1 x 1: the direct loop.
      {"pointwise",
       {3, 13, 37, 41},
       {5, 13, 1, 1},
       {{1, 1}, {0, 0}, {1, 1}, 1}},
      // 8 channels per group: backward_input's implicit GEMM.
      {"wide_channels",
       {2, 16, 19, 21},
       {9, 16, 3, 3},
       {{1, 1}, {1, 1}, {1, 1}, 1}},
      {"empty_batch", {0, 3, 5, 5}, {2, 3, 3, 3}, {{1, 1}, {0, 0}, {1, 1}, 1}},
  };
}

// The conv3d cases: unit strides (the implicit GEMM, and the direct tiles
// for float32 with 16 or more output channels; the input gradient as a
// flipped forward), strides and dilations (explicit columns), groups,
// padding past the kernel's reach (the input gradient's columns).
std::vector<ConvCase> conv3d_cases(bool small) {
  if (small) {
    return {
        {"basic",
         {2, 2, 3, 4, 3},
         {3, 2, 2, 2, 2},
         {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}},
        {"stride_padding_groups",
         {1, 4, 4, 3, 5},
         {2, 2, 2, 2, 3},
         {{2, 1, 2}, {1, 0, 1}, {1, 1, 1}, 2}},
        {"dilation_wide_padding",
         {1, 2, 3, 4, 4},
         {2, 2, 1, 2, 2},
         {{1, 1, 1}, {1, 2, 0}, {1, 2, 1}, 1}},
    };
  }
  return {
      {"basic",
       {2, 4, 6, 7, 5},
       {6, 4, 3, 3, 3},
       {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}},
      {"wide_channels",
       {2, 3, 5, 6, 7},
       {17, 3, 3, 2, 3},
       {{1, 1, 1}, {1, 0, 2}, {1, 1, 1}, 1}},
      {"stride_dilation_groups",
       {1, 4, 7, 6, 9},
       {6, 2, 2, 3, 2},
       {{2, 1, 3}, {1, 0, 2}, {1, 2, 1}, 2}},
      {"padding_past_reach",
       {2, 2, 4, 4, 4},
       {3, 2, 2, 2, 2},
       {{1, 1, 1}, {3, 3, 3}, {1, 1, 1}, 1}},
      {"empty_batch",
       {0, 2, 3, 3, 3},
       {2, 2, 2, 2, 2},
       {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}},
  };
}

// The conv1d cases: conv2d's over one row.
std::vector<ConvCase> conv1d_cases(bool small) {
  std::vector<ConvCase> out;
  for (ConvCase c : conv2d_cases(small)) {
    c.input = {c.input[0], c.input[1], c.input[3] * (small ? 1 : 7)};
    c.weight = {c.weight[0], c.weight[1], c.weight[3]};
    c.args = {
        {c.args.stride[1]},
        {c.args.padding[1]},
        {c.args.dilation[1]},
        c.args.groups};
    out.push_back(c);
  }
  return out;
}

using ConvFn = std::function<
    Tensor(const Tensor&, const Tensor&, const Tensor&, const ConvArgs&)>;

std::vector<Sample> conv_samples(
    const SampleSpec& spec,
    std::vector<ConvCase> cases,
    ConvFn fn) {
  std::vector<Sample> out;
  uint64_t seed = 1;
  for (const ConvCase& c : cases) {
    ConvArgs args = c.args;
    Tensor x = unit_values(c.input, spec.dtype, seed++);
    Tensor w = unit_values(c.weight, spec.dtype, seed++);
    Tensor b =
        c.bias ? unit_values({c.weight[0]}, spec.dtype, seed++) : Tensor();
    Sample sample{
        c.label, {x, w, b}, [fn, args](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{fn(in[0], in[1], in[2], args)};
        }};
    // R8: a batched input's samples are independent.
    if (c.input.size() == c.weight.size()) {
      sample.batch_inputs = {0};
    }
    out.push_back(std::move(sample));
  }
  const ConvCase& c = cases.front();
  ConvArgs args = c.args;
  const std::vector<int> batch = c.input.size() == c.weight.size()
      ? std::vector<int>{0}
      : std::vector<int>{};
  out.push_back(s::batched(
      {"no_bias",
       {unit_values(c.input, spec.dtype, seed),
        unit_values(c.weight, spec.dtype, seed + 1),
        Tensor()},
       [fn, args](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{fn(in[0], in[1], in[2], args)};
       }},
      batch));
  // A non-contiguous input.
  out.push_back(s::batched(
      {"strided",
       {s::strided(unit_values(c.input, spec.dtype, seed)),
        unit_values(c.weight, spec.dtype, seed + 1),
        unit_values({c.weight[0]}, spec.dtype, seed + 2)},
       [fn, args](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{fn(in[0], in[1], in[2], args)};
       }},
      batch));
  return out;
}

// The backward ops: grad_out and weight (backward_input) or input
// (backward_weight), sizes of the other.
using ConvBackwardFn = std::function<
    Tensor(const Tensor&, const Tensor&, const Shape&, const ConvArgs&)>;

std::vector<Sample> conv_backward_samples(
    const SampleSpec& spec,
    std::vector<ConvCase> cases,
    bool weight_grad,
    ConvBackwardFn fn) {
  std::vector<Sample> out;
  uint64_t seed = 1;
  for (const ConvCase& c : cases) {
    ConvArgs args = c.args;
    Tensor go = unit_values(out_shape(c), spec.dtype, seed++);
    Tensor other =
        unit_values(weight_grad ? c.input : c.weight, spec.dtype, seed++);
    Shape sizes = weight_grad ? c.weight : c.input;
    out.push_back(
        {c.label,
         {go, other},
         [fn, sizes, args](const std::vector<Tensor>& in) {
           return std::vector<Tensor>{fn(in[0], in[1], sizes, args)};
         }});
  }
  const ConvCase& c = cases.front();
  ConvArgs args = c.args;
  Shape sizes = weight_grad ? c.weight : c.input;
  out.push_back(
      {"strided",
       {s::strided(unit_values(out_shape(c), spec.dtype, seed)),
        s::strided(unit_values(
            weight_grad ? c.input : c.weight, spec.dtype, seed + 1))},
       [fn, sizes, args](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{fn(in[0], in[1], sizes, args)};
       }});
  return out;
}

} // namespace

DITTO_OP_RECORDS(conv) {
  const char* kConv =
      "every algorithm the heuristic, the tuning or a forced choice can pick "
      "is deterministic: each output element's sum runs in a fixed order on "
      "one thread";
  auto conv2d_fn =
      [](const Tensor& x, const Tensor& w, const Tensor& b, const ConvArgs& a) {
        return conv2d(x, w, b, a.stride, a.padding, a.dilation, a.groups);
      };
  auto conv1d_fn =
      [](const Tensor& x, const Tensor& w, const Tensor& b, const ConvArgs& a) {
        return conv1d(x, w, b, a.stride, a.padding, a.dilation, a.groups);
      };
  auto conv_bad = [](ConvFn fn, int spatial) {
    Shape x = {1, 4}, w = {2, 4}, wg = {2, 3}, big_kernel = {2, 4};
    for (int k = 0; k < spatial; ++k) {
      x.push_back(5);
      w.push_back(2);
      wg.push_back(2);
      big_kernel.push_back(7);
    }
    ConvArgs args = {
        IntList(size_t(spatial), 1),
        IntList(size_t(spatial), 0),
        IntList(size_t(spatial), 1),
        1};
    ConvArgs zero_stride = args;
    zero_stride.stride[0] = 0;
    auto call = [fn](ConvArgs a) {
      return s::call3(
          [fn, a](const Tensor& x, const Tensor& w, const Tensor& b) {
            return fn(x, w, b, a);
          });
    };
    Tensor b = s::varied({2}, kFloat32, 2.0, 3);
    return std::vector<Sample>{
        {"channels_mismatch",
         {s::varied(x, kFloat32, 2.0, 1), s::varied(wg, kFloat32, 2.0, 2), b},
         call(args)},
        {"zero_stride",
         {s::varied(x, kFloat32, 2.0, 1), s::varied(w, kFloat32, 2.0, 2), b},
         call(zero_stride)},
        {"dtype_mismatch",
         {s::varied(x, kFloat32, 2.0, 1), s::varied(w, kFloat64, 2.0, 2), b},
         call(args)},
        {"bias_size",
         {s::varied(x, kFloat32, 2.0, 1),
          s::varied(w, kFloat32, 2.0, 2),
          s::varied({3}, kFloat32, 2.0, 3)},
         call(args)},
        {"kernel_larger_than_input",
         {s::varied(x, kFloat32, 2.0, 1),
          s::varied(big_kernel, kFloat32, 2.0, 2),
          b},
         call(args)},
        s::undefined_input(call(args), 3),
    };
  };
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "conv2d",
        .family = "conv",
        .callables =
            {"ditto::conv2d(input, weight, bias, stride, padding, dilation, groups)"},
        .deterministic_because = kConv,
        .dtypes = kFloating,
        .samples =
            [conv2d_fn](const SampleSpec& spec) {
              return conv_samples(spec, conv2d_cases(spec.small), conv2d_fn);
            },
        .bad_samples = [conv2d_fn, conv_bad] { return conv_bad(conv2d_fn, 2); },
        .grad_fn = "ConvolutionBackward0",
    });
  }
  auto conv3d_fn =
      [](const Tensor& x, const Tensor& w, const Tensor& b, const ConvArgs& a) {
        return conv3d(x, w, b, a.stride, a.padding, a.dilation, a.groups);
      };
  register_op({
      .name = "conv3d",
      .family = "conv",
      .callables =
          {"ditto::conv3d(input, weight, bias, stride, padding, dilation, groups)"},
      .deterministic_because =
          "each output is one fma chain over (channel, kz, ky, kx) in order "
          "on one thread, whichever algorithm the shapes choose (Note "
          "[conv3d's one chain])",
      .dtypes = kFloating,
      .samples =
          [conv3d_fn](const SampleSpec& spec) {
            return conv_samples(spec, conv3d_cases(spec.small), conv3d_fn);
          },
      .bad_samples = [conv3d_fn, conv_bad] { return conv_bad(conv3d_fn, 3); },
      .grad_fn = "ConvolutionBackward0",
  });
  register_op({
      .name = "conv1d",
      .family = "conv",
      .callables =
          {"ditto::conv1d(input, weight, bias, stride, padding, dilation, groups)"},
      .deterministic_because = kConv,
      .dtypes = kFloating,
      .samples =
          [conv1d_fn](const SampleSpec& spec) {
            return conv_samples(spec, conv1d_cases(spec.small), conv1d_fn);
          },
      .bad_samples = [conv1d_fn, conv_bad] { return conv_bad(conv1d_fn, 1); },
      .grad_fn = "ConvolutionBackward0",
  });

  const char* kNoBackward =
      "a backward op itself: the gradient of a gradient is not implemented";
  auto bwd_bad = [](ConvBackwardFn fn, bool weight_grad, int spatial) {
    Shape x = {1, 4}, w = {2, 4}, go = {1, 2};
    for (int k = 0; k < spatial; ++k) {
      x.push_back(5);
      w.push_back(2);
      go.push_back(4);
    }
    ConvArgs args = {
        IntList(size_t(spatial), 1),
        IntList(size_t(spatial), 0),
        IntList(size_t(spatial), 1),
        1};
    Shape sizes = weight_grad ? w : x;
    Shape wrong_go = go;
    wrong_go.back() = 3;
    auto call = [fn, args](Shape sz) {
      return s::call2([fn, args, sz](const Tensor& g, const Tensor& o) {
        return fn(g, o, sz, args);
      });
    };
    Tensor other = s::varied(weight_grad ? x : w, kFloat32, 2.0, 2);
    return std::vector<Sample>{
        {"grad_out_shape",
         {s::varied(wrong_go, kFloat32, 2.0, 1), other},
         call(sizes)},
        {"dtype_mismatch",
         {s::varied(go, kFloat64, 2.0, 1), other},
         call(sizes)},
        s::undefined_input(call(sizes), 2),
    };
  };
  auto bwd_input_2d =
      [](const Tensor& g, const Tensor& w, const Shape& sz, const ConvArgs& a) {
        return conv2d_backward_input(
            g, w, sz, a.stride, a.padding, a.dilation, a.groups);
      };
  auto bwd_input_1d =
      [](const Tensor& g, const Tensor& w, const Shape& sz, const ConvArgs& a) {
        return conv1d_backward_input(
            g, w, sz, a.stride, a.padding, a.dilation, a.groups);
      };
  auto bwd_weight_2d =
      [](const Tensor& g, const Tensor& x, const Shape& sz, const ConvArgs& a) {
        return conv2d_backward_weight(
            g, x, sz, a.stride, a.padding, a.dilation, a.groups);
      };
  auto bwd_input_3d =
      [](const Tensor& g, const Tensor& w, const Shape& sz, const ConvArgs& a) {
        return conv3d_backward_input(
            g, w, sz, a.stride, a.padding, a.dilation, a.groups);
      };
  auto bwd_weight_3d =
      [](const Tensor& g, const Tensor& x, const Shape& sz, const ConvArgs& a) {
        return conv3d_backward_weight(
            g, x, sz, a.stride, a.padding, a.dilation, a.groups);
      };
  auto bwd_weight_1d =
      [](const Tensor& g, const Tensor& x, const Shape& sz, const ConvArgs& a) {
        return conv1d_backward_weight(
            g, x, sz, a.stride, a.padding, a.dilation, a.groups);
      };
  struct Bwd {
    const char* name;
    const char* callable;
    ConvBackwardFn fn;
    bool weight_grad;
    int spatial;
  };
  for (
      const Bwd& b : std::vector<Bwd>{
          {"conv2d_backward_input",
           "ditto::conv2d_backward_input(grad_out, weight, input_sizes, stride, "
           "padding, dilation, groups)",
           bwd_input_2d,
           false,
           2},
          {"conv1d_backward_input",
           "ditto::conv1d_backward_input(grad_out, weight, input_sizes, stride, "
           "padding, dilation, groups)",
           bwd_input_1d,
           false,
           1},
          {"conv2d_backward_weight",
           "ditto::conv2d_backward_weight(grad_out, input, weight_sizes, stride, "
           "padding, dilation, groups)",
           bwd_weight_2d,
           true,
           2},
          {"conv1d_backward_weight",
           "ditto::conv1d_backward_weight(grad_out, input, weight_sizes, stride, "
           "padding, dilation, groups)",
           bwd_weight_1d,
           true,
           1},
          {"conv3d_backward_input",
           "ditto::conv3d_backward_input(grad_out, weight, input_sizes, stride, "
           "padding, dilation, groups)",
           bwd_input_3d,
           false,
           3},
          {"conv3d_backward_weight",
           "ditto::conv3d_backward_weight(grad_out, input, weight_sizes, stride, "
           "padding, dilation, groups)",
           bwd_weight_3d,
           true,
           3},
      }) {
    const bool wg = b.weight_grad;
    const int spatial = b.spatial;
    ConvBackwardFn fn = b.fn;
    const char* why = spatial == 3
        ? (wg ? "each weight's gradient is one fma chain over (sample, z, y, "
                "x) in order on one thread (threads split the input channels, "
                "Note [conv3d's one chain])"
              : "each input element's gradient is a sum in a fixed order on "
                "one thread (Note [conv3d's one chain])")
        : wg ? "the default algorithm sums the partials of fixed chunks of "
               "samples in chunk order (the fast one only by benchmark mode "
               "or a forced choice)"
             : kConv;
    register_op({
        .name = b.name,
        .family = "conv",
        .callables = {b.callable},
        .deterministic_because = why,
        .nondeterministic = wg && spatial != 3
            ? std::vector{kConvBackwardWeight}
            : std::vector<NondeterministicPath>{},
        .dtypes = kFloating,
        .samples =
            [fn, wg, spatial](const SampleSpec& spec) {
              return conv_backward_samples(
                  spec,
                  spatial == 3       ? conv3d_cases(spec.small)
                      : spatial == 2 ? conv2d_cases(spec.small)
                                     : conv1d_cases(spec.small),
                  wg,
                  fn);
            },
        .bad_samples =
            [fn, wg, spatial, bwd_bad] { return bwd_bad(fn, wg, spatial); },
        .not_differentiable = kNoBackward,
        // the device's conv2d gradients
        .devices =
            spatial == 2 ? std::vector{kVulkan} : std::vector<DeviceType>{},
    });
  }
}

} // namespace ditto
