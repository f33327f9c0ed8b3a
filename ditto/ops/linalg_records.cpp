// The records of the matrix products (linalg.cpp), the convolutions and
// their public backward ops (conv.cpp) and the decompositions (decomp.cpp)
// (Note [Op records] in record.cpp).

#include "ditto/core/generator.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/decomp.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;

const std::vector<Dtype> kFloating = {kFloat32, kFloat64};

// The split-K path of every product (Note [Split-K] in linalg.cpp): mm,
// bmm (of one batch), matmul, addmm and linear run it, so each record holds
// it, the same entry declared with the same texts.
const NondeterministicPath kSplitK = {
    .entry = "matmul (split-K)",
    .reason =
        "the fast variant adds the partial products of the k chunks into the "
        "output in whatever order threads finish them (outputs of at most 2 "
        "tiles with k >= 16384)",
};
const char* kGemm =
    "each output tile is computed whole by one thread, its k loop in a fixed "
    "order; under the deterministic mode the split-K partials are added in "
    "chunk order";

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

Tensor values(const Shape& shape, Dtype dt, uint64_t seed) {
  return s::varied(shape, dt, 2.0, seed);
}

// [m, k] @ [k, n] with k past the split-K threshold and an output of one
// tile: cheap (about 1M multiply-adds) and split into 5 chunks.
constexpr int64_t kSplitM = 9, kSplitKDepth = 16411, kSplitN = 7;

// ---- convolutions

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
    Tensor x = values(c.input, spec.dtype, seed++);
    Tensor w = values(c.weight, spec.dtype, seed++);
    Tensor b = c.bias ? values({c.weight[0]}, spec.dtype, seed++) : Tensor();
    out.push_back(
        {c.label, {x, w, b}, [fn, args](const std::vector<Tensor>& in) {
           return std::vector<Tensor>{fn(in[0], in[1], in[2], args)};
         }});
  }
  const ConvCase& c = cases.front();
  ConvArgs args = c.args;
  out.push_back(
      {"no_bias",
       {values(c.input, spec.dtype, seed),
        values(c.weight, spec.dtype, seed + 1),
        Tensor()},
       [fn, args](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{fn(in[0], in[1], in[2], args)};
       }});
  // A non-contiguous input.
  out.push_back(
      {"strided",
       {s::strided(values(c.input, spec.dtype, seed)),
        values(c.weight, spec.dtype, seed + 1),
        values({c.weight[0]}, spec.dtype, seed + 2)},
       [fn, args](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{fn(in[0], in[1], in[2], args)};
       }});
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
    Tensor go = values(out_shape(c), spec.dtype, seed++);
    Tensor other = values(weight_grad ? c.input : c.weight, spec.dtype, seed++);
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
       {s::strided(values(out_shape(c), spec.dtype, seed)),
        s::strided(
            values(weight_grad ? c.input : c.weight, spec.dtype, seed + 1))},
       [fn, sizes, args](const std::vector<Tensor>& in) {
         return std::vector<Tensor>{fn(in[0], in[1], sizes, args)};
       }});
  return out;
}

void conv_records() {
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
    Shape x = {1, 4}, w = {2, 4}, wg = {2, 3};
    for (int k = 0; k < spatial; ++k) {
      x.push_back(5);
      w.push_back(2);
      wg.push_back(2);
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
          s::varied(
              spatial == 2 ? Shape{2, 4, 7, 7} : Shape{2, 4, 7},
              kFloat32,
              2.0,
              2),
          b},
         call(args)},
        s::undefined_input(call(args), 3),
    };
  };
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
      }) {
    const bool wg = b.weight_grad;
    const int spatial = b.spatial;
    ConvBackwardFn fn = b.fn;
    register_op({
        .name = b.name,
        .family = "conv",
        .callables = {b.callable},
        .deterministic_because = wg
            ? "the default algorithm sums the partials of fixed chunks of "
              "samples in chunk order (the fast one only by benchmark mode or "
              "a forced choice)"
            : kConv,
        .nondeterministic = wg ? std::vector{kConvBackwardWeight}
                               : std::vector<NondeterministicPath>{},
        .dtypes = kFloating,
        .samples =
            [fn, wg, spatial](const SampleSpec& spec) {
              return conv_backward_samples(
                  spec,
                  spatial == 2 ? conv2d_cases(spec.small)
                               : conv1d_cases(spec.small),
                  wg,
                  fn);
            },
        .bad_samples =
            [fn, wg, spatial, bwd_bad] { return bwd_bad(fn, wg, spatial); },
        .not_differentiable = kNoBackward,
    });
  }
}

