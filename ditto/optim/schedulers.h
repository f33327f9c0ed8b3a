#pragma once

// Learning-rate schedulers with PyTorch 1.13's arithmetic: step() uses the
// recursive (chainable) forms PyTorch's step() uses, in double, so the lr
// sequences are PyTorch's to the last bit. Construction performs the first
// step (last_epoch -1 -> 0), as PyTorch.

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "ditto/optim/optimizer.h"

namespace ditto::optim {

class DITTO_API LRScheduler {
 public:
  virtual ~LRScheduler();
  // Advances one epoch (or step) and writes the new lr into every group.
  void step();
  // The lr of every group now in force.
  std::vector<double> get_last_lr() const {
    return last_lr_;
  }
  int64_t last_epoch() const {
    return last_epoch_;
  }
  const std::vector<double>& base_lrs() const {
    return base_lrs_;
  }
  // last_epoch, base_lrs and last_lr (float64), with the sub-schedulers'
  // under "schedulers.<i>." for SequentialLR. Restoring it together with
  // the optimizer's state_dict resumes the lr sequence exactly.
  virtual StateDict state_dict() const;
  // ValueError naming the key on a missing or malformed entry; nothing
  // changes then.
  virtual void load_state_dict(const StateDict& sd);

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  // Call at the end of the derived constructor: PyTorch's initial step.
  void initial_step();
  // The lr of every group at last_epoch_ (already advanced).
  virtual std::vector<double> get_lr() = 0;
  // The closed form at last_epoch_, for schedulers that have one (used
  // when SequentialLR restarts a scheduler at epoch 0).
  virtual std::optional<std::vector<double>> closed_form_lr() {
    return std::nullopt;
  }
  void apply(const std::vector<double>& lrs);
  double group_lr(size_t g) const {
    return optimizer_.lr(g);
  }
  size_t num_groups() const {
    return optimizer_.num_groups();
  }

  Optimizer& optimizer_;
  int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  friend class SequentialLR;
};

// lr * gamma every step_size epochs.
// How StepLR counts its steps. LibTorch's C++ StepLR (torch::optim::StepLR,
// the default here, for LibTorch programs) decays on the step() after
// Python's: after k calls its lr is base * gamma^((k - 1) / step_size),
// Python's torch.optim.lr_scheduler.StepLR's base * gamma^(k / step_size).
// ditto's Python binding and `ditto train` use kPython.
enum class StepLRSteps { kLibTorch, kPython };

class DITTO_API StepLR : public LRScheduler {
 public:
  StepLR(
      Optimizer& optimizer,
      int64_t step_size,
      double gamma = 0.1,
      StepLRSteps steps = StepLRSteps::kLibTorch);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  // The epoch the formula reads: last_epoch_, one less for LibTorch's.
  int64_t counted_epoch() const;
  int64_t step_size_;
  double gamma_;
  StepLRSteps steps_;
};

// lr * gamma^(times e appears in milestones) at each milestone e.
class DITTO_API MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(
      Optimizer& optimizer,
      std::vector<int64_t> milestones,
      double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

class DITTO_API ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  double gamma_;
};

class DITTO_API CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  int64_t t_max_;
  double eta_min_;
};

class DITTO_API LinearLR : public LRScheduler {
 public:
  LinearLR(
      Optimizer& optimizer,
      double start_factor = 1.0 / 3,
      double end_factor = 1.0,
      int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  double start_, end_;
  int64_t total_;
};

// base_lr * f(epoch).
class DITTO_API LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> f);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::function<double(int64_t)> f_;
};

struct DITTO_API OneCycleLROptions {
  OneCycleLROptions(double max_lr, int64_t total_steps)
      : max_lr_(max_lr), total_steps_(total_steps) {}
  DITTO_NN_ARG(double, max_lr);
  DITTO_NN_ARG(int64_t, total_steps);
  DITTO_NN_ARG(double, pct_start) = 0.3;
  // true: cosine annealing, false: linear.
  DITTO_NN_ARG(bool, anneal_cos) = true;
  DITTO_NN_ARG(bool, cycle_momentum) = true;
  DITTO_NN_ARG(double, base_momentum) = 0.85;
  DITTO_NN_ARG(double, max_momentum) = 0.95;
  DITTO_NN_ARG(double, div_factor) = 25.0;
  DITTO_NN_ARG(double, final_div_factor) = 1e4;
  DITTO_NN_ARG(bool, three_phase) = false;
};

// PyTorch's OneCycleLR: the optimizer's own lr is replaced by
// max_lr / div_factor; with cycle_momentum the momentum (SGD's momentum,
// Adam's beta1) cycles between max_momentum and base_momentum.
class DITTO_API OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    bool lr_up; // start_lr: initial -> max, else max -> ...
    int start_lr, end_lr, start_m, end_m; // indices into the group values
  };
  OneCycleLROptions o_;
  std::vector<Phase> phases_;
  // Per group: {initial_lr, max_lr, min_lr, max_momentum, base_momentum}.
  std::vector<std::array<double, 5>> values_;
};

// Runs schedulers one after another, switching at the milestones.
class DITTO_API SequentialLR : public LRScheduler {
 public:
  SequentialLR(
      Optimizer& optimizer,
      std::vector<std::shared_ptr<LRScheduler>> schedulers,
      std::vector<int64_t> milestones);
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& sd) override;

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

} // namespace ditto::optim
