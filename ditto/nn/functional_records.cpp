// The records of the ops of ditto::nn::functional: activations, dropout2d,
// normalize, one_hot and the losses (Note [Op records] in
// ditto/ops/record.cpp). interpolate, pad_sequence, pack_padded_sequence
// and pad_packed_sequence have no frame of their own: the ops they call
// are theirs.

#include <algorithm>

#include "ditto/nn/functional.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto {
namespace {

namespace s = detail::samples;
namespace F = nn::functional;

const std::vector<Dtype> kFloating = {kFloat32, kFloat64};

const char* kComposedElementwise =
    "composed of elementwise ops: each output element is computed from its "
    "own inputs, whatever the thread that runs it";
const char* kComposedLoss =
    "composed of elementwise ops and a sum or mean that adds in a fixed "
    "order";

void activation(
    const char* name,
    const std::string& args,
    s::Fn1 fn,
    std::vector<Sample> (*samples)(const SampleSpec&) = nullptr) {
  register_op({
      .name = name,
      .family = "activation",
      .callables =
          {std::string("ditto::nn::functional::") + name + "(" + args + ")"},
      .deterministic_because = kComposedElementwise,
      .dtypes = kFloating,
      .samples =
          [fn, samples](const SampleSpec& spec) {
            return samples ? samples(spec) : s::unary(spec, fn);
          },
      .bad_samples =
          [fn] { return std::vector{s::undefined_input(s::call1(fn), 1)}; },
  });
}

// A loss of (input, target) of the same shape, both floating: each
// reduction, a non-contiguous input, zero-size.
using Loss2 = std::function<Tensor(const Tensor&, const Tensor&, Reduction)>;

std::vector<Sample> loss_samples(
    const SampleSpec& spec,
    Loss2 fn,
    s::Domain input_domain,
    s::Domain target_domain) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 211, 3), c = s::size(spec, 307, 4);
  Tensor x = s::in_domain({r, c}, dt, input_domain, 1);
  Tensor y = s::in_domain({r, c}, dt, target_domain, 2);
  auto with = [fn](Reduction red) {
    return s::call2(
        [fn, red](const Tensor& a, const Tensor& b) { return fn(a, b, red); });
  };
  std::vector<Sample> out = {
      {"mean", {x, y}, with(Reduction::Mean)},
      {"sum", {x, y}, with(Reduction::Sum)},
      {"none", {x, y}, with(Reduction::None)},
      {"strided", {s::strided(x), y}, with(Reduction::Mean)},
      {"empty",
       {s::in_domain({0, c}, dt, input_domain, 3),
        s::in_domain({0, c}, dt, target_domain, 4)},
       with(Reduction::Sum)},
  };
  return out;
}

std::vector<Sample> loss_bad_samples(Loss2 fn) {
  auto call = s::call2([fn](const Tensor& a, const Tensor& b) {
    return fn(a, b, Reduction::Mean);
  });
  return {
      s::undefined_input(call, 2),
      {"shapes_differ",
       {s::varied({2, 3}, kFloat32, 2.0, 1), s::varied({3}, kFloat32, 2.0, 2)},
       call},
  };
}

void loss(
    const char* name,
    const std::string& args,
    Loss2 fn,
    s::Domain input_domain = s::Domain::kAny,
    s::Domain target_domain = s::Domain::kAny) {
  register_op({
      .name = name,
      .family = "loss",
      .callables =
          {std::string("ditto::nn::functional::") + name + "(" + args + ")"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples =
          [=](const SampleSpec& spec) {
            return loss_samples(spec, fn, input_domain, target_domain);
          },
      .bad_samples = [fn] { return loss_bad_samples(fn); },
  });
}

// gelu's exact form runs erf, whose 64-term series costs about 0.7 us an
// element: its samples stay small (erf's own record crosses the chunks).
// The tanh form takes the usual elementwise samples.
std::vector<Sample> gelu_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  auto exact = s::call1([](const Tensor& x) { return F::gelu(x); });
  Tensor m =
      s::varied({s::size(spec, 29, 3), s::size(spec, 67, 4)}, dt, 6.0, 1);
  std::vector<Sample> out = {
      {"matrix", {m}, exact},
      {"strided", {s::strided(m)}, exact},
      {"scalar", {s::varied({}, dt, 6.0, 2)}, exact},
      {"empty", {s::varied({0, 3}, dt, 1.0, 3)}, exact},
  };
  for (Sample& sm :
       s::unary(spec, [](const Tensor& x) { return F::gelu(x, "tanh"); })) {
    sm.label = "tanh_" + sm.label;
    out.push_back(std::move(sm));
  }
  return out;
}

// ---- dropout2d