// ---- decompositions

void decomp_records() {
  const char* kNone = "no derivative is implemented for the decompositions";
  const char* kSerial =
      "one thread runs the factorization's loops in a fixed order";
  auto check_bad = [](s::Call call) {
    return std::vector<Sample>{
        {"3d", {s::varied({2, 3, 3}, kFloat32, 2.0, 1)}, call},
        {"int", {s::varied({3, 3}, kInt64, 20.0, 1)}, call},
        s::undefined_input(call, 1),
    };
  };
  register_op({
      .name = "linalg::qr",
      .family = "linalg",
      .callables = {"ditto::linalg::qr(a)"},
      .deterministic_because = kSerial,
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            auto call = [](const std::vector<Tensor>& in) {
              auto [q, r] = linalg::qr(in[0]);
              return std::vector<Tensor>{q, r};
            };
            const Dtype dt = spec.dtype;
            return std::vector<Sample>{
                {"tall",
                 {values({s::size(spec, 301, 5), s::size(spec, 37, 3)}, dt, 1)},
                 call},
                {"square",
                 {values({s::size(spec, 45, 4), s::size(spec, 45, 4)}, dt, 2)},
                 call},
                {"strided",
                 {s::strided(values(
                     {s::size(spec, 97, 6), s::size(spec, 29, 4)}, dt, 3))},
                 call},
            };
          },
      .bad_samples =
          [check_bad] {
            s::Call call = [](const std::vector<Tensor>& in) {
              auto [q, r] = linalg::qr(in[0]);
              return std::vector<Tensor>{q, r};
            };
            std::vector<Sample> out = check_bad(call);
            out.push_back(
                {"wide", {s::varied({3, 5}, kFloat32, 2.0, 1)}, call});
            return out;
          },
      .not_differentiable = kNone,
  });
  auto svd_call = [](const std::vector<Tensor>& in) {
    linalg::SVD r = linalg::svd(in[0]);
    return std::vector<Tensor>{r.U, r.S, r.V};
  };
  register_op({
      .name = "linalg::svd",
      .family = "linalg",
      .callables = {"ditto::linalg::svd(a)"},
      .deterministic_because = kSerial,
      .dtypes = kFloating,
      .samples =
          [svd_call](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            return std::vector<Sample>{
                {"tall",
                 {values({s::size(spec, 203, 5), s::size(spec, 29, 3)}, dt, 1)},
                 svd_call},
                {"wide",
                 {values({s::size(spec, 23, 3), s::size(spec, 151, 5)}, dt, 2)},
                 svd_call},
                {"strided",
                 {s::strided(values(
                     {s::size(spec, 61, 4), s::size(spec, 17, 4)}, dt, 3))},
                 svd_call},
            };
          },
      .bad_samples = [svd_call, check_bad] { return check_bad(svd_call); },
      .not_differentiable = kNone,
  });
  auto lowrank = [](int64_t q, int64_t niter) -> s::Call {
    return [q, niter](const std::vector<Tensor>& in) {
      linalg::SVD r =
          linalg::svd_lowrank(in[0], q, niter, Generator::philox(13));
      return std::vector<Tensor>{r.U, r.S, r.V};
    };
  };
  register_op({
      .name = "linalg::svd_lowrank",
      .family = "linalg",
      .callables = {"ditto::linalg::svd_lowrank(a, q, niter, generator)"},
      .deterministic_because =
          "its draws come from the given generator and its products, QR and "
          "SVD are deterministic",
      .dtypes = kFloating,
      .samples =
          [lowrank](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            return std::vector<Sample>{
                {"tall",
                 {values({s::size(spec, 211, 6), s::size(spec, 47, 4)}, dt, 1)},
                 lowrank(3, 2)},
                {"wide",
                 {values({s::size(spec, 37, 4), s::size(spec, 173, 6)}, dt, 2)},
                 lowrank(3, 1)},
                {"strided",
                 {s::strided(values(
                     {s::size(spec, 67, 5), s::size(spec, 31, 5)}, dt, 3))},
                 lowrank(2, 0)},
            };
          },
      .bad_samples =
          [lowrank, check_bad] {
            std::vector<Sample> out = check_bad(lowrank(1, 1));
            out.push_back(
                {"q_too_large",
                 {s::varied({5, 3}, kFloat32, 2.0, 1)},
                 lowrank(4, 1)});
            out.push_back(
                {"q_zero",
                 {s::varied({5, 3}, kFloat32, 2.0, 1)},
                 lowrank(0, 1)});
            out.push_back(
                {"negative_niter",
                 {s::varied({5, 3}, kFloat32, 2.0, 1)},
                 lowrank(2, -1)});
            return out;
          },
      .not_differentiable = kNone,
  });
}

} // namespace

