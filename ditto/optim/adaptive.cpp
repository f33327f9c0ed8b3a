// The adaptive optimizers beside Adam: RMSprop, Adagrad, Adamax, NAdam,
// RAdam and Adadelta, PyTorch 1.13's formulas (pytorch-training.md).

#include <cmath>

#include "ditto/autograd/graph.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/optim/detail/optim_util.h"
#include "ditto/optim/optimizer.h"

namespace ditto::optim {

using namespace optim_detail;

// ---- RMSprop

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& o)
    : RMSprop(one_group<ParamGroup>(std::move(params), o)) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  for (const auto& g : groups_) {
    check_group(g);
  }
}

void RMSprop::check_group(const ParamGroup& g) const {
  const auto& o = g.options;
  check_params(g.params, "RMSprop");
  check_nonneg(o.lr(), "RMSprop", "learning rate");
  check_nonneg(o.eps(), "RMSprop", "epsilon");
  check_nonneg(o.momentum(), "RMSprop", "momentum");
  check_nonneg(o.weight_decay(), "RMSprop", "weight_decay");
  check_nonneg(o.alpha(), "RMSprop", "alpha");
}

void RMSprop::step() {
  StepScope traced;
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    const auto& o = group.options;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) {
        continue;
      }
      Tensor g = grad_of(p, o.maximize(), "RMSprop");
      auto& st = state_[p.impl().get()];
      if (st.empty()) {
        st["square_avg"] = zeros_like(p);
        if (o.momentum() > 0) {
          st["momentum_buffer"] = zeros_like(p);
        }
        if (o.centered()) {
          st["grad_avg"] = zeros_like(p);
        }
      }
      if (o.weight_decay() != 0) {
        g = add(g, p, o.weight_decay());
      }
      Tensor& sq = st["square_avg"];
      sq.mul_(o.alpha()).addcmul_(g, g, 1 - o.alpha());
      Tensor avg;
      if (o.centered()) {
        Tensor& ga = st["grad_avg"];
        ga.mul_(o.alpha()).add_(g, 1 - o.alpha());
        avg = sqrt(addcmul(sq, ga, ga, -1.0));
      } else {
        avg = sqrt(sq);
      }
      avg.add_(o.eps());
      if (o.momentum() > 0) {
        Tensor& buf = st["momentum_buffer"];
        buf.mul_(o.momentum()).addcdiv_(g, avg);
        p.add_(buf, -o.lr());
      } else {
        p.addcdiv_(g, avg, -o.lr());
      }
    }
  }
}

// ---- Adagrad

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& o)
    : Adagrad(one_group<ParamGroup>(std::move(params), o)) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  for (const auto& g : groups_) {
    check_group(g);
  }
  for (const auto& g : groups_) {
    init_group(g);
  }
}

void Adagrad::check_group(const ParamGroup& g) const {
  const auto& o = g.options;
  check_params(g.params, "Adagrad");
  check_nonneg(o.lr(), "Adagrad", "learning rate");
  check_nonneg(o.lr_decay(), "Adagrad", "lr_decay");
  check_nonneg(o.weight_decay(), "Adagrad", "weight_decay");
  check_nonneg(
      o.initial_accumulator_value(), "Adagrad", "initial_accumulator_value");
  check_nonneg(o.eps(), "Adagrad", "epsilon");
}

void Adagrad::init_group(const ParamGroup& g) {
  for (const Tensor& p : g.params) {
    auto& st = state_[p.impl().get()];
    st["step"] = scalar_tensor(0.0, kFloat32);
    st["sum"] = full_like(p, g.options.initial_accumulator_value());
  }
}

void Adagrad::step() {
  StepScope traced;
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    const auto& o = group.options;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) {
        continue;
      }
      Tensor g = grad_of(p, o.maximize(), "Adagrad");
      auto& st = state_[p.impl().get()];
      Tensor& step_t = st["step"];
      step_t.add_(1.0);
      const double step = step_t.item<float>();
      if (o.weight_decay() != 0) {
        g = add(g, p, o.weight_decay());
      }
      const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
      Tensor& sum = st["sum"];
      sum.addcmul_(g, g, 1.0);
      Tensor std = sqrt(sum).add_(o.eps());
      p.addcdiv_(g, std, -clr);
    }
  }
}

// ---- Adamax, NAdam, RAdam, Adadelta

