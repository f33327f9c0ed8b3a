#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::autograd {

struct GradcheckResult {
  bool ok = true;
  // The worst element: which output and input, where, both values.
  std::string report;
  double max_abs_error = 0.0;
};

// Compares the gradients autograd computes for fn at inputs (float64
// leaves; those that require grad are checked) with central finite
// differences of step eps, element by element: |analytical - numerical| <=
// atol + rtol * |numerical| (torch.autograd.gradcheck). fn must be
// deterministic and return one floating tensor.
DITTO_API GradcheckResult gradcheck(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs,
    double eps = 1e-6,
    double atol = 1e-5,
    double rtol = 1e-3);

} // namespace ditto::autograd
