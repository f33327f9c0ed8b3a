#pragma once

// The resizing layer Upsample.

#include <string>

#include "ditto/nn/functional.h"
#include "ditto/nn/module.h"

namespace ditto::nn {

// Resizes (N, C, H, W) inputs: functional::interpolate with fixed options.
class DITTO_API UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(const functional::InterpolateOptions& options)
      : Module("Upsample"), options(options) {}
  Tensor forward(const Tensor& x) const {
    ForwardScope scope(*this);
    return functional::interpolate(x, options);
  }
  std::string extra_repr() const override;
  functional::InterpolateOptions options;
};
DITTO_MODULE(Upsample);

} // namespace ditto::nn
