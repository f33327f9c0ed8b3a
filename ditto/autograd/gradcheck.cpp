#include "ditto/autograd/gradcheck.h"

#include <cmath>
#include <sstream>

#include "ditto/autograd/engine.h"
#include "ditto/core/error.h"

namespace ditto::autograd {
namespace {

// fn's output at inputs, as contiguous float64 values, without recording.
std::vector<double> evaluate(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs) {
  NoGradGuard no_grad;
  Tensor out = fn(inputs).contiguous().to(kFloat64);
  const double* p = out.data_ptr<double>();
  return std::vector<double>(p, p + out.numel());
}

} // namespace

GradcheckResult gradcheck(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs,
    double eps,
    double atol,
    double rtol) {
  for (const Tensor& x : inputs) {
    DITTO_CHECK(
        !x.defined() || !x.requires_grad() || x.dtype() == kFloat64,
        TypeError,
        "gradcheck",
        "inputs that require grad must be float64 (finite differences in "
        "float32 are too coarse), got ",
        x.dtype());
  }
  Tensor out = fn(inputs);
  DITTO_CHECK(
      out.defined() && out.requires_grad(),
      ValueError,
      "gradcheck",
      "the function's output does not require grad");
  const int64_t n_out = out.numel();
  std::vector<Tensor> wrt;
  std::vector<size_t> wrt_index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && inputs[i].requires_grad()) {
      wrt.push_back(inputs[i]);
      wrt_index.push_back(i);
    }
  }
  // Analytical Jacobian, one row (output element) per backward.
  std::vector<std::vector<double>> analytical(wrt.size());
  for (size_t k = 0; k < wrt.size(); ++k) {
    analytical[k].assign(size_t(n_out * wrt[k].numel()), 0.0);
  }
  for (int64_t r = 0; r < n_out; ++r) {
    Tensor seed = out.new_zeros(out.sizes());
    seed.view({-1}).select(0, r).fill_(1.0);
    std::vector<Tensor> g = grad({out}, wrt, {seed}, true, false, true);
    for (size_t k = 0; k < wrt.size(); ++k) {
      if (!g[k].defined()) {
        continue;
      }
      Tensor gk = g[k].contiguous().to(kFloat64);
      const double* p = gk.data_ptr<double>();
      for (int64_t j = 0; j < wrt[k].numel(); ++j) {
        analytical[k][size_t(r * wrt[k].numel() + j)] = p[j];
      }
    }
  }
  // Numerical Jacobian by central differences, one input element at a time.
  GradcheckResult result;
  double worst_excess = 0.0;
  for (size_t k = 0; k < wrt.size(); ++k) {
    std::vector<Tensor> probe;
    for (const Tensor& x : inputs) {
      probe.push_back(x.defined() ? x.detach().clone() : x);
    }
    Tensor& x = probe[wrt_index[k]];
    double* xp = x.data_ptr<double>();
    for (int64_t j = 0; j < x.numel(); ++j) {
      const double saved = xp[j];
      xp[j] = saved + eps;
      std::vector<double> plus = evaluate(fn, probe);
      xp[j] = saved - eps;
      std::vector<double> minus = evaluate(fn, probe);
      xp[j] = saved;
      for (int64_t r = 0; r < n_out; ++r) {
        const double num = (plus[size_t(r)] - minus[size_t(r)]) / (2 * eps);
        const double ana = analytical[k][size_t(r * x.numel() + j)];
        const double err = std::fabs(ana - num);
        const double allowed = atol + rtol * std::fabs(num);
        result.max_abs_error = std::max(result.max_abs_error, err);
        if (!(err <= allowed) && err - allowed >= worst_excess) {
          worst_excess = err - allowed;
          result.ok = false;
          std::ostringstream os;
          os.precision(10);
          os << "Jacobian mismatch for output element " << r
             << " with respect to input " << wrt_index[k] << ", element " << j
             << ": numerical " << num << ", analytical " << ana << " (error "
             << err << ", allowed " << allowed << ")";
          result.report = os.str();
        }
      }
    }
  }
  if (result.ok) {
    std::ostringstream os;
    os << "gradcheck passed; max abs error " << result.max_abs_error;
    result.report = os.str();
  }
  return result;
}

} // namespace ditto::autograd
