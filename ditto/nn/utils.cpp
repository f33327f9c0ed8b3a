#include "ditto/nn/utils.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn::utils {
namespace {

// PyTorch 1.13's vector norm for p other than 2 and inf (its NormOneOps
// and NormOps): one serial accumulation in the tensor's dtype, then
// acc^(1/p). Its bits wherever PyTorch does not split the sum across
// threads (under its GRAIN_SIZE of 32768 elements, or with one thread).
template <typename T>
Tensor serial_norm(const Tensor& g, double p) {
  const Tensor c = g.contiguous();
  const T* x = c.data_ptr<T>();
  const T pt = static_cast<T>(p);
  T acc = 0;
  for (int64_t i = 0; i < c.numel(); ++i) {
    acc += p == 1.0 ? std::abs(x[i]) : std::pow(std::abs(x[i]), pt);
  }
  if (p != 1.0) {
    acc = std::pow(acc, T(1) / pt);
  }
  return scalar_tensor(acc, g.dtype());
}

// PyTorch's norm(g, p) of one tensor, in its dtype.
Tensor norm_of(const Tensor& g, double p) {
  if (std::isinf(p)) {
    return abs(g).max();
  }
  if (p == 2.0) {
    return sqrt(mul(g, g).sum());
  }
  if (g.dtype() == kFloat64) {
    return serial_norm<double>(g, p);
  }
  return serial_norm<float>(g.to(kFloat32), p);
}

std::string py_float(double v) {
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".ein") == std::string::npos) {
    s += ".0";
  }
  return s;
}

} // namespace

Tensor clip_grad_norm_(
    const std::vector<Tensor>& parameters,
    double max_norm,
    double norm_type,
    bool error_if_nonfinite) {
  autograd::NoGradGuard no_grad;
  DITTO_CHECK(
      norm_type > 0,
      ValueError,
      "clip_grad_norm_",
      "norm_type must be positive, got ",
      norm_type);
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    if (p.defined() && p.grad().defined()) {
      grads.push_back(p.grad());
    }
  }
  if (grads.empty()) {
    return scalar_tensor(0.0, kFloat32);
  }
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) {
    norms.push_back(norm_of(g, norm_type));
  }
  Tensor total = norm_of(stack(norms), norm_type);
  const double t = total.item<double>();
  DITTO_CHECK(
      !(error_if_nonfinite && !std::isfinite(t)),
      ValueError,
      "clip_grad_norm_",
      "The total norm of order ",
      py_float(norm_type),
      " for gradients from `parameters` is non-finite, so it cannot be "
      "clipped. To disable this error and scale the gradients by the "
      "non-finite norm anyway, set `error_if_nonfinite=False`");
  // PyTorch: max_norm / (total + 1e-6) as reciprocal(total + 1e-6) *
  // max_norm, clamped to 1; every gradient multiplied.
  Tensor coef = mul(1.0 / add(total, 1e-6), max_norm);
  coef = clamp(coef, std::nullopt, 1.0);
  for (Tensor& g : grads) {
    g.mul_(coef.to(g.dtype()));
  }
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    if (p.defined() && p.grad().defined()) {
      Tensor g = p.grad();
      g.clamp_(-clip, clip);
    }
  }
}

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> flat;
  for (const Tensor& p : parameters) {
    DITTO_CHECK(
        p.defined(), ValueError, "parameters_to_vector", "undefined tensor");
    flat.push_back(p.reshape({-1}));
  }
  DITTO_CHECK(
      !flat.empty(), ValueError, "parameters_to_vector", "no parameters");
  return cat(flat, 0);
}

void vector_to_parameters(
    const Tensor& vec,
    const std::vector<Tensor>& parameters) {
  DITTO_CHECK(
      vec.defined() && vec.dim() == 1,
      ValueError,
      "vector_to_parameters",
      "expected a 1-D vector");
  int64_t total = 0;
  for (const Tensor& p : parameters) {
    total += p.numel();
  }
  DITTO_CHECK(
      total == vec.numel(),
      ValueError,
      "vector_to_parameters",
      "the vector has ",
      vec.numel(),
      " elements, the parameters ",
      total);
  autograd::NoGradGuard no_grad;
  int64_t at = 0;
  for (const Tensor& p : parameters) {
    Tensor dst = p;
    dst.copy_(vec.narrow(0, at, p.numel()).view(p.sizes()));
    at += p.numel();
  }
}

} // namespace ditto::nn::utils
