#pragma once

// Optimizers with PyTorch 1.13's single-tensor (for-loop) update formulas,
// op for op, so results match PyTorch's to rounding (and bit for bit where
// the ops round alike: docs/nn.md). Parameters whose gradient is undefined
// are skipped (no decay, no state), as PyTorch.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ditto/core/options.h"
#include "ditto/core/state_dict.h"
#include "ditto/core/tensor.h"

namespace ditto::optim {

// The interface the schedulers and the trainer use, whatever the
// optimizer: parameter groups with an lr, and an optional momentum (SGD's
// momentum, Adam's beta1) that OneCycleLR cycles.
class DITTO_API Optimizer {
 public:
  virtual ~Optimizer();
  // Updates every parameter that has a gradient.
  virtual void step() = 0;
  // Resets every parameter's gradient: zeros in place (LibTorch's and
  // PyTorch 1.13's default), or none (undefined) when set_to_none.
  void zero_grad(bool set_to_none = false);

  virtual size_t num_groups() const = 0;
  virtual const std::vector<Tensor>& group_params(size_t group) const = 0;
  virtual double lr(size_t group) const = 0;
  virtual void set_lr(size_t group, double lr) = 0;
  // Empty for optimizers without a momentum-like option.
  virtual std::optional<double> momentum(size_t) const {
    return std::nullopt;
  }
  virtual void set_momentum(size_t, double) {}
  // Every parameter, group by group.
  std::vector<Tensor> parameters() const;
  // One parameter's state by name (PyTorch's optimizer.state[p]): the
  // optimizer's own tensors, not copies; empty before its first update.
  std::map<std::string, Tensor> param_state(const Tensor& p) const;
  // The lr a group started from (PyTorch's group['initial_lr']): set by
  // the first scheduler attached, kept by later ones.
  std::optional<double> initial_lr(size_t group) const {
    return group < initial_lr_.size() ? initial_lr_[group] : std::nullopt;
  }
  void set_initial_lr(size_t group, double lr) {
    if (initial_lr_.size() <= group) {
      initial_lr_.resize(group + 1);
    }
    initial_lr_[group] = lr;
  }

  // What a checkpoint needs to resume exactly: every parameter's state as
  // "state.<i>.<name>" (i numbers the parameters across groups, in order;
  // copies) and each group's "param_groups.<g>.lr", ".momentum" and
  // ".initial_lr" (float64 scalars; the schedulers change them). The other
  // options come from the constructor, as when the optimizer was built.
  StateDict state_dict() const;
  // Checks every key, index and shape first; on error (ValueError naming
  // the key) nothing changes.
  void load_state_dict(const StateDict& sd);

 protected:
  // Throws for a group whose options the constructor would refuse (the
  // values load_state_dict sets are checked with it).
  virtual void check_groups() const {}
  // Per-parameter state, by tensor identity.
  std::map<const TensorImpl*, std::map<std::string, Tensor>> state_;

 private:
  std::vector<std::optional<double>> initial_lr_;
};

// An optimizer whose groups carry Options (one per group).
template <typename Options>
class OptimizerWith : public Optimizer {
 public:
  struct ParamGroup {
    std::vector<Tensor> params;
    Options options;
  };
  OptimizerWith(std::vector<ParamGroup> groups) : groups_(std::move(groups)) {}

  std::vector<ParamGroup>& param_groups() {
    return groups_;
  }
  const std::vector<ParamGroup>& param_groups() const {
    return groups_;
  }
  // Appends a group (PyTorch's add_param_group), checked as the
  // constructor checks its groups.
  void add_param_group(ParamGroup g) {
    check_group(g);
    groups_.push_back(std::move(g));
    init_group(groups_.back());
  }
  size_t num_groups() const override {
    return groups_.size();
  }
  const std::vector<Tensor>& group_params(size_t g) const override {
    return groups_.at(g).params;
  }
  double lr(size_t g) const override {
    return groups_.at(g).options.lr();
  }
  void set_lr(size_t g, double v) override {
    groups_.at(g).options.lr(v);
  }

 protected:
  // Throws for invalid parameters or options.
  virtual void check_group(const ParamGroup&) const {}
  void check_groups() const override {
    for (const ParamGroup& g : groups_) {
      check_group(g);
    }
  }
  // The state an optimizer creates for a new group's parameters.
  virtual void init_group(const ParamGroup&) {}

  std::vector<ParamGroup> groups_;
};

// ---- SGD

struct DITTO_API SGDOptions {
  SGDOptions(double lr) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, momentum) = 0;
  DITTO_NN_ARG(double, dampening) = 0;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(bool, nesterov) = false;
  DITTO_NN_ARG(bool, maximize) = false;
};

class DITTO_API SGD : public OptimizerWith<SGDOptions> {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.momentum();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.momentum(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
};

// ---- Adam and AdamW

struct DITTO_API AdamOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, beta1) = 0.9;
  DITTO_NN_ARG(double, beta2) = 0.999;
  DITTO_NN_ARG(double, eps) = 1e-8;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(bool, amsgrad) = false;
  DITTO_NN_ARG(bool, maximize) = false;

 public:
  AdamOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
};

// Adam with L2 weight decay added to the gradient.
class DITTO_API Adam : public OptimizerWith<AdamOptions> {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = {});
  Adam(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.beta1();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.beta1(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
  // decoupled: AdamW's p *= 1 - lr * wd before the moments.
  void adam_step(bool decoupled);
};

struct DITTO_API AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) {
    weight_decay(1e-2);
  }
};

