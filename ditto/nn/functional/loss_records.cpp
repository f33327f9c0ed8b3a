// The records of the losses nll_loss, cross_entropy, mse_loss, l1_loss,
// smooth_l1_loss, binary_cross_entropy_with_logits and kl_div (loss.cpp)
// (Note [Op records] in ditto/ops/record.cpp).

#include "ditto/nn/functional/activation.h"
#include "ditto/nn/functional/loss.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

const char* kComposedLoss =
    "composed of elementwise ops and a sum or mean that adds in a fixed "
    "order";

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
          {std::string("ditto::") + name + "(self, target, reduction" +
               (std::string(name) == "smooth_l1_loss" ? ", beta)" : ")"),
           std::string("ditto::nn::functional::") + name + "(" + args + ")"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples =
          [=](const SampleSpec& spec) {
            return loss_samples(spec, fn, input_domain, target_domain);
          },
      .bad_samples = [fn] { return loss_bad_samples(fn); },
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
      return nll_loss(x, y, NLLLossOptions().ignore_index(ignore).reduction(r));
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
         return nll_loss(x, y, NLLLossOptions().weight(weight).ignore_index(0));
       })},
      {"one_sample",
       {s::varied({c}, dt, 4.0, 6), s::indices(1, c, 3).reshape({})},
       with(-100, Reduction::Mean)},
      {"empty",
       {s::varied({0, c}, dt, 1.0, 7), s::indices(0, c)},
       with(-100, Reduction::Sum)},
  };
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
  auto with = [](CrossEntropyOptions o) {
    return s::call2([o](const Tensor& a, const Tensor& b) {
      return cross_entropy(a, b, o);
    });
  };
  using O = CrossEntropyOptions;
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
  auto with = [](BCEWithLogitsOptions o) {
    return s::call2([o](const Tensor& a, const Tensor& b) {
      return binary_cross_entropy_with_logits(a, b, o);
    });
  };
  using O = BCEWithLogitsOptions;
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

// ---- binary_cross_entropy: probabilities inside (0, 1) (the gradient is
// 1 / (x (1 - x)) there), and 0 and 1 exactly, where the clamped logs give
// a finite loss.
std::vector<Sample> bce_prob_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 113, 3), c = s::size(spec, 307, 4);
  Tensor x = s::varied({r, c}, dt, 0.8, 1, 0.5);
  Tensor y = s::varied({r, c}, dt, 1.0, 2, 0.5);
  Tensor weight = s::positive({c}, dt, 3);
  auto with = [](BinaryCrossEntropyFuncOptions o) {
    return s::call2([o](const Tensor& a, const Tensor& b) {
      return binary_cross_entropy(a, b, o);
    });
  };
  using O = BinaryCrossEntropyFuncOptions;
  Tensor edges = tensor<double>({0.0, 1.0, 0.5, 1.0}, {2, 2}).to(dt);
  Tensor edge_targets = tensor<double>({1.0, 0.0, 0.25, 1.0}, {2, 2}).to(dt);
  return {
      {"mean", {x, y}, with(O())},
      {"none", {x, y}, with(O(Reduction::None))},
      {"weighted_sum", {x, y}, with(O(Reduction::Sum).weight(weight))},
      {"strided", {s::strided(x), y}, with(O())},
      {.label = "zero_and_one",
       .inputs = {edges, edge_targets},
       .call = with(O(Reduction::Sum)),
       .gradcheck = false},
      {"empty",
       {s::varied({0, c}, dt, 0.8, 5, 0.5), s::varied({0, c}, dt, 1.0, 6, 0.5)},
       with(O(Reduction::Sum))},
  };
}

// ---- kl_div

