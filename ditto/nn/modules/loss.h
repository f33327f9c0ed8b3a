#pragma once

// The loss layers: CTCLoss.

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

} // namespace ditto::nn
