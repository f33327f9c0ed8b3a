#include "ditto/optim/optimizer.h"

#include <cmath>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/sparse.h"
#include "ditto/trace/trace.h"

namespace ditto::optim {
namespace {

// An optimizer step: its ops are traced in the optimizer phase, and the
// trace's step counter advances when it ends (ditto/trace).
struct StepScope {
  trace::PhaseGuard phase{trace::Phase::kOptimizer};
  ~StepScope() {
    trace::advance_step();
  }
};

void check_params(const std::vector<Tensor>& params, const char* opt) {
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

void check_nonneg(double v, const char* opt, const char* what) {
  DITTO_CHECK(v >= 0.0, ValueError, opt, "Invalid ", what, " value: ", v);
}

// The gradient as the update reads it: negated for maximize.
// Sparse gradients (Embedding(sparse=True)) are refused by the optimizers
// whose formulas read every element: PyTorch's message names the
// alternative.
Tensor grad_of(const Tensor& p, bool maximize, const char* opt) {
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

} // namespace

Optimizer::~Optimizer() = default;

void Optimizer::zero_grad(bool set_to_none) {
  for (size_t g = 0; g < num_groups(); ++g) {
    for (const Tensor& p : group_params(g)) {
      Tensor handle = p;
      Tensor& grad = handle.mutable_grad();
      if (!grad.defined()) {
        continue;
      }
      if (set_to_none) {
        grad = Tensor();
      } else {
        autograd::NoGradGuard no_grad;
        grad = grad.detach();
        grad.zero_();
      }
    }
  }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (size_t g = 0; g < num_groups(); ++g) {
    const auto& ps = group_params(g);
    out.insert(out.end(), ps.begin(), ps.end());
  }
  return out;
}

std::map<std::string, Tensor> Optimizer::param_state(const Tensor& p) const {
  auto it = state_.find(p.impl().get());
  return it == state_.end() ? std::map<std::string, Tensor>{} : it->second;
}

StateDict Optimizer::state_dict() const {
  StateDict sd;
  const std::vector<Tensor> params = parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = state_.find(params[i].impl().get());
    if (it == state_.end()) {
      continue;
    }
    for (const auto& [name, t] : it->second) {
      sd.insert("state." + std::to_string(i) + "." + name, t.detach().clone());
    }
  }
  for (size_t g = 0; g < num_groups(); ++g) {
    const std::string p = "param_groups." + std::to_string(g) + ".";
    sd.insert(p + "lr", scalar_tensor(lr(g), kFloat64));
    if (auto m = momentum(g)) {
      sd.insert(p + "momentum", scalar_tensor(*m, kFloat64));
    }
    if (auto i = initial_lr(g)) {
      sd.insert(p + "initial_lr", scalar_tensor(*i, kFloat64));
    }
  }
  return sd;
}

void Optimizer::load_state_dict(const StateDict& sd) {
  const char* op = "Optimizer.load_state_dict";
  const std::vector<Tensor> params = parameters();
  // Parse and check everything first.
  std::map<size_t, std::map<std::string, Tensor>> state;
  std::map<size_t, std::map<std::string, double>> groups;
  for (const auto& [key, t] : sd) {
    DITTO_CHECK(t.defined(), ValueError, op, "undefined tensor at ", key);
    const size_t dot1 = key.find('.');
    const size_t dot2 =
        dot1 == std::string::npos ? dot1 : key.find('.', dot1 + 1);
    DITTO_CHECK(
        dot2 != std::string::npos,
        ValueError,
        op,
        "unexpected key \"",
        key,
        "\"");
    const std::string kind = key.substr(0, dot1);
    const std::string index = key.substr(dot1 + 1, dot2 - dot1 - 1);
    const std::string name = key.substr(dot2 + 1);
    size_t n = 0;
    bool numeric = !index.empty() && index.size() < 10;
    for (char ch : index) {
      numeric = numeric && ch >= '0' && ch <= '9';
    }
    DITTO_CHECK(
        numeric && (kind == "state" || kind == "param_groups"),
        ValueError,
        op,
        "unexpected key \"",
        key,
        "\"");
    n = size_t(std::stoul(index));
    if (kind == "state") {
      DITTO_CHECK(
          n < params.size(),
          ValueError,
          op,
          "state for parameter ",
          n,
          " but the optimizer has ",
          params.size(),
          " parameters");
      DITTO_CHECK(
          t.dim() == 0 || t.sizes() == params[n].sizes(),
          ValueError,
          op,
          "size mismatch for ",
          key,
          ": ",
          shape_str(t.sizes()),
          " for a parameter of shape ",
          shape_str(params[n].sizes()));
      if (name == "step") {
        // A step counter the optimizer would never have reached.
        const double step = t.numel() == 1 ? t.item<double>() : -1.0;
        DITTO_CHECK(
            std::isfinite(step) && step >= 0 && step == std::floor(step),
            ValueError,
            op,
            key,
            " must be a count of steps (a non-negative integer), got ",
            t.numel() == 1 ? std::to_string(step) : shape_str(t.sizes()));
      }
      state[n][name] = t;
    } else {
      DITTO_CHECK(
          n < num_groups() &&
              (name == "lr" || name == "momentum" || name == "initial_lr") &&
              t.numel() == 1,
          ValueError,
          op,
          "unexpected key \"",
          key,
          "\" (the optimizer has ",
          num_groups(),
          " groups)");
      groups[n][name] = t.item<double>();
      DITTO_CHECK(
          name != "initial_lr" ||
              (std::isfinite(groups[n][name]) && groups[n][name] >= 0),
          ValueError,
          op,
          key,
          " must be a non-negative learning rate, got ",
          groups[n][name]);
    }
  }
  // The groups' values as the constructor checks them (an lr of -1 or NaN,
  // a beta1 of 2): set, checked, and put back if refused.
  {
    std::vector<std::pair<double, std::optional<double>>> before;
    for (size_t g = 0; g < num_groups(); ++g) {
      before.emplace_back(lr(g), momentum(g));
    }
    auto restore = [&] {
      for (size_t g = 0; g < before.size(); ++g) {
        set_lr(g, before[g].first);
        if (before[g].second) {
          set_momentum(g, *before[g].second);
        }
      }
    };
    try {
      for (auto& [g, values] : groups) {
        for (auto& [name, v] : values) {
          if (name == "lr") {
            set_lr(g, v);
          } else if (name == "momentum") {
            set_momentum(g, v);
          }
        }
      }
      check_groups();
    } catch (const Error& e) {
      restore();
      detail::throw_error<ValueError>(
          op, "the state's parameter groups are refused: ", e.what());
    }
    restore();
  }
  // Apply.
  autograd::NoGradGuard no_grad;
  state_.clear();
  for (auto& [i, entries] : state) {
    auto& dst = state_[params[i].impl().get()];
    for (auto& [name, t] : entries) {
      // As PyTorch: the state follows its parameter's device and dtype
      // (0-dim entries such as step counters stay as they are).
      dst[name] = t.dim() == 0
          ? t.detach().clone()
          : t.detach().clone().to(params[i].device(), params[i].dtype());
    }
  }
  for (auto& [g, values] : groups) {
    for (auto& [name, v] : values) {
      if (name == "lr") {
        set_lr(g, v);
      } else if (name == "momentum") {
        set_momentum(g, v);
      } else {
        set_initial_lr(g, v);
      }
    }
  }
}

// ---- SGD

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : SGD(one_group<ParamGroup>(std::move(params), o)) {}

SGD::SGD(std::vector<ParamGroup> groups) : OptimizerWith(std::move(groups)) {
  for (const auto& g : groups_) {
    check_group(g);
  }
}

void SGD::check_group(const ParamGroup& g) const {
  const auto& o = g.options;
  check_params(g.params, "SGD");
  check_nonneg(o.lr(), "SGD", "learning rate");
  check_nonneg(o.momentum(), "SGD", "momentum");
  check_nonneg(o.weight_decay(), "SGD", "weight_decay");
  DITTO_CHECK(
      !o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
      ValueError,
      "SGD",
      "Nesterov momentum requires a momentum and zero dampening");
}

namespace {

// SGD on a sparse gradient (PyTorch's formula without momentum and weight
// decay): p += -lr * g, g's duplicates summed first in their stored order.
void sparse_sgd_update(Tensor& p, const SGDOptions& o) {
  DITTO_CHECK(
      o.momentum() == 0 && o.weight_decay() == 0,
      ValueError,
      "SGD",
      "sparse gradients take momentum = 0 and weight_decay = 0 only, got "
      "momentum ",
      o.momentum(),
      " and weight_decay ",
      o.weight_decay());
  p.add_(p.grad(), o.maximize() ? o.lr() : -o.lr());
}

} // namespace

void SGD::step() {
  StepScope traced;
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    const auto& o = group.options;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) {
        continue;
      }
      if (p.grad().is_sparse()) {
        sparse_sgd_update(p, o);
        continue;
      }
      Tensor d = grad_of(p, o.maximize(), "SGD");
      if (o.weight_decay() != 0) {
        d = add(d, p, o.weight_decay());
      }
      if (o.momentum() != 0) {
        auto& st = state_[p.impl().get()];
        auto it = st.find("momentum_buffer");
        Tensor buf;
        if (it == st.end()) {
          buf = d.clone();
          st["momentum_buffer"] = buf;
        } else {
          buf = it->second;
          buf.mul_(o.momentum()).add_(d, 1 - o.dampening());
        }
        d = o.nesterov() ? add(d, buf, o.momentum()) : buf;
      }
      p.add_(d, -o.lr());
    }
  }
}