class DITTO_API AdamW : public Adam {
 public:
  // AdamWOptions by default (weight_decay 0.01); any AdamOptions work.
  AdamW(
      std::vector<Tensor> params,
      const AdamOptions& options = AdamWOptions());
  AdamW(std::vector<ParamGroup> groups);
  void step() override;
};

// ---- RMSprop and Adagrad

struct DITTO_API RMSpropOptions {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, alpha) = 0.99;
  DITTO_NN_ARG(double, eps) = 1e-8;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(double, momentum) = 0;
  DITTO_NN_ARG(bool, centered) = false;
  DITTO_NN_ARG(bool, maximize) = false;
};

class DITTO_API RMSprop : public OptimizerWith<RMSpropOptions> {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = {});
  RMSprop(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.momentum();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.momentum(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
};

struct DITTO_API AdagradOptions {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, lr_decay) = 0;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(double, initial_accumulator_value) = 0;
  DITTO_NN_ARG(double, eps) = 1e-10;
  DITTO_NN_ARG(bool, maximize) = false;
};

// Its state (step, sum) is created in the constructor, as PyTorch's.
class DITTO_API Adagrad : public OptimizerWith<AdagradOptions> {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = {});
  Adagrad(std::vector<ParamGroup> groups);
  void step() override;

 protected:
  void check_group(const ParamGroup& g) const override;
  void init_group(const ParamGroup& g) override;
};

// ---- Adamax, NAdam, RAdam, Adadelta: PyTorch 1.13's single-tensor
// updates op for op (torch/optim/adamax.py, nadam.py, radam.py,
// adadelta.py), states named as PyTorch's.

struct DITTO_API AdamaxOptions {
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, beta1) = 0.9;
  DITTO_NN_ARG(double, beta2) = 0.999;
  DITTO_NN_ARG(double, eps) = 1e-8;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(bool, maximize) = false;

 public:
  AdamaxOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
};

// Adam with the infinity norm: exp_inf = max(beta2 exp_inf, |g| + eps).
class DITTO_API Adamax : public OptimizerWith<AdamaxOptions> {
 public:
  Adamax(std::vector<Tensor> params, const AdamaxOptions& options = {});
  Adamax(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.beta1();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.beta1(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
};

struct DITTO_API NAdamOptions {
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, beta1) = 0.9;
  DITTO_NN_ARG(double, beta2) = 0.999;
  DITTO_NN_ARG(double, eps) = 1e-8;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(double, momentum_decay) = 4e-3;
  DITTO_NN_ARG(bool, maximize) = false;

 public:
  NAdamOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
};

// Adam with Nesterov momentum and its momentum schedule mu_t (PyTorch
// 1.13's, including its mu_product_next = mu_product mu mu_next).
class DITTO_API NAdam : public OptimizerWith<NAdamOptions> {
 public:
  NAdam(std::vector<Tensor> params, const NAdamOptions& options = {});
  NAdam(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.beta1();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.beta1(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
};

struct DITTO_API RAdamOptions {
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, beta1) = 0.9;
  DITTO_NN_ARG(double, beta2) = 0.999;
  DITTO_NN_ARG(double, eps) = 1e-8;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(bool, maximize) = false;

 public:
  RAdamOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
};

// Adam with the variance rectification term (SGD with momentum while the
// variance estimate is not tractable, rho_t <= 5).
class DITTO_API RAdam : public OptimizerWith<RAdamOptions> {
 public:
  RAdam(std::vector<Tensor> params, const RAdamOptions& options = {});
  RAdam(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.beta1();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.beta1(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
};

struct DITTO_API AdadeltaOptions {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, rho) = 0.9;
  DITTO_NN_ARG(double, eps) = 1e-6;
  DITTO_NN_ARG(double, weight_decay) = 0;
  DITTO_NN_ARG(bool, maximize) = false;
};

class DITTO_API Adadelta : public OptimizerWith<AdadeltaOptions> {
 public:
  Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options = {});
  Adadelta(std::vector<ParamGroup> groups);
  void step() override;

 protected:
  void check_group(const ParamGroup& g) const override;
};

// ---- SparseAdam

struct DITTO_API SparseAdamOptions {
  SparseAdamOptions(double lr = 1e-3) : lr_(lr) {}
  DITTO_NN_ARG(double, lr);
  DITTO_NN_ARG(double, beta1) = 0.9;
  DITTO_NN_ARG(double, beta2) = 0.999;
  DITTO_NN_ARG(double, eps) = 1e-8;
  DITTO_NN_ARG(bool, maximize) = false;

 public:
  SparseAdamOptions& betas(double b1, double b2) {
    beta1_ = b1;
    beta2_ = b2;
    return *this;
  }
};

// Adam for sparse gradients (Embedding(sparse=True)): PyTorch 1.13's
// formula, which updates the moments and the parameter only at the rows
// the gradient holds (its duplicates summed first). Dense gradients are
// refused, as PyTorch's.
class DITTO_API SparseAdam : public OptimizerWith<SparseAdamOptions> {
 public:
  SparseAdam(std::vector<Tensor> params, const SparseAdamOptions& options = {});
  SparseAdam(std::vector<ParamGroup> groups);
  void step() override;
  std::optional<double> momentum(size_t g) const override {
    return groups_.at(g).options.beta1();
  }
  void set_momentum(size_t g, double m) override {
    groups_.at(g).options.beta1(m);
  }

 protected:
  void check_group(const ParamGroup& g) const override;
};

} // namespace ditto::optim
