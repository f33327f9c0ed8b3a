#include "ditto/optim/optimizer.h"
#include "ditto/optim/detail/optim_util.h"

#include <cmath>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/sparse.h"
#include "ditto/trace/trace.h"

namespace ditto::optim {
using namespace optim_detail;

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

} // namespace ditto::optim
