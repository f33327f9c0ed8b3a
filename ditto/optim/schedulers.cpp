#include "ditto/optim/schedulers.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ditto/core/error.h"
#include "ditto/ops/factories.h"

namespace ditto::optim {
namespace {

constexpr double kPi = std::numbers::pi;

template <typename F>
std::vector<double> per_group(size_t n, F f) {
  std::vector<double> out;
  for (size_t g = 0; g < n; ++g) {
    out.push_back(f(g));
  }
  return out;
}

} // namespace

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer.num_groups(); ++g) {
    if (!optimizer.initial_lr(g)) {
      optimizer.set_initial_lr(g, optimizer.lr(g));
    }
    base_lrs_.push_back(*optimizer.initial_lr(g));
  }
}

LRScheduler::~LRScheduler() = default;

void LRScheduler::initial_step() {
  step();
}

void LRScheduler::apply(const std::vector<double>& lrs) {
  for (size_t g = 0; g < lrs.size(); ++g) {
    optimizer_.set_lr(g, lrs[g]);
  }
  last_lr_ = lrs;
}

void LRScheduler::step() {
  ++last_epoch_;
  apply(get_lr());
}

namespace {

Tensor doubles_tensor(const std::vector<double>& v) {
  return tensor(v);
}

const Tensor& need(const StateDict& sd, const std::string& key) {
  const Tensor* t = sd.find(key);
  DITTO_CHECK(
      t != nullptr && t->defined(),
      ValueError,
      "LRScheduler.load_state_dict",
      "missing key \"",
      key,
      "\"");
  return *t;
}

std::vector<double> need_doubles(
    const StateDict& sd,
    const std::string& key,
    size_t n) {
  Tensor t = need(sd, key).to(kFloat64).contiguous();
  DITTO_CHECK(
      t.dim() == 1 && size_t(t.numel()) == n,
      ValueError,
      "LRScheduler.load_state_dict",
      key,
      " must hold ",
      n,
      " values, got sizes ",
      shape_str(t.sizes()));
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + n);
}

} // namespace

StateDict LRScheduler::state_dict() const {
  StateDict sd;
  sd.insert("last_epoch", scalar_tensor(last_epoch_, kInt64));
  sd.insert("base_lrs", doubles_tensor(base_lrs_));
  sd.insert("last_lr", doubles_tensor(last_lr_));
  return sd;
}

void LRScheduler::load_state_dict(const StateDict& sd) {
  const Tensor& e = need(sd, "last_epoch");
  DITTO_CHECK(
      e.numel() == 1,
      ValueError,
      "LRScheduler.load_state_dict",
      "last_epoch must be one value");
  auto base = need_doubles(sd, "base_lrs", base_lrs_.size());
  auto last = need_doubles(sd, "last_lr", base_lrs_.size());
  last_epoch_ = e.to(kInt64).item<int64_t>();
  base_lrs_ = std::move(base);
  last_lr_ = std::move(last);
}

// ---- StepLR

StepLR::StepLR(
    Optimizer& optimizer,
    int64_t step_size,
    double gamma,
    StepLRSteps steps)
    : LRScheduler(optimizer),
      step_size_(step_size),
      gamma_(gamma),
      steps_(steps) {
  DITTO_CHECK(
      step_size > 0,
      ValueError,
      "StepLR",
      "step_size must be positive, got ",
      step_size);
  initial_step();
}

int64_t StepLR::counted_epoch() const {
  return steps_ == StepLRSteps::kPython ? last_epoch_
                                        : std::max<int64_t>(last_epoch_ - 1, 0);
}

std::vector<double> StepLR::get_lr() {
  const int64_t e = counted_epoch();
  return per_group(num_groups(), [&](size_t g) {
    const double lr = group_lr(g);
    return e == 0 || e % step_size_ != 0 ? lr : lr * gamma_;
  });
}

std::optional<std::vector<double>> StepLR::closed_form_lr() {
  const int64_t e = counted_epoch();
  return per_group(num_groups(), [&](size_t g) {
    return base_lrs_[g] * std::pow(gamma_, double(e / step_size_));
  });
}

// ---- MultiStepLR

MultiStepLR::MultiStepLR(
    Optimizer& optimizer,
    std::vector<int64_t> milestones,
    double gamma)
    : LRScheduler(optimizer),
      milestones_(std::move(milestones)),
      gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  const auto n =
      std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  return per_group(num_groups(), [&](size_t g) {
    const double lr = group_lr(g);
    return n == 0 ? lr : lr * std::pow(gamma_, double(n));
  });
}

std::optional<std::vector<double>> MultiStepLR::closed_form_lr() {
  const auto k =
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
      milestones_.begin();
  return per_group(num_groups(), [&](size_t g) {
    return base_lrs_[g] * std::pow(gamma_, double(k));
  });
}