namespace {

template <typename Opt, typename Options>
void check_adam_like(
    const Options& o,
    const std::vector<Tensor>& ps,
    const char* name) {
  check_params(ps, name);
  check_nonneg(o.lr(), name, "learning rate");
  check_nonneg(o.eps(), name, "epsilon value");
  check_nonneg(o.weight_decay(), name, "weight_decay value");
  DITTO_CHECK(
      0.0 <= o.beta1() && o.beta1() < 1.0,
      ValueError,
      name,
      "Invalid beta parameter at index 0: ",
      o.beta1());
  DITTO_CHECK(
      0.0 <= o.beta2() && o.beta2() < 1.0,
      ValueError,
      name,
      "Invalid beta parameter at index 1: ",
      o.beta2());
}

// One step of an optimizer's per-parameter update: fn(options, p, g,
// state) for every parameter that has a gradient, g with maximize
// applied, under no-grad and the step's trace scope.
template <typename Group, typename F>
void each_update(
    std::vector<Group>& groups,
    std::map<const TensorImpl*, std::map<std::string, Tensor>>& state,
    const char* name,
    F&& fn) {
  StepScope traced;
  autograd::NoGradGuard no_grad;
  for (auto& group : groups) {
    for (Tensor& p : group.params) {
      if (p.grad().defined()) {
        fn(group.options,
           p,
           grad_of(p, group.options.maximize(), name),
           state[p.impl().get()]);
      }
    }
  }
}

} // namespace

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& o)
    : Adamax(one_group<ParamGroup>(std::move(params), o)) {}

Adamax::Adamax(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  check_groups();
}

void Adamax::check_group(const ParamGroup& g) const {
  check_adam_like<Adamax>(g.options, g.params, "Adamax");
}

void Adamax::step() {
  each_update(
      groups_,
      state_,
      "Adamax",
      [](const auto& o, Tensor& p, Tensor g, auto& st) {
        if (st.empty()) {
          st["step"] = scalar_tensor(0.0, kFloat32);
          st["exp_avg"] = zeros_like(p);
          st["exp_inf"] = zeros_like(p);
        }
        Tensor& step_t = st["step"];
        step_t.add_(1.0);
        const double step = step_t.item<float>();
        if (o.weight_decay() != 0) {
          g = add(g, p, o.weight_decay());
        }
        Tensor& m = st["exp_avg"];
        Tensor& u = st["exp_inf"];
        m.mul_(o.beta1()).add_(g, 1 - o.beta1());
        // max(beta2 exp_inf, |g| + eps), torch's amax over the two.
        u.mul_(o.beta2());
        u.copy_(maximum(u, abs(g).add_(o.eps())));
        const double clr = o.lr() / (1 - std::pow(o.beta1(), step));
        p.addcdiv_(m, u, -clr);
      });
}

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& o)
    : NAdam(one_group<ParamGroup>(std::move(params), o)) {}

NAdam::NAdam(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  check_groups();
}

void NAdam::check_group(const ParamGroup& g) const {
  check_adam_like<NAdam>(g.options, g.params, "NAdam");
  check_nonneg(g.options.momentum_decay(), "NAdam", "momentum_decay");
}

void NAdam::step() {
  each_update(
      groups_,
      state_,
      "NAdam",
      [](const auto& o, Tensor& p, Tensor g, auto& st) {
        if (st.empty()) {
          st["step"] = scalar_tensor(0.0, kFloat32);
          st["mu_product"] = scalar_tensor(1.0, kFloat32);
          st["exp_avg"] = zeros_like(p);
          st["exp_avg_sq"] = zeros_like(p);
        }
        Tensor& step_t = st["step"];
        step_t.add_(1.0);
        const double step = step_t.item<float>();
        const double bc2 = 1 - std::pow(o.beta2(), step);
        if (o.weight_decay() != 0) {
          g = add(g, p, o.weight_decay());
        }
        const double mu =
            o.beta1() * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay()));
        const double mu_next = o.beta1() *
            (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
        Tensor& mp = st["mu_product"];
        mp.mul_(mu);
        const Tensor mp_next = mul(mul(mp, mu), mu_next);
        Tensor& m = st["exp_avg"];
        Tensor& v = st["exp_avg_sq"];
        m.mul_(o.beta1()).add_(g, 1 - o.beta1());
        v.mul_(o.beta2()).addcmul_(g, g, 1 - o.beta2());
        Tensor denom = sqrt(div(v, bc2)).add_(o.eps());
        p.addcdiv_(g, denom, -o.lr() * (1. - mu) / (1. - mp.item<float>()));
        p.addcdiv_(m, denom, -o.lr() * mu_next / (1. - mp_next.item<float>()));
      });
}

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& o)
    : RAdam(one_group<ParamGroup>(std::move(params), o)) {}

