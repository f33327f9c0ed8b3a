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
class DITTO_API LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias)) {}
  explicit LinearImpl(const LinearOptions& options);
  Tensor forward(const Tensor& x) const;
  // Draws the initial values again (PyTorch's reset_parameters). The
  // constructor queues the same draws (ditto/core/deferred.h).
  void reset_parameters();
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias; // undefined without bias
};
DITTO_MODULE(Linear);

class DITTO_API IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& x) const {
    return x;
  }
};
DITTO_MODULE(Identity);

class DITTO_API FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t start_dim, end_dim;
};
DITTO_MODULE(Flatten);

class DITTO_API UnflattenImpl : public Module {
 public:
  UnflattenImpl(int64_t dim, Shape sizes)
      : Module("Unflatten"), dim(dim), sizes(std::move(sizes)) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
  Shape sizes;
};
DITTO_MODULE(Unflatten);

} // namespace ditto::nn