// ---- Adam / AdamW

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o)
    : Adam(one_group<ParamGroup>(std::move(params), o)) {}

Adam::Adam(std::vector<ParamGroup> groups) : OptimizerWith(std::move(groups)) {
  for (const auto& g : groups_) {
    check_group(g);
  }
}

void Adam::check_group(const ParamGroup& g) const {
  const auto& o = g.options;
  check_params(g.params, "Adam");
  check_nonneg(o.lr(), "Adam", "learning rate");
  check_nonneg(o.eps(), "Adam", "epsilon");
  check_nonneg(o.weight_decay(), "Adam", "weight_decay");
  DITTO_CHECK(
      o.beta1() >= 0 && o.beta1() < 1,
      ValueError,
      "Adam",
      "Invalid beta parameter at index 0: ",
      o.beta1());
  DITTO_CHECK(
      o.beta2() >= 0 && o.beta2() < 1,
      ValueError,
      "Adam",
      "Invalid beta parameter at index 1: ",
      o.beta2());
}

void Adam::step() {
  StepScope traced;
  adam_step(false);
}

void Adam::adam_step(bool decoupled) {
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    const auto& o = group.options;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) {
        continue;
      }
      Tensor g = grad_of(p, o.maximize(), "Adam");
      auto& st = state_[p.impl().get()];
      if (st.empty()) {
        st["step"] = scalar_tensor(0.0, kFloat32);
        st["exp_avg"] = zeros_like(p);
        st["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad()) {
          st["max_exp_avg_sq"] = zeros_like(p);
        }
      }
      Tensor& step_t = st["step"];
      step_t.add_(1.0);
      if (decoupled) {
        p.mul_(1 - o.lr() * o.weight_decay());
      } else if (o.weight_decay() != 0) {
        g = add(g, p, o.weight_decay());
      }
      Tensor& m = st["exp_avg"];
      Tensor& v = st["exp_avg_sq"];
      m.mul_(o.beta1()).add_(g, 1 - o.beta1());
      v.mul_(o.beta2()).addcmul_(g, g, 1 - o.beta2());
      // PyTorch keeps step as a float32 tensor and reads it back.
      const double step = step_t.item<float>();
      const double bc1 = 1 - std::pow(o.beta1(), step);
      const double bc2 = 1 - std::pow(o.beta2(), step);
      const double step_size = o.lr() / bc1;
      const double bc2_sqrt = std::sqrt(bc2);
      Tensor denom;
      if (o.amsgrad()) {
        Tensor& vmax = st["max_exp_avg_sq"];
        vmax.copy_(maximum(vmax, v));
        denom = div(sqrt(vmax), bc2_sqrt).add_(o.eps());
      } else {
        denom = div(sqrt(v), bc2_sqrt).add_(o.eps());
      }
      p.addcdiv_(m, denom, -step_size);
    }
  }
}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions& o)
    : Adam(std::move(params), o) {}