// ---- ExponentialLR

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  return per_group(num_groups(), [&](size_t g) {
    return last_epoch_ == 0 ? group_lr(g) : group_lr(g) * gamma_;
  });
}

std::optional<std::vector<double>> ExponentialLR::closed_form_lr() {
  return per_group(num_groups(), [&](size_t g) {
    return base_lrs_[g] * std::pow(gamma_, double(last_epoch_));
  });
}

// ---- CosineAnnealingLR

CosineAnnealingLR::CosineAnnealingLR(
    Optimizer& optimizer,
    int64_t T_max,
    double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  DITTO_CHECK(
      T_max > 0,
      ValueError,
      "CosineAnnealingLR",
      "T_max must be positive, got ",
      T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  const double e = double(last_epoch_), t = double(t_max_);
  return per_group(num_groups(), [&](size_t g) {
    const double lr = group_lr(g), base = base_lrs_[g];
    if (last_epoch_ == 0) {
      return lr;
    }
    if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0) {
      return lr + (base - eta_min_) * (1 - std::cos(kPi / t)) / 2;
    }
    return (1 + std::cos(kPi * e / t)) / (1 + std::cos(kPi * (e - 1) / t)) *
        (lr - eta_min_) +
        eta_min_;
  });
}

std::optional<std::vector<double>> CosineAnnealingLR::closed_form_lr() {
  return per_group(num_groups(), [&](size_t g) {
    return eta_min_ +
        (base_lrs_[g] - eta_min_) *
        (1 + std::cos(kPi * double(last_epoch_) / double(t_max_))) / 2;
  });
}

// ---- LinearLR

LinearLR::LinearLR(
    Optimizer& optimizer,
    double start_factor,
    double end_factor,
    int64_t total_iters)
    : LRScheduler(optimizer),
      start_(start_factor),
      end_(end_factor),
      total_(total_iters) {
  DITTO_CHECK(
      start_factor > 0 && start_factor <= 1,
      ValueError,
      "LinearLR",
      "Starting multiplicative factor expected to be greater than 0 and less "
      "or equal to 1.");
  DITTO_CHECK(
      end_factor >= 0 && end_factor <= 1,
      ValueError,
      "LinearLR",
      "Ending multiplicative factor expected to be between 0 and 1.");
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  return per_group(num_groups(), [&](size_t g) {
    const double lr = group_lr(g);
    if (last_epoch_ == 0) {
      return lr * start_;
    }
    if (last_epoch_ > total_) {
      return lr;
    }
    return lr *
        (1.0 +
         (end_ - start_) /
             (double(total_) * start_ +
              double(last_epoch_ - 1) * (end_ - start_)));
  });
}

std::optional<std::vector<double>> LinearLR::closed_form_lr() {
  return per_group(num_groups(), [&](size_t g) {
    return base_lrs_[g] *
        (start_ +
         (end_ - start_) * double(std::min(total_, last_epoch_)) /
             double(total_));
  });
}

// ---- LambdaLR

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> f)
    : LRScheduler(optimizer), f_(std::move(f)) {
  DITTO_CHECK(f_ != nullptr, ValueError, "LambdaLR", "no lr_lambda given");
  initial_step();
}

std::vector<double> LambdaLR::get_lr() {
  return per_group(
      num_groups(), [&](size_t g) { return base_lrs_[g] * f_(last_epoch_); });
}

// ---- OneCycleLR

namespace {
enum { kInitial, kMax, kMin, kMaxM, kBaseM };
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o)
    : LRScheduler(optimizer), o_(o) {
  DITTO_CHECK(
      o.total_steps() > 0,
      ValueError,
      "OneCycleLR",
      "Expected positive integer total_steps, but got ",
      o.total_steps());
  DITTO_CHECK(
      o.pct_start() >= 0 && o.pct_start() <= 1,
      ValueError,
      "OneCycleLR",
      "Expected float between 0 and 1 pct_start, but got ",
      o.pct_start());
  const double t = double(o.total_steps());
  const double p = o.pct_start();
  if (o.three_phase()) {
    phases_ = {
        {p * t - 1, true, kInitial, kMax, kMaxM, kBaseM},
        {2 * p * t - 2, false, kMax, kInitial, kBaseM, kMaxM},
        {t - 1, false, kInitial, kMin, kMaxM, kMaxM}};
  } else {
    phases_ = {
        {p * t - 1, true, kInitial, kMax, kMaxM, kBaseM},
        {t - 1, false, kMax, kMin, kBaseM, kMaxM}};
  }
  for (size_t g = 0; g < num_groups(); ++g) {
    const double initial = o.max_lr() / o.div_factor();
    values_.push_back(
        {initial,
         o.max_lr(),
         initial / o.final_div_factor(),
         o.max_momentum(),
         o.base_momentum()});
    optimizer.set_initial_lr(g, initial);
    base_lrs_[g] = initial;
    if (o.cycle_momentum()) {
      DITTO_CHECK(
          optimizer.momentum(g).has_value(),
          ValueError,
          "OneCycleLR",
          "optimizer must support momentum or beta1 with `cycle_momentum` "
          "option enabled");
      optimizer.set_momentum(g, o.max_momentum());
    }
  }
  initial_step();
}

