#pragma once

// What the optimizers' files share (optimizer.cpp: the base, SGD, Adam,
// AdamW, SparseAdam; adaptive.cpp: RMSprop, Adagrad, Adamax, NAdam, RAdam,
// Adadelta): the step's trace scope and the argument checks. Internal.

#include <vector>

#include "ditto/core/error.h"
#include "ditto/ops/declared.h"
#include "ditto/optim/optimizer.h"
#include "ditto/trace/trace.h"

namespace ditto::optim::optim_detail {

// An optimizer step: its ops are traced in the optimizer phase, and the
// trace's step counter advances when it ends (ditto/trace).
struct StepScope {
  trace::PhaseGuard phase{trace::Phase::kOptimizer};
  ~StepScope() {
    trace::advance_step();
  }
};

inline void check_params(const std::vector<Tensor>& params, const char* opt) {
  for (const Tensor& p : params) {
    DITTO_CHECK(p.defined(), ValueError, opt, "an undefined parameter");
    DITTO_CHECK(
        is_floating(p.dtype()),
        TypeError,
        opt,
        "can only optimize floating tensors, got ",
        p.dtype());
    DITTO_CHECK(
        p.is_leaf(), ValueError, opt, "can't optimize a non-leaf Tensor");
  }
}

inline void check_nonneg(double v, const char* opt, const char* what) {
  DITTO_CHECK(v >= 0.0, ValueError, opt, "Invalid ", what, " value: ", v);
}

// The gradient as the update reads it: negated for maximize.
// Sparse gradients (Embedding(sparse=True)) are refused by the optimizers
// whose formulas read every element: PyTorch's message names the
// alternative.
inline Tensor grad_of(const Tensor& p, bool maximize, const char* opt) {
  Tensor g = p.grad();
  DITTO_CHECK(
      !g.is_sparse(),
      ValueError,
      opt,
      opt,
      " does not support sparse gradients, please consider SparseAdam "
      "instead");
  return maximize ? neg(g) : g;
}

template <typename Group>
std::vector<Group> one_group(std::vector<Tensor> params, const auto& options) {
  return {Group{std::move(params), options}};
}

} // namespace ditto::optim::optim_detail
