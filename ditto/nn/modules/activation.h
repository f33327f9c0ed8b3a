#pragma once

// The activation layers (no parameters).

#include <string>

#include "ditto/nn/module.h"

namespace ditto::nn {

class DITTO_API ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01)
      : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  double negative_slope;
};

class DITTO_API GELU : public Module {
 public:
  // approximate: "none" (erf) or "tanh".
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  std::string approximate;
};

class DITTO_API SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) const;
};

class DITTO_API Softmax : public Module {
 public:
  explicit Softmax(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
};

class DITTO_API LogSoftmax : public Module {
 public:
  explicit LogSoftmax(int64_t dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  int64_t dim;
};

} // namespace ditto::nn