DITTO_OP_RECORDS(linalg) {
  // ---- products

  auto product_bad = [](s::Fn2 fn) {
    return std::vector<Sample>{
        {"inner_mismatch",
         {s::varied({3, 4}, kFloat32, 2.0, 1),
          s::varied({5, 2}, kFloat32, 2.0, 2)},
         s::call2(fn)},
        {"dtype_mismatch",
         {s::varied({3, 4}, kFloat32, 2.0, 1),
          s::varied({4, 2}, kFloat64, 2.0, 2)},
         s::call2(fn)},
        {"int",
         {s::varied({3, 4}, kInt64, 20.0, 1),
          s::varied({4, 2}, kInt64, 20.0, 2)},
         s::call2(fn)},
        s::undefined_input(s::call2(fn), 2),
    };
  };

  register_op({
      .name = "mm",
      .family = "linalg",
      .callables = s::callables("ditto::mm(a, b)", "Tensor::mm(b)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return mm(a, b); });
            const int64_t m = s::size(spec, 70, 3), k = s::size(spec, 300, 4),
                          n = s::size(spec, 45, 5);
            Tensor a = values({m, k}, dt, 1), b = values({k, n}, dt, 2);
            std::vector<Sample> out = {
                {"matrix", {a, b}, call},
                {"transposed_b", {a, s::strided(b)}, call},
                {"transposed_a", {s::strided(a), b}, call},
                {"empty_k",
                 {values({m, 0}, dt, 3), values({0, n}, dt, 4)},
                 call},
                {"empty_m", {values({0, k}, dt, 5), b}, call},
            };
            if (!spec.small) {
              // Several row bands and column tiles.
              out.push_back(
                  {"tiles",
                   {values({211, 31}, dt, 6), values({31, 290}, dt, 7)},
                   call});
              out.push_back(
                  {"split_k",
                   {values({kSplitM, kSplitKDepth}, dt, 8),
                    values({kSplitKDepth, kSplitN}, dt, 9)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [product_bad] {
            std::vector<Sample> out = product_bad(
                [](const Tensor& a, const Tensor& b) { return mm(a, b); });
            out.push_back(
                {"3d",
                 {s::varied({2, 3, 4}, kFloat32, 2.0, 1),
                  s::varied({4, 2}, kFloat32, 2.0, 2)},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return mm(a, b);
                 })});
            return out;
          },
  });

  register_op({
      .name = "bmm",
      .family = "linalg",
      .callables = s::callables("ditto::bmm(a, b)", "Tensor::bmm(b)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return bmm(a, b); });
            const int64_t bs = s::size(spec, 3, 2), m = s::size(spec, 70, 3),
                          k = s::size(spec, 100, 4), n = s::size(spec, 45, 2);
            Tensor a = values({bs, m, k}, dt, 1), b = values({bs, k, n}, dt, 2);
            std::vector<Sample> out = {
                {"batch", {a, b}, call},
                {"transposed_b", {a, s::strided(b)}, call},
                {"transposed_a", {s::strided(a), b}, call},
                {"empty_batch",
                 {values({0, m, k}, dt, 3), values({0, k, n}, dt, 4)},
                 call},
            };
            if (!spec.small) {
              out.push_back(
                  {"split_k_one_batch",
                   {values({1, kSplitM, kSplitKDepth}, dt, 5),
                    values({1, kSplitKDepth, kSplitN}, dt, 6)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [] {
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return bmm(a, b); });
            return std::vector<Sample>{
                {"batch_mismatch",
                 {s::varied({2, 3, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 4, 2}, kFloat32, 2.0, 2)},
                 call},
                {"2d",
                 {s::varied({3, 4}, kFloat32, 2.0, 1),
                  s::varied({4, 2}, kFloat32, 2.0, 2)},
                 call},
                s::undefined_input(call, 2),
            };
          },
  });

  register_op({
      .name = "matmul",
      .family = "linalg",
      .callables = s::callables("ditto::matmul(a, b)", "Tensor::matmul(b)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = s::call2(
                [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
            const bool small = spec.small;
            const int64_t m = small ? 3 : 70, k = small ? 4 : 300,
                          n = small ? 2 : 45;
            Tensor a = values({m, k}, dt, 1), b = values({k, n}, dt, 2);
            std::vector<Sample> out = {
                {"matrix", {a, b}, call},
                {"transposed_b", {a, s::strided(b)}, call},
                {"dot", {values({k}, dt, 3), values({k}, dt, 4)}, call},
                {"vector_matrix", {values({k}, dt, 5), b}, call},
                {"matrix_vector", {a, values({k}, dt, 6)}, call},
                // Batch dims broadcast both ways: [2, 1] with [3].
                {"broadcast_batch",
                 {values({2, 1, small ? 2 : 30, small ? 3 : 40}, dt, 7),
                  values({3, small ? 3 : 40, small ? 2 : 20}, dt, 8)},
                 call},
                {"batch_matrix", {values({2, m, k}, dt, 9), b}, call},
                {"empty", {values({0, k}, dt, 10), b}, call},
            };
            if (!spec.small) {
              out.push_back(
                  {"split_k",
                   {values({kSplitM, kSplitKDepth}, dt, 11),
                    values({kSplitKDepth, kSplitN}, dt, 12)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [product_bad] {
            std::vector<Sample> out = product_bad(
                [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
            out.push_back(
                {"batch_not_broadcastable",
                 {s::varied({2, 3, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 4, 2}, kFloat32, 2.0, 2)},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return matmul(a, b);
                 })});
            return out;
          },
  });

  register_op({
      .name = "addmm",
      .family = "linalg",
      .callables = s::callables(
          "ditto::addmm(input, a, b, beta, alpha)",
          "Tensor::addmm(a, b, beta, alpha)"),
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call = [](double beta, double alpha) {
              return s::call3(
                  [=](const Tensor& i, const Tensor& a, const Tensor& b) {
                    return addmm(i, a, b, beta, alpha);
                  });
            };
            const int64_t m = s::size(spec, 70, 3), k = s::size(spec, 300, 4),
                          n = s::size(spec, 45, 5);
            Tensor a = values({m, k}, dt, 1), b = values({k, n}, dt, 2);
            std::vector<Sample> out = {
                {"row_bias", {values({n}, dt, 3), a, b}, call(1, 1)},
                {"full_input", {values({m, n}, dt, 4), a, b}, call(0.5, 2)},
                {"column_input",
                 {values({m, 1}, dt, 5), s::strided(a), b},
                 call(1, -1)},
                {"transposed_b",
                 {values({n}, dt, 6), a, s::strided(b)},
                 call(2, 1)},
                // beta = 0: input is not read (nor differentiated).
                {"beta_zero", {values({m, n}, dt, 7), a, b}, call(0, 1), {0}},
                {"empty_k",
                 {values({n}, dt, 8),
                  values({m, 0}, dt, 9),
                  values({0, n}, dt, 10)},
                 call(1, 1)},
            };
            if (!spec.small) {
              out.push_back(
                  {"split_k",
                   {values({kSplitN}, dt, 11),
                    values({kSplitM, kSplitKDepth}, dt, 12),
                    values({kSplitKDepth, kSplitN}, dt, 13)},
                   call(1, 1)});
            }
            return out;
          },
      .bad_samples =
          [] {
            auto call =
                s::call3([](const Tensor& i, const Tensor& a, const Tensor& b) {
                  return addmm(i, a, b);
                });
            return std::vector<Sample>{
                {"input_not_broadcastable",
                 {s::varied({3}, kFloat32, 2.0, 1),
                  s::varied({2, 4}, kFloat32, 2.0, 2),
                  s::varied({4, 5}, kFloat32, 2.0, 3)},
                 call},
                {"input_dtype",
                 {s::varied({5}, kFloat64, 2.0, 1),
                  s::varied({2, 4}, kFloat32, 2.0, 2),
                  s::varied({4, 5}, kFloat32, 2.0, 3)},
                 call},
                {"inner_mismatch",
                 {s::varied({5}, kFloat32, 2.0, 1),
                  s::varied({2, 4}, kFloat32, 2.0, 2),
                  s::varied({3, 5}, kFloat32, 2.0, 3)},
                 call},
                s::undefined_input(call, 3),
            };
          },
  });

  register_op({
      .name = "linear",
      .family = "linalg",
      .callables = {"ditto::linear(x, weight, bias)"},
      .deterministic_because = kGemm,
      .nondeterministic = {kSplitK},
      .dtypes = kFloating,
      .samples =
          [](const SampleSpec& spec) {
            const Dtype dt = spec.dtype;
            auto call =
                s::call3([](const Tensor& x, const Tensor& w, const Tensor& b) {
                  return linear(x, w, b);
                });
            const bool small = spec.small;
            const int64_t m = small ? 3 : 70, k = small ? 4 : 300,
                          n = small ? 2 : 45;
            Tensor x = values({m, k}, dt, 1), w = values({n, k}, dt, 2);
            Tensor b = values({n}, dt, 3);
            std::vector<Sample> out = {
                {"matrix", {x, w, b}, call},
                {"batch", {values({2, m, k}, dt, 4), w, b}, call},
                {"vector", {values({k}, dt, 5), w, b}, call},
                {"strided_weight", {x, s::strided(w), b}, call},
                {"empty", {values({0, k}, dt, 6), w, b}, call},
            };
            out.push_back({"no_bias", {x, w, Tensor()}, call});
            if (!spec.small) {
              out.push_back(
                  {"split_k",
                   {values({kSplitM, kSplitKDepth}, dt, 7),
                    values({kSplitN, kSplitKDepth}, dt, 8),
                    values({kSplitN}, dt, 9)},
                   call});
            }
            return out;
          },
      .bad_samples =
          [] {
            auto call =
                s::call3([](const Tensor& x, const Tensor& w, const Tensor& b) {
                  return linear(x, w, b);
                });
            return std::vector<Sample>{
                {"in_features_mismatch",
                 {s::varied({2, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 5}, kFloat32, 2.0, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 call},
                {"bias_size",
                 {s::varied({2, 4}, kFloat32, 2.0, 1),
                  s::varied({3, 4}, kFloat32, 2.0, 2),
                  s::varied({4}, kFloat32, 2.0, 3)},
                 call},
                {"3d_weight",
                 {s::varied({2, 4}, kFloat32, 2.0, 1),
                  s::varied({1, 3, 4}, kFloat32, 2.0, 2),
                  s::varied({3}, kFloat32, 2.0, 3)},
                 call},
                s::undefined_input(call, 3),
            };
          },
  });

  conv_records();
  decomp_records();
}

} // namespace ditto