std::vector<Sample> dropout2d_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  Tensor x = s::varied(
      {s::size(spec, 8, 2),
       s::size(spec, 16, 3),
       s::size(spec, 31, 2),
       s::size(spec, 29, 3)},
      dt,
      6.0,
      1);
  Tensor x3 = s::varied(
      {s::size(spec, 4, 2), s::size(spec, 13, 3), s::size(spec, 301, 5)},
      dt,
      6.0,
      2);
  auto drop = [](double p, bool training) {
    return s::call1(
        [=](const Tensor& t) { return F::dropout2d(t, p, training); });
  };
  std::vector<Sample> out = {
      {"train", {x}, drop(0.3, true)},
      {"3d", {x3}, drop(0.5, true)},
      {"strided", {s::strided(x3)}, drop(0.3, true)},
      {"all_dropped", {x}, drop(1.0, true)},
  };
  if (!spec.small) {
    // These return x itself (as PyTorch's dropout2d does), so under
    // no_grad the result still requires grad and the graph check fails:
    // full-sized samples only.
    out.push_back({"eval", {x}, drop(0.3, false)});
    out.push_back({"p0", {x}, drop(0.0, true)});
    out.push_back(
        {"empty", {s::varied({0, 3, 4, 4}, dt, 1.0, 3)}, drop(0.3, true)});
  }
  return out;
}

// ---- cross_entropy

std::vector<Sample> cross_entropy_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t n = s::size(spec, 2000, 4), c = s::size(spec, 17, 5);
  Tensor x = s::varied({n, c}, dt, 6.0, 1);
  Tensor t = s::indices(n, c, 2);
  Tensor probs = s::positive({n, c}, dt, 3);
  const int64_t n4 = s::size(spec, 8, 2), c4 = s::size(spec, 7, 3),
                h = s::size(spec, 31, 2), w = s::size(spec, 29, 2);
  Tensor x4 = s::varied({n4, c4, h, w}, dt, 6.0, 4);
  Tensor t4 = s::indices(n4 * h * w, c4, 5).reshape({n4, h, w});
  // The trace shows (input, target): a class weight is built here.
  Tensor weight = s::positive({c}, dt, 6);
  Tensor weight4 = s::positive({c4}, dt, 7);
  auto with = [](F::CrossEntropyOptions o) {
    return s::call2([o](const Tensor& a, const Tensor& b) {
      return F::cross_entropy(a, b, o);
    });
  };
  using O = F::CrossEntropyOptions;
  return {
      {"classes_mean", {x, t}, with(O())},
      {"classes_none", {x, t}, with(O().reduction(Reduction::None))},
      {"strided", {s::strided(x), t}, with(O().reduction(Reduction::Sum))},
      {"weighted_smoothing",
       {x, t},
       with(O().weight(weight).label_smoothing(0.2).ignore_index(1))},
      {"spatial_ignore", {x4, t4}, with(O().ignore_index(2))},
      {"spatial_weighted_smoothing_sum",
       {x4, t4},
       with(
           O().weight(weight4).label_smoothing(0.1).reduction(Reduction::Sum))},
      {"probabilities", {x, probs}, with(O())},
      {"probabilities_smoothing_weighted",
       {x, probs},
       with(
           O().weight(weight).label_smoothing(0.3).reduction(Reduction::None))},
      {"one_sample",
       {s::varied({c}, dt, 6.0, 8), s::indices(1, c, 9).reshape({})},
       with(O())},
      {"empty",
       {s::varied({0, c}, dt, 1.0, 10), s::indices(0, c)},
       with(O().reduction(Reduction::Sum))},
  };
}

// ---- binary_cross_entropy_with_logits

std::vector<Sample> bce_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 113, 3), c = s::size(spec, 307, 4);
  Tensor z = s::varied({r, c}, dt, 12.0, 1);
  Tensor y = s::varied({r, c}, dt, 1.0, 2, 0.5);
  // The trace shows (input, target): weight and pos_weight are built here.
  Tensor weight = s::positive({c}, dt, 3);
  Tensor pos_weight = s::positive({c}, dt, 4, 2.0);
  auto with = [](F::BCEWithLogitsOptions o) {
    return s::call2([o](const Tensor& a, const Tensor& b) {
      return F::binary_cross_entropy_with_logits(a, b, o);
    });
  };
  using O = F::BCEWithLogitsOptions;
  std::vector<Sample> out = {
      {"mean", {z, y}, with(O())},
      {"none", {z, y}, with(O().reduction(Reduction::None))},
      {"weighted_sum",
       {z, y},
       with(O().weight(weight)
                .pos_weight(pos_weight)
                .reduction(Reduction::Sum))},
      {"strided", {s::strided(z), y}, with(O().pos_weight(pos_weight))},
      {"empty",
       {s::varied({0, c}, dt, 1.0, 5), s::varied({0, c}, dt, 1.0, 6, 0.5)},
       with(O().reduction(Reduction::Sum))},
  };
  return out;
}

