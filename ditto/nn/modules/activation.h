#pragma once

// The activation layers (no parameters).

#include <string>

#include "ditto/nn/module.h"

namespace ditto::nn {

class DITTO_API ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& x) const;
};
DITTO_MODULE(ReLU);

class DITTO_API LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01)
      : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  double negative_slope;
};
DITTO_MODULE(LeakyReLU);

class DITTO_API GELUImpl : public Module {
 public:
  // approximate: "none" (erf) or "tanh".
  explicit GELUImpl(std::string approximate = "none");
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  std::string approximate;
};
DITTO_MODULE(GELU);

class DITTO_API SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& x) const;
};
DITTO_MODULE(SiLU);

class DITTO_API TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& x) const;
};
DITTO_MODULE(Tanh);

class DITTO_API SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) const;
};
DITTO_MODULE(Sigmoid);

class DITTO_API SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
};
DITTO_MODULE(Softmax);

class DITTO_API LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
};
DITTO_MODULE(LogSoftmax);

} // namespace ditto::nn
