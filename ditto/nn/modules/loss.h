#pragma once

// The loss layers: MSELoss, L1Loss, SmoothL1Loss, NLLLoss, CrossEntropyLoss,
// BCEWithLogitsLoss, BCELoss and CTCLoss, with LibTorch's options.

#include <string>
#include <vector>

#include "ditto/nn/functional.h"
#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

struct DITTO_API CTCLossOptions {
  DITTO_NN_ARG(int64_t, blank) = 0;
  DITTO_NN_ARG(functional::Reduction, reduction) = functional::Reduction::Mean;
  DITTO_NN_ARG(bool, zero_infinity) = false;
};

// functional::ctc_loss with the options' blank, reduction and
// zero_infinity.
class DITTO_API CTCLossImpl : public Module {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options = {});
  Tensor forward(
      const Tensor& log_probs,
      const Tensor& targets,
      const Tensor& input_lengths,
      const Tensor& target_lengths) const;
  Tensor forward(
      const Tensor& log_probs,
      const Tensor& targets,
      const std::vector<int64_t>& input_lengths,
      const std::vector<int64_t>& target_lengths) const;
  std::string extra_repr() const override {
    return {};
  }
  CTCLossOptions options;
};
DITTO_MODULE(CTCLoss);

// The losses of two tensors: forward(input, target) is the functional
// loss with the module's options (LibTorch's torch::nn::MSELoss...),
// printed as PyTorch prints them ("MSELoss()"). A class weight (and
// BCEWithLogitsLoss's pos_weight) is a buffer, as in PyTorch and LibTorch.
using MSELossOptions = functional::MSELossOptions;
using L1LossOptions = functional::L1LossOptions;
using SmoothL1LossOptions = functional::SmoothL1LossOptions;
using NLLLossOptions = functional::NLLLossOptions;
using CrossEntropyLossOptions = functional::CrossEntropyOptions;
using BCEWithLogitsLossOptions = functional::BCEWithLogitsOptions;
using BCELossOptions = functional::BinaryCrossEntropyFuncOptions;

#define DITTO_LOSS_MODULE(Name, Options)                             \
  class DITTO_API Name##Impl : public Module {                       \
   public:                                                           \
    explicit Name##Impl(const Options& options = {});                \
    Tensor forward(const Tensor& input, const Tensor& target) const; \
    Options options;                                                 \
  };                                                                 \
  DITTO_MODULE(Name)
DITTO_LOSS_MODULE(MSELoss, MSELossOptions);
DITTO_LOSS_MODULE(L1Loss, L1LossOptions);
DITTO_LOSS_MODULE(SmoothL1Loss, SmoothL1LossOptions);
DITTO_LOSS_MODULE(NLLLoss, NLLLossOptions);
DITTO_LOSS_MODULE(CrossEntropyLoss, CrossEntropyLossOptions);
DITTO_LOSS_MODULE(BCEWithLogitsLoss, BCEWithLogitsLossOptions);
DITTO_LOSS_MODULE(BCELoss, BCELossOptions);
#undef DITTO_LOSS_MODULE

} // namespace ditto::nn