RAdam::RAdam(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  check_groups();
}

void RAdam::check_group(const ParamGroup& g) const {
  check_adam_like<RAdam>(g.options, g.params, "RAdam");
}

void RAdam::step() {
  each_update(
      groups_,
      state_,
      "RAdam",
      [](const auto& o, Tensor& p, Tensor g, auto& st) {
        if (st.empty()) {
          st["step"] = scalar_tensor(0.0, kFloat32);
          st["exp_avg"] = zeros_like(p);
          st["exp_avg_sq"] = zeros_like(p);
        }
        Tensor& step_t = st["step"];
        step_t.add_(1.0);
        const double step = step_t.item<float>();
        const double bc1 = 1 - std::pow(o.beta1(), step);
        const double bc2 = 1 - std::pow(o.beta2(), step);
        if (o.weight_decay() != 0) {
          g = add(g, p, o.weight_decay());
        }
        Tensor& m = st["exp_avg"];
        Tensor& v = st["exp_avg_sq"];
        m.mul_(o.beta1()).add_(g, 1 - o.beta1());
        v.mul_(o.beta2()).addcmul_(g, g, 1 - o.beta2());
        const Tensor corrected = div(m, bc1);
        const double rho_inf = 2 / (1 - o.beta2()) - 1;
        const double rho_t =
            rho_inf - 2 * step * std::pow(o.beta2(), step) / bc2;
        if (rho_t > 5.) {
          const double rect = std::sqrt(
              (rho_t - 4) * (rho_t - 2) * rho_inf /
              ((rho_inf - 4) * (rho_inf - 2) * rho_t));
          // Python's float / tensor is reciprocal(tensor) * float
          // (Tensor.__rtruediv__).
          const Tensor adaptive =
              mul(reciprocal(sqrt(v).add_(o.eps())), std::sqrt(bc2));
          // bias_corrected_exp_avg * lr * adaptive_lr * rect, left to right
          p.add_(mul(mul(mul(corrected, o.lr()), adaptive), rect), -1.0);
        } else {
          p.add_(mul(corrected, o.lr()), -1.0);
        }
      });
}

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& o)
    : Adadelta(one_group<ParamGroup>(std::move(params), o)) {}

Adadelta::Adadelta(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  check_groups();
}

void Adadelta::check_group(const ParamGroup& g) const {
  const auto& o = g.options;
  check_params(g.params, "Adadelta");
  check_nonneg(o.lr(), "Adadelta", "learning rate");
  check_nonneg(o.eps(), "Adadelta", "epsilon value");
  check_nonneg(o.weight_decay(), "Adadelta", "weight_decay value");
  DITTO_CHECK(
      0.0 <= o.rho() && o.rho() <= 1.0,
      ValueError,
      "Adadelta",
      "Invalid rho value: ",
      o.rho());
}

void Adadelta::step() {
  each_update(
      groups_,
      state_,
      "Adadelta",
      [](const auto& o, Tensor& p, Tensor g, auto& st) {
        if (st.empty()) {
          st["step"] = scalar_tensor(0.0, kFloat32);
          st["square_avg"] = zeros_like(p);
          st["acc_delta"] = zeros_like(p);
        }
        st["step"].add_(1.0);
        if (o.weight_decay() != 0) {
          g = add(g, p, o.weight_decay());
        }
        Tensor& sq = st["square_avg"];
        Tensor& acc = st["acc_delta"];
        sq.mul_(o.rho()).addcmul_(g, g, 1 - o.rho());
        const Tensor std_ = sqrt(add(sq, o.eps()));
        const Tensor delta = mul(div(sqrt(add(acc, o.eps())), std_), g);
        acc.mul_(o.rho()).addcmul_(delta, delta, 1 - o.rho());
        p.add_(delta, -o.lr());
      });
}

} // namespace ditto::optim