std::vector<Sample> kl_div_samples(const SampleSpec& spec) {
  const Dtype dt = spec.dtype;
  const int64_t r = s::size(spec, 113, 3), c = s::size(spec, 307, 4);
  Tensor x = s::varied({r, c}, dt, 4.0, 1, -2.0);
  Tensor p = s::positive({r, c}, dt, 2, 0.5);
  Tensor lp = s::varied({r, c}, dt, 4.0, 3, -2.0);
  using R = KLDivReduction;
  auto with = [](R red, bool log_target) {
    return s::call2([=](const Tensor& a, const Tensor& b) {
      return kl_div(a, b, red, log_target);
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

} // namespace

DITTO_OP_RECORDS(loss) {
  {
    const ditto::detail::DevicesScope on_vulkan({kVulkan});
    register_op({
        .name = "nll_loss",
        .family = "loss",
        .callables =
            {"ditto::nll_loss(self, target, weight, reduction, "
             "ignore_index)",
             "ditto::nn::functional::nll_loss(input, target, options)"},
        .deterministic_because =
            "one serial loop over the targets: the sum runs in double in "
            "element order",
        .dtypes = kFloating,
        .samples = nll_samples,
        .bad_samples =
            [] {
              auto call = s::call2([](const Tensor& x, const Tensor& t) {
                return nn::functional::nll_loss(x, t);
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
  }

  register_op({
      .name = "cross_entropy",
      .family = "loss",
      .callables =
          {"ditto::nn::functional::cross_entropy(input, target, "
           "options)",
           "ditto::cross_entropy_loss(self, target, weight, reduction, "
           "ignore_index, label_smoothing)",
           "ditto::nn::CrossEntropyLoss"},
      .deterministic_because =
          "log_softmax and nll_loss (each deterministic) and elementwise "
          "ops and sums that add in a fixed order",
      .dtypes = kFloating,
      .samples = cross_entropy_samples,
      .bad_samples =
          [] {
            auto call = s::call2([](const Tensor& a, const Tensor& b) {
              return cross_entropy(a, b);
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
                   return cross_entropy(
                       a, b, CrossEntropyOptions().label_smoothing(1.5));
                 })},
            };
          },
  });

  loss(
      "mse_loss",
      "input, target, reduction",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return mse_loss(a, b, r);
      });
  loss(
      "l1_loss",
      "input, target, reduction",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return l1_loss(a, b, r);
      });
  loss(
      "smooth_l1_loss",
      "input, target, reduction, beta",
      [](const Tensor& a, const Tensor& b, Reduction r) {
        return smooth_l1_loss(a, b, r, 1.5);
      });

  register_op({
      .name = "binary_cross_entropy_with_logits",
      .family = "loss",
      .callables =
          {"ditto::binary_cross_entropy_with_logits(self, target, weight, "
           "pos_weight, reduction)",
           "ditto::nn::functional::binary_cross_entropy_with_logits("
           "input, target, options)",
           "ditto::nn::BCEWithLogitsLoss"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples = bce_samples,
      .bad_samples =
          [] {
            return loss_bad_samples(
                [](const Tensor& a, const Tensor& b, Reduction r) {
                  return binary_cross_entropy_with_logits(
                      a, b, BCEWithLogitsOptions().reduction(r));
                });
          },
  });

  register_op({
      .name = "binary_cross_entropy",
      .family = "loss",
      .callables =
          {"ditto::binary_cross_entropy(self, target, weight, reduction)",
           "ditto::nn::functional::binary_cross_entropy(input, target, "
           "options)",
           "ditto::nn::BCELoss"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples = bce_prob_samples,
      .bad_samples =
          [] {
            std::vector<Sample> out = loss_bad_samples(
                [](const Tensor& a, const Tensor& b, Reduction r) {
                  return binary_cross_entropy(
                      a, b, BinaryCrossEntropyFuncOptions(r));
                });
            out.push_back(
                {"outside_zero_one",
                 {tensor<float>({0.5f, 1.5f}), tensor<float>({0.0f, 1.0f})},
                 s::call2([](const Tensor& a, const Tensor& b) {
                   return functional::binary_cross_entropy(a, b);
                 })});
            return out;
          },
  });

  register_op({
      .name = "kl_div",
      .family = "loss",
      .callables =
          {"ditto::kl_div(self, target, reduction, log_target)",
           "ditto::nn::functional::kl_div(input, target, "
           "reduction, log_target)"},
      .deterministic_because = kComposedLoss,
      .dtypes = kFloating,
      .samples = kl_div_samples,
      .bad_samples =
          [] {
            return loss_bad_samples(
                [](const Tensor& a, const Tensor& b, Reduction) {
                  return functional::kl_div(a, b);
                });
          },
  });
}

} // namespace ditto::nn::functional