// ---- kl_div

std::vector<Sample> kl_div_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 113, 3), c = s::size(spec, 307, 4);
  Tensor x = s::varied({r, c}, dt, 4.0, 1, -2.0);
  Tensor p = s::positive({r, c}, dt, 2, 0.5);
  Tensor lp = s::varied({r, c}, dt, 4.0, 3, -2.0);
  using R = F::KLDivReduction;
  auto with = [](R red, bool log_target) {
    return s::call2([=](const Tensor& a, const Tensor& b) {
      return F::kl_div(a, b, red, log_target);
    });
  };
  return {
      {"mean", {x, p}, with(R::Mean, false)},
      {"batchmean", {x, p}, with(R::BatchMean, false)},
      {"none", {x, p}, with(R::None, false)},
      {"log_target_sum", {x, lp}, with(R::Sum, true)},
      {"strided", {s::strided(x), p}, with(R::BatchMean, false)},
      {"empty",
       {s::varied({0, c}, dt, 1.0, 4), s::positive({0, c}, dt, 5)},
       with(R::Sum, false)},
  };
}

// ---- ctc_loss

// log_probs (T, N, C) as the loss expects them: the call takes the
// log_softmax of its input (the loss's gradient is PyTorch's, which holds
// for log-softmax outputs only, so gradcheck goes through log_softmax as
// PyTorch's own test does). The trace shows log_probs alone: the targets
// are built here.
std::vector<Sample> ctc_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t t = s::size(spec, 50, 6), n = s::size(spec, 16, 2),
                c = s::size(spec, 20, 4);
  Tensor x = s::varied({t, n, c}, dt, 6.0, 1);
  std::vector<int64_t> in_len(static_cast<size_t>(n)),
      tg_len(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) {
    in_len[size_t(b)] = t - (b % 3);
    tg_len[size_t(b)] = std::max<int64_t>(1, (t / 3) - (b % 4));
  }
  const int64_t s_max = *std::max_element(tg_len.begin(), tg_len.end());
  // Labels 1..C-1 (0 is the blank).
  std::vector<int64_t> labels(static_cast<size_t>(n * s_max));
  for (size_t k = 0; k < labels.size(); ++k) {
    labels[k] = 1 + int64_t(k * 7 + k / 5) % (c - 1);
  }
  Tensor padded = tensor(labels).reshape({n, s_max});
  auto ctc =
      [=](Tensor targets, Reduction r, bool zero_inf, std::vector<int64_t> il) {
        return s::call1([=](const Tensor& lp) {
          return F::ctc_loss(
              F::log_softmax(lp, 2), targets, il, tg_len, 0, r, zero_inf);
        });
      };
  // A target longer than its input (zero_infinity counts it zero).
  std::vector<int64_t> short_in = in_len;
  short_in[0] = tg_len[0] - 1;
  return {
      {"mean", {x}, ctc(padded, Reduction::Mean, false, in_len)},
      {"sum", {x}, ctc(padded, Reduction::Sum, false, in_len)},
      {"none", {x}, ctc(padded, Reduction::None, false, in_len)},
      {"strided", {s::strided(x)}, ctc(padded, Reduction::Mean, false, in_len)},
      {"zero_infinity", {x}, ctc(padded, Reduction::None, true, short_in)},
  };
}

} // namespace

