#pragma once

// Linear, and the shape layers Identity, Flatten and Unflatten.

#include <string>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

struct DITTO_API LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  DITTO_NN_ARG(int64_t, in_features);
  DITTO_NN_ARG(int64_t, out_features);
  DITTO_NN_ARG(bool, bias) = true;
};

// y = x W^T + b; W (out, in) kaiming_uniform_(a = sqrt(5)), then b
// uniform(+-1/sqrt(in)).
class DITTO_API Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true)
      : Linear(LinearOptions(in_features, out_features).bias(bias)) {}
  explicit Linear(const LinearOptions& options);
  Tensor forward(const Tensor& x) const;
  // Draws the initial values again (PyTorch's reset_parameters). The
  // constructor queues the same draws (ditto/core/deferred.h).
  void reset_parameters();
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias; // undefined without bias
};

class DITTO_API Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& x) const {
    return x;
  }
};

class DITTO_API Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t start_dim, end_dim;
};

class DITTO_API Unflatten : public Module {
 public:
  Unflatten(int64_t dim, Shape sizes)
      : Module("Unflatten"), dim(dim), sizes(std::move(sizes)) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
  Shape sizes;
};

} // namespace ditto::nn
