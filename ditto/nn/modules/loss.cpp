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

MSELossImpl::MSELossImpl(const MSELossOptions& o)
    : Module("MSELoss"), options(o) {}
L1LossImpl::L1LossImpl(const L1LossOptions& o) : Module("L1Loss"), options(o) {}
SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& o)
    : Module("SmoothL1Loss"), options(o) {}
NLLLossImpl::NLLLossImpl(const NLLLossOptions& o)
    : Module("NLLLoss"), options(o) {
  if (o.weight().defined()) {
    options.weight(register_buffer("weight", o.weight()));
  }
}
CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& o)
    : Module("CrossEntropyLoss"), options(o) {
  if (o.weight().defined()) {
    options.weight(register_buffer("weight", o.weight()));
  }
}
BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& o)
    : Module("BCEWithLogitsLoss"), options(o) {
  if (o.weight().defined()) {
    options.weight(register_buffer("weight", o.weight()));
  }
  if (o.pos_weight().defined()) {
    options.pos_weight(register_buffer("pos_weight", o.pos_weight()));
  }
}

BCELossImpl::BCELossImpl(const BCELossOptions& o)
    : Module("BCELoss"), options(o) {
  if (o.weight().defined()) {
    options.weight(register_buffer("weight", o.weight()));
  }
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) const {
  ForwardScope scope(*this);
  return functional::mse_loss(input, target, options);
}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  ForwardScope scope(*this);
  return functional::l1_loss(input, target, options);
}

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target)
    const {
  ForwardScope scope(*this);
  return functional::smooth_l1_loss(input, target, options);
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) const {
  ForwardScope scope(*this);
  return functional::nll_loss(input, target, options);
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target)
    const {
  ForwardScope scope(*this);
  return functional::cross_entropy(input, target, options);
}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target)
    const {
  ForwardScope scope(*this);
  return functional::binary_cross_entropy_with_logits(input, target, options);
}

Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) const {
  ForwardScope scope(*this);
  return functional::binary_cross_entropy(input, target, options);
}

} // namespace ditto::nn