DITTO_OP_RECORDS(nn_functional) {
  activation("leaky_relu", "x, negative_slope", [](const Tensor& x) {
    return F::leaky_relu(x, 0.2);
  });
  activation("silu", "x", [](const Tensor& x) { return F::silu(x); });
  activation(
      "gelu",
      "x, approximate",
      [](const Tensor& x) { return F::gelu(x); },
      gelu_samples);

  register_op({
      .name = "dropout2d",
      .family = "random",
      .callables =
          {"ditto::nn::functional::dropout2d(x, p, training, gen)",
           "ditto::nn::Dropout2d"},
      .deterministic_because =
          "one Bernoulli draw per channel from the generator, in channel "
          "order, then elementwise ops",
      .dtypes = kFloating,
      .samples = dropout2d_samples,
      .bad_samples =
          [] {
            auto drop = [](double p) {
              return s::call1(
                  [p](const Tensor& t) { return F::dropout2d(t, p, true); });
            };
            return std::vector<Sample>{
                s::undefined_input(drop(0.5), 1),
                {"p_above_one",
                 {s::varied({2, 3, 4, 4}, kFloat32, 2.0, 1)},
                 drop(1.5)},
                {"2d_input", {s::varied({2, 3}, kFloat32, 2.0, 1)}, drop(0.5)},
            };
          },
      .random = true,
  });

  register_op({
      .name = "normalize",
      .family = "normalization",
      .callables = {"ditto::nn::functional::normalize(x, dim, eps)"},
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
              return s::call1(
                  [d](const Tensor& x) { return F::normalize(x, d); });
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
                s::call1([](const Tensor& x) { return F::normalize(x); }), 1)};
          },
  });

  register_op({
      .name = "one_hot",
      .family = "index",
      .callables = {"ditto::nn::functional::one_hot(indices, num_classes)"},
      .deterministic_because =
          "each index writes a one into its own row of zeros",
      .dtypes = {kInt64},
      .samples =
          [](const SampleSpec& spec) {
            const int64_t n = s::size(spec, 20000, 7);
            auto hot = [](int64_t k) {
              return s::call1(
                  [k](const Tensor& i) { return F::one_hot(i, k); });
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
              return s::call1(
                  [k](const Tensor& i) { return F::one_hot(i, k); });
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

  register_op({
      .name = "cross_entropy",
      .family = "loss",
      .callables =
          {"ditto::nn::functional::cross_entropy(input, target, "
           "options)",
           "ditto::nn::CrossEntropyLoss"},
      .deterministic_because =
          "log_softmax and nll_loss (each deterministic) and elementwise "
          "ops and sums that add in a fixed order",
      .dtypes = kFloating,
      .samples = cross_entropy_samples,
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& a, const Tensor& b) {
              return F::cross_entropy(a, b);
            });
            Tensor x = s::varied({3, 4}, kFloat32, 2.0, 1);
            return std::vector<Sample>{
                s::undefined_input(call, 2),
                {"class_out_of_range",
                 {x, tensor(std::vector<int64_t>{0, 4, 1})},
                 call},
                {"probabilities_shape",
                 {x, s::positive({3, 5}, kFloat32, 2)},
                 call},
                {"smoothing_above_one",
                 {x, s::indices(3, 4)},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return F::cross_entropy(
                       a, b, F::CrossEntropyOptions().label_smoothing(1.5));
                 })},
            };
          },
  });

  loss(
      "mse_loss",
      "input, target, reduction",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return F::mse_loss(a, b, r);
      });
  loss(
      "l1_loss",
      "input, target, reduction",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return F::l1_loss(a, b, r);
      });
  loss(
      "smooth_l1_loss",
      "input, target, reduction, beta",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return F::smooth_l1_loss(a, b, r, 1.5);
      });

  register_op({
      .name = "binary_cross_entropy_with_logits",
      .family = "loss",
      .callables =
          {"ditto::nn::functional::binary_cross_entropy_with_logits("
           "input, target, options)",
           "ditto::nn::BCEWithLogitsLoss"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples = bce_samples,
      .bad_samples =
          [] {
            return loss_bad_samples(
                [](const Tensor& a, const Tensor& b, Reduction r) {
                  return F::binary_cross_entropy_with_logits(
                      a, b, F::BCEWithLogitsOptions().reduction(r));
                });
          },
  });

  register_op({
      .name = "kl_div",
      .family = "loss",
      .callables = {"ditto::nn::functional::kl_div(input, target, "
                    "reduction, log_target)"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples = kl_div_samples,
      .bad_samples =
          [] {
            return loss_bad_samples([](const Tensor& a,
                                       const Tensor& b,
                                       Reduction) { return F::kl_div(a, b); });
          },
  });

  register_op({
      .name = "ctc_loss",
      .family = "loss",
      .callables =
          {"ditto::nn::functional::ctc_loss(log_probs, targets, "
           "input_lengths, target_lengths, blank, reduction, "
           "zero_infinity)",
           "ditto::nn::CTCLoss"},
      .deterministic_because =
          "each sample's alpha (and beta) recursion runs serially in one "
          "task; the reduction adds in a fixed order",
      .dtypes = kFloating,
      .samples = ctc_samples,
      .bad_samples =
          [] {
            Tensor lp = s::varied({4, 2, 3}, kFloat32, 2.0, 1);
            auto call = [](std::vector<int64_t> il,
                           std::vector<int64_t> tl,
                           Tensor tg) {
              return s::call1(
                  [=](const Tensor& x) { return F::ctc_loss(x, tg, il, tl); });
            };
            Tensor tg =
                tensor(std::vector<int64_t>{1, 2, 1, 1}).reshape({2, 2});
            return std::vector<Sample>{
                {"target_longer_than_input", {lp}, call({1, 4}, {2, 2}, tg)},
                {"label_out_of_range",
                 {lp},
                 call(
                     {4, 4},
                     {2, 2},
                     tensor(std::vector<int64_t>{1, 3, 1, 1}).reshape({2, 2}))},
                {"lengths_count", {lp}, call({4}, {2, 2}, tg)},
            };
          },
  });
}

} // namespace ditto