std::vector<double> OneCycleLR::get_lr() {
  const double step = double(last_epoch_);
  DITTO_CHECK(
      last_epoch_ <= o_.total_steps(),
      ValueError,
      "OneCycleLR",
      "Tried to step ",
      last_epoch_ + 1,
      " times. The specified number of total steps is ",
      o_.total_steps());
  auto anneal = [&](double start, double end, double pct) {
    if (o_.anneal_cos()) {
      const double c = std::cos(kPi * pct) + 1;
      return end + (start - end) / 2.0 * c;
    }
    return (end - start) * pct + start;
  };
  std::vector<double> lrs;
  for (size_t g = 0; g < num_groups(); ++g) {
    const auto& v = values_[g];
    double start = 0, lr = 0, m = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (step <= ph.end_step || i + 1 == phases_.size()) {
        const double pct = (step - start) / (ph.end_step - start);
        lr = anneal(v[ph.start_lr], v[ph.end_lr], pct);
        m = anneal(v[ph.start_m], v[ph.end_m], pct);
        break;
      }
      start = ph.end_step;
    }
    lrs.push_back(lr);
    if (o_.cycle_momentum()) {
      optimizer_.set_momentum(g, m);
    }
  }
  return lrs;
}

// ---- SequentialLR

SequentialLR::SequentialLR(
    Optimizer& optimizer,
    std::vector<std::shared_ptr<LRScheduler>> schedulers,
    std::vector<int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  DITTO_CHECK(
      !schedulers_.empty() && milestones_.size() + 1 == schedulers_.size(),
      ValueError,
      "SequentialLR",
      "Sequential Schedulers expects number of schedulers provided to be one "
      "more than the number of milestone points, but got number of "
      "schedulers ",
      schedulers_.size(),
      " and the number of milestones to be equal to ",
      milestones_.size());
  for (const auto& s : schedulers_) {
    DITTO_CHECK(
        s != nullptr && &s->optimizer_ == &optimizer,
        ValueError,
        "SequentialLR",
        "Sequential Schedulers expects all schedulers to belong to the same "
        "optimizer");
  }
  // PyTorch: reset the lr, undo the children's initial steps, and redo the
  // first child's.
  for (size_t g = 0; g < num_groups(); ++g) {
    optimizer.set_lr(g, *optimizer.initial_lr(g));
  }
  for (auto& s : schedulers_) {
    --s->last_epoch_;
  }
  schedulers_[0]->initial_step();
  last_epoch_ = 0;
  last_lr_ = schedulers_[0]->get_last_lr();
}

StateDict SequentialLR::state_dict() const {
  StateDict sd = LRScheduler::state_dict();
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    for (const auto& [k, t] : schedulers_[i]->state_dict()) {
      sd.insert("schedulers." + std::to_string(i) + "." + k, t);
    }
  }
  return sd;
}

void SequentialLR::load_state_dict(const StateDict& sd) {
  // Every part is checked (on scratch copies of the state) before any
  // scheduler changes.
  std::vector<StateDict> parts(schedulers_.size());
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const std::string prefix = "schedulers." + std::to_string(i) + ".";
    for (const auto& [k, t] : sd) {
      if (k.rfind(prefix, 0) == 0) {
        parts[i].insert(k.substr(prefix.size()), t);
      }
    }
    need(parts[i], "last_epoch");
    need_doubles(parts[i], "base_lrs", base_lrs_.size());
    need_doubles(parts[i], "last_lr", base_lrs_.size());
  }
  LRScheduler::load_state_dict(sd);
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    schedulers_[i]->load_state_dict(parts[i]);
  }
}

std::vector<double> SequentialLR::get_lr() {
  const size_t idx =
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
      milestones_.begin();
  LRScheduler& s = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    // PyTorch's step(0): the closed form at epoch 0 if there is one.
    s.last_epoch_ = 0;
    auto closed = s.closed_form_lr();
    s.apply(closed ? *closed : s.get_lr());
  } else {
    s.step();
  }
  return s.get_last_lr();
}

} // namespace ditto::optim
