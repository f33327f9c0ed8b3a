#include "ditto/nn/modules/loss.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {

CTCLossImpl::CTCLossImpl(const CTCLossOptions& o)
    : Module("CTCLoss"), options(o) {}

Tensor CTCLossImpl::forward(
    const Tensor& log_probs,
    const Tensor& targets,
    const Tensor& input_lengths,
    const Tensor& target_lengths) const {
  ForwardScope scope(*this);
  return functional::ctc_loss(
      log_probs,
      targets,
      input_lengths,
      target_lengths,
      options.blank(),
      options.reduction(),
      options.zero_infinity());
}

Tensor CTCLossImpl::forward(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths) const {
  ForwardScope scope(*this);
  return functional::ctc_loss(
      log_probs,
      targets,
      input_lengths,
      target_lengths,
      options.blank(),
      options.reduction(),
      options.zero_infinity());
}

} // namespace ditto::nn
