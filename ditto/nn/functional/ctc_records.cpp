// The record of ctc_loss (ctc.cpp) (Note [Op records] in
// ditto/ops/record.cpp).

#include "ditto/nn/functional/activation.h"
#include "ditto/nn/functional/loss.h"
#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/record.h"

namespace ditto::nn::functional {
namespace {

namespace s = ::ditto::detail::samples;

using ::ditto::detail::samples::kFloating;

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
          return ctc_loss(
              log_softmax(lp, 2), targets, il, tg_len, 0, r, zero_inf);
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

DITTO_OP_RECORDS(ctc) {
  register_op({
      .name = "ctc_loss",
      .family = "loss",
      .callables =
          {"ditto::ctc_loss(log_probs, targets, input_lengths, "
           "target_lengths, blank, reduction, zero_infinity)",
           "ditto::nn::functional::ctc_loss(log_probs, targets, "
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
                  [=](const Tensor& x) { return ctc_loss(x, tg, il, tl); });
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

} // namespace ditto::nn::functional