AdamW::AdamW(std::vector<ParamGroup> groups) : Adam(std::move(groups)) {}

void AdamW::step() {
  StepScope traced;
  adam_step(true);
}

// ---- SparseAdam

SparseAdam::SparseAdam(std::vector<Tensor> params, const SparseAdamOptions& o)
    : SparseAdam(one_group<ParamGroup>(std::move(params), o)) {}

SparseAdam::SparseAdam(std::vector<ParamGroup> groups)
    : OptimizerWith(std::move(groups)) {
  for (const auto& g : groups_) {
    check_group(g);
  }
}

void SparseAdam::check_group(const ParamGroup& g) const {
  const auto& o = g.options;
  check_params(g.params, "SparseAdam");
  for (const Tensor& p : g.params) {
    DITTO_CHECK(
        !p.is_sparse(),
        ValueError,
        "SparseAdam",
        "SparseAdam requires dense parameter tensors");
  }
  check_nonneg(o.lr(), "SparseAdam", "learning rate");
  check_nonneg(o.eps(), "SparseAdam", "epsilon");
  DITTO_CHECK(
      o.beta1() >= 0 && o.beta1() < 1,
      ValueError,
      "SparseAdam",
      "Invalid beta parameter at index 0: ",
      o.beta1());
  DITTO_CHECK(
      o.beta2() >= 0 && o.beta2() < 1,
      ValueError,
      "SparseAdam",
      "Invalid beta parameter at index 1: ",
      o.beta2());
}

