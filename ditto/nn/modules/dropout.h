#pragma once

// The dropout layers: Dropout and Dropout2d.

#include <optional>
#include <string>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"
#include "ditto/random/generator.h"

namespace ditto::nn {

struct DITTO_API DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  DITTO_NN_ARG(double, p);
  // Draw the mask from this generator (e.g. ditto::stream("dropout"))
  // instead of the default one.
  DITTO_NN_ARG(std::optional<Generator>, generator);
};

// Zeroes elements with probability p while training (PyTorch's mask, drawn
// from the default generator unless one is given); identity in eval mode.
class DITTO_API DropoutImpl : public Module {
 public:
  DropoutImpl(double p = 0.5) : DropoutImpl(DropoutOptions(p)) {}
  explicit DropoutImpl(const DropoutOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  DropoutOptions options;
};
DITTO_MODULE(Dropout);

class DITTO_API Dropout2dImpl : public Module {
 public:
  Dropout2dImpl(double p = 0.5) : Dropout2dImpl(DropoutOptions(p)) {}
  explicit Dropout2dImpl(const DropoutOptions& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  DropoutOptions options;
};
DITTO_MODULE(Dropout2d);

} // namespace ditto::nn