void SparseAdam::step() {
  StepScope traced;
  autograd::NoGradGuard no_grad;
  // Every gradient is checked before any parameter changes.
  for (const auto& group : groups_) {
    for (const Tensor& p : group.params) {
      DITTO_CHECK(
          !p.grad().defined() || p.grad().is_sparse(),
          ValueError,
          "SparseAdam",
          "SparseAdam does not support dense gradients, please consider "
          "Adam instead");
    }
  }
  for (auto& group : groups_) {
    const auto& o = group.options;
    for (Tensor& p : group.params) {
      if (!p.grad().defined()) {
        continue;
      }
      // PyTorch's sparse_adam, op for op: the moments' old values at the
      // gradient's rows, their updates, and the step from those.
      // maximize negates the coalesced values (the same bits as negating
      // every entry first: rounding is symmetric in sign).
      const Tensor grad = p.grad().coalesce();
      const Tensor idx = grad._indices();
      const Tensor gv = o.maximize() ? neg(grad._values()) : grad._values();
      auto& st = state_[p.impl().get()];
      if (st.empty()) {
        st["step"] = scalar_tensor(0, kInt64);
        st["exp_avg"] = zeros_like(p);
        st["exp_avg_sq"] = zeros_like(p);
      }
      Tensor& step_t = st["step"];
      step_t.add_(1);
      if (gv.numel() == 0) {
        continue;
      }
      auto sparse_like = [&](const Tensor& values) {
        return detail::make_sparse(idx, values, p.sizes(), true);
      };
      const int64_t sd = idx.size(0);
      Tensor& m = st["exp_avg"];
      Tensor& v = st["exp_avg_sq"];
      const Tensor old_m = detail::values_at(m, idx, sd);
      Tensor m_update = sub(gv, old_m).mul_(1 - o.beta1());
      m.add_(sparse_like(m_update));
      const Tensor old_v = detail::values_at(v, idx, sd);
      Tensor v_update = mul(gv, gv).sub_(old_v).mul_(1 - o.beta2());
      v.add_(sparse_like(v_update));
      const Tensor numer = m_update.add_(old_m);
      v_update.add_(old_v);
      const Tensor denom = sqrt(v_update).add_(o.eps());
      const double step = double(step_t.item<int64_t>());
      const double bc1 = 1 - std::pow(o.beta1(), step);
      const double bc2 = 1 - std::pow(o.beta2(), step);
      const double step_size = o.lr() * std::sqrt(bc2) / bc1;
      p.add_(sparse_like(mul(div(numer, denom), -step_size)));
    }
  }
}

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
