// ditto._C._optim: the C++ optimizers (SGD, Adam, AdamW, RMSprop, Adagrad,
// SparseAdam)
// and schedulers that ditto.optim wraps, so a Python step updates the
// parameters with the C++ ops, bit for bit. Hyperparameters are read and
// written per group by name (ditto.optim's param_groups are views of them).

#include <pybind11/functional.h>

#include "python/src/common.h"

namespace ditto::python {
namespace {

using optim::Optimizer;

[[noreturn]] void unknown_option(const char* opt, const std::string& key) {
  throw KeyError(
      detail::str_cat("[", opt, "] no hyperparameter \"", key, "\""));
}

// ---- the options by name, as torch's param_groups spell them

py::object get_option(const optim::SGDOptions& o, const std::string& k) {
  if (k == "lr") {
    return py::float_(o.lr());
  }
  if (k == "momentum") {
    return py::float_(o.momentum());
  }
  if (k == "dampening") {
    return py::float_(o.dampening());
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  if (k == "nesterov") {
    return py::bool_(o.nesterov());
  }
  if (k == "maximize") {
    return py::bool_(o.maximize());
  }
  unknown_option("SGD", k);
}

void set_option(optim::SGDOptions& o, const std::string& k, py::handle v) {
  if (k == "lr") {
    o.lr(v.cast<double>());
  } else if (k == "momentum") {
    o.momentum(v.cast<double>());
  } else if (k == "dampening") {
    o.dampening(v.cast<double>());
  } else if (k == "weight_decay") {
    o.weight_decay(v.cast<double>());
  } else if (k == "nesterov") {
    o.nesterov(v.cast<bool>());
  } else if (k == "maximize") {
    o.maximize(v.cast<bool>());
  } else {
    unknown_option("SGD", k);
  }
}

// The options Adam and SparseAdam share (lr, betas, eps, maximize): k's
// value, or a null object when k is not one of them.
template <typename O>
py::object get_adam_like(const O& o, const std::string& k) {
  if (k == "lr") {
    return py::float_(o.lr());
  }
  if (k == "betas") {
    return py::make_tuple(o.beta1(), o.beta2());
  }
  if (k == "eps") {
    return py::float_(o.eps());
  }
  if (k == "maximize") {
    return py::bool_(o.maximize());
  }
  return py::object();
}

// Sets k when it is one of the shared options; false otherwise.
template <typename O>
bool set_adam_like(O& o, const std::string& k, py::handle v) {
  if (k == "lr") {
    o.lr(v.cast<double>());
  } else if (k == "betas") {
    auto b = v.cast<std::pair<double, double>>();
    o.betas(b.first, b.second);
  } else if (k == "eps") {
    o.eps(v.cast<double>());
  } else if (k == "maximize") {
    o.maximize(v.cast<bool>());
  } else {
    return false;
  }
  return true;
}

py::object get_option(const optim::AdamOptions& o, const std::string& k) {
  if (py::object v = get_adam_like(o, k)) {
    return v;
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  if (k == "amsgrad") {
    return py::bool_(o.amsgrad());
  }
  unknown_option("Adam", k);
}

void set_option(optim::AdamOptions& o, const std::string& k, py::handle v) {
  if (set_adam_like(o, k, v)) {
    return;
  }
  if (k == "weight_decay") {
    o.weight_decay(v.cast<double>());
  } else if (k == "amsgrad") {
    o.amsgrad(v.cast<bool>());
  } else {
    unknown_option("Adam", k);
  }
}

py::object get_option(const optim::SparseAdamOptions& o, const std::string& k) {
  if (py::object v = get_adam_like(o, k)) {
    return v;
  }
  unknown_option("SparseAdam", k);
}

void set_option(
    optim::SparseAdamOptions& o,
    const std::string& k,
    py::handle v) {
  if (!set_adam_like(o, k, v)) {
    unknown_option("SparseAdam", k);
  }
}

py::object get_option(const optim::RMSpropOptions& o, const std::string& k) {
  if (k == "lr") {
    return py::float_(o.lr());
  }
  if (k == "alpha") {
    return py::float_(o.alpha());
  }
  if (k == "eps") {
    return py::float_(o.eps());
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  if (k == "momentum") {
    return py::float_(o.momentum());
  }
  if (k == "centered") {
    return py::bool_(o.centered());
  }
  if (k == "maximize") {
    return py::bool_(o.maximize());
  }
  unknown_option("RMSprop", k);
}

void set_option(optim::RMSpropOptions& o, const std::string& k, py::handle v) {
  if (k == "lr") {
    o.lr(v.cast<double>());
  } else if (k == "alpha") {
    o.alpha(v.cast<double>());
  } else if (k == "eps") {
    o.eps(v.cast<double>());
  } else if (k == "weight_decay") {
    o.weight_decay(v.cast<double>());
  } else if (k == "momentum") {
    o.momentum(v.cast<double>());
  } else if (k == "centered") {
    o.centered(v.cast<bool>());
  } else if (k == "maximize") {
    o.maximize(v.cast<bool>());
  } else {
    unknown_option("RMSprop", k);
  }
}

py::object get_option(const optim::AdagradOptions& o, const std::string& k) {
  if (k == "lr") {
    return py::float_(o.lr());
  }
  if (k == "lr_decay") {
    return py::float_(o.lr_decay());
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  if (k == "initial_accumulator_value") {
    return py::float_(o.initial_accumulator_value());
  }
  if (k == "eps") {
    return py::float_(o.eps());
  }
  if (k == "maximize") {
    return py::bool_(o.maximize());
  }
  unknown_option("Adagrad", k);
}

void set_option(optim::AdagradOptions& o, const std::string& k, py::handle v) {
  if (k == "lr") {
    o.lr(v.cast<double>());
  } else if (k == "lr_decay") {
    o.lr_decay(v.cast<double>());
  } else if (k == "weight_decay") {
    o.weight_decay(v.cast<double>());
  } else if (k == "initial_accumulator_value") {
    o.initial_accumulator_value(v.cast<double>());
  } else if (k == "eps") {
    o.eps(v.cast<double>());
  } else if (k == "maximize") {
    o.maximize(v.cast<bool>());
  } else {
    unknown_option("Adagrad", k);
  }
}

// Adamax, NAdam, RAdam: Adam's betas, lr, eps, maximize, and their own.
py::object get_option(const optim::AdamaxOptions& o, const std::string& k) {
  if (py::object v = get_adam_like(o, k)) {
    return v;
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  unknown_option("Adamax", k);
}

void set_option(optim::AdamaxOptions& o, const std::string& k, py::handle v) {
  if (set_adam_like(o, k, v)) {
    return;
  }
  if (k != "weight_decay") {
    unknown_option("Adamax", k);
  }
  o.weight_decay(v.cast<double>());
}

py::object get_option(const optim::NAdamOptions& o, const std::string& k) {
  if (py::object v = get_adam_like(o, k)) {
    return v;
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  if (k == "momentum_decay") {
    return py::float_(o.momentum_decay());
  }
  unknown_option("NAdam", k);
}

void set_option(optim::NAdamOptions& o, const std::string& k, py::handle v) {
  if (set_adam_like(o, k, v)) {
    return;
  }
  if (k == "weight_decay") {
    o.weight_decay(v.cast<double>());
  } else if (k == "momentum_decay") {
    o.momentum_decay(v.cast<double>());
  } else {
    unknown_option("NAdam", k);
  }
}

py::object get_option(const optim::RAdamOptions& o, const std::string& k) {
  if (py::object v = get_adam_like(o, k)) {
    return v;
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  unknown_option("RAdam", k);
}

void set_option(optim::RAdamOptions& o, const std::string& k, py::handle v) {
  if (set_adam_like(o, k, v)) {
    return;
  }
  if (k != "weight_decay") {
    unknown_option("RAdam", k);
  }
  o.weight_decay(v.cast<double>());
}

py::object get_option(const optim::AdadeltaOptions& o, const std::string& k) {
  if (k == "lr") {
    return py::float_(o.lr());
  }
  if (k == "rho") {
    return py::float_(o.rho());
  }
  if (k == "eps") {
    return py::float_(o.eps());
  }
  if (k == "weight_decay") {
    return py::float_(o.weight_decay());
  }
  if (k == "maximize") {
    return py::bool_(o.maximize());
  }
  unknown_option("Adadelta", k);
}

void set_option(optim::AdadeltaOptions& o, const std::string& k, py::handle v) {
  if (k == "lr") {
    o.lr(v.cast<double>());
  } else if (k == "rho") {
    o.rho(v.cast<double>());
  } else if (k == "eps") {
    o.eps(v.cast<double>());
  } else if (k == "weight_decay") {
    o.weight_decay(v.cast<double>());
  } else if (k == "maximize") {
    o.maximize(v.cast<bool>());
  } else {
    unknown_option("Adadelta", k);
  }
}

// One torch-style group: a dict with "params" and hyperparameters (those
// missing keep defaults').
template <typename Group, typename Options>
Group make_group(py::handle h, const Options& defaults) {
  py::dict d = h.cast<py::dict>();
  Options opts = defaults;
  for (auto [k, v] : d) {
    std::string key = py::cast<std::string>(k);
    if (key != "params") {
      set_option(opts, key, v);
    }
  }
  return Group{d["params"].cast<std::vector<Tensor>>(), std::move(opts)};
}

// An optimizer built from torch-style groups: dicts with "params" and
// every hyperparameter (ditto.optim fills in the defaults).
template <typename Opt, typename Options>
void bind_optimizer(py::module_& o, const char* name, Options defaults) {
  using Group = typename Opt::ParamGroup;
  py::class_<Opt, Optimizer, std::shared_ptr<Opt>>(o, name)
      .def(py::init([defaults](const py::list& groups) {
        std::vector<Group> gs;
        for (py::handle h : groups) {
          gs.push_back(make_group<Group>(h, defaults));
        }
        return std::make_shared<Opt>(std::move(gs));
      }))
      .def(
          "add_param_group",
          [defaults](Opt& opt, const py::dict& group) {
            opt.add_param_group(make_group<Group>(group, defaults));
          })
      .def(
          "get_option",
          [](const Opt& opt, size_t g, const std::string& key) {
            return get_option(opt.param_groups().at(g).options, key);
          })
      .def(
          "set_option",
          [](Opt& opt, size_t g, const std::string& key, py::handle v) {
            set_option(opt.param_groups().at(g).options, key, v);
          });
}

void init_optimizers(py::module_& o) {
  py::class_<Optimizer, std::shared_ptr<Optimizer>>(o, "Optimizer")
      .def("step", &Optimizer::step, ReleaseGil())
      .def(
          "zero_grad",
          &Optimizer::zero_grad,
          py::arg("set_to_none") = true,
          ReleaseGil())
      .def("num_groups", &Optimizer::num_groups)
      .def("group_params", &Optimizer::group_params)
      .def("initial_lr", &Optimizer::initial_lr)
      .def("set_initial_lr", &Optimizer::set_initial_lr)
      .def("param_state", &Optimizer::param_state)
      .def(
          "state_dict",
          [](const Optimizer& opt) { return opt.state_dict().items(); },
          ReleaseGil())
      .def(
          "load_state_dict",
          [](Optimizer& opt, const NamedTensors& items) {
            opt.load_state_dict(StateDict(items));
          },
          ReleaseGil());
  bind_optimizer<optim::SGD>(o, "SGD", optim::SGDOptions(0.0));
  bind_optimizer<optim::Adam>(o, "Adam", optim::AdamOptions());
  bind_optimizer<optim::AdamW>(o, "AdamW", optim::AdamOptions());
  bind_optimizer<optim::RMSprop>(o, "RMSprop", optim::RMSpropOptions());
  bind_optimizer<optim::Adagrad>(o, "Adagrad", optim::AdagradOptions());
  bind_optimizer<optim::Adamax>(o, "Adamax", optim::AdamaxOptions());
  bind_optimizer<optim::NAdam>(o, "NAdam", optim::NAdamOptions());
  bind_optimizer<optim::RAdam>(o, "RAdam", optim::RAdamOptions());
  bind_optimizer<optim::Adadelta>(o, "Adadelta", optim::AdadeltaOptions());
  bind_optimizer<optim::SparseAdam>(
      o, "SparseAdam", optim::SparseAdamOptions());
}

// ---- schedulers: each keeps its optimizer alive (keep_alive<1, 2>);
// SequentialLR holds its schedulers.

void init_schedulers(py::module_& o) {
  using optim::LRScheduler;
  py::class_<LRScheduler, std::shared_ptr<LRScheduler>>(o, "LRScheduler")
      .def("step", &LRScheduler::step)
      .def("get_last_lr", &LRScheduler::get_last_lr)
      .def_property_readonly("last_epoch", &LRScheduler::last_epoch)
      .def_property_readonly("base_lrs", &LRScheduler::base_lrs)
      .def(
          "state_dict",
          [](const LRScheduler& s) { return s.state_dict().items(); })
      .def("load_state_dict", [](LRScheduler& s, const NamedTensors& items) {
        s.load_state_dict(StateDict(items));
      });
  auto keep = py::keep_alive<1, 2>();
  // Python's stepping (LibTorch's C++ StepLR decays one step later).
  py::class_<optim::StepLR, LRScheduler, std::shared_ptr<optim::StepLR>>(
      o, "StepLR")
      .def(
          py::init([](Optimizer& opt, int64_t step_size, double gamma) {
            return std::make_shared<optim::StepLR>(
                opt, step_size, gamma, optim::StepLRSteps::kPython);
          }),
          keep);
  py::class_<
      optim::MultiStepLR,
      LRScheduler,
      std::shared_ptr<optim::MultiStepLR>>(o, "MultiStepLR")
      .def(py::init<Optimizer&, std::vector<int64_t>, double>(), keep);
  py::class_<
      optim::ExponentialLR,
      LRScheduler,
      std::shared_ptr<optim::ExponentialLR>>(o, "ExponentialLR")
      .def(py::init<Optimizer&, double>(), keep);
  py::class_<
      optim::CosineAnnealingLR,
      LRScheduler,
      std::shared_ptr<optim::CosineAnnealingLR>>(o, "CosineAnnealingLR")
      .def(py::init<Optimizer&, int64_t, double>(), keep);
  py::class_<optim::LinearLR, LRScheduler, std::shared_ptr<optim::LinearLR>>(
      o, "LinearLR")
      .def(py::init<Optimizer&, double, double, int64_t>(), keep);
  // The lambda runs under the GIL: step() keeps it.
  py::class_<optim::LambdaLR, LRScheduler, std::shared_ptr<optim::LambdaLR>>(
      o, "LambdaLR")
      .def(py::init<Optimizer&, std::function<double(int64_t)>>(), keep);
  py::class_<
      optim::OneCycleLR,
      LRScheduler,
      std::shared_ptr<optim::OneCycleLR>>(o, "OneCycleLR")
      .def(
          py::init([](Optimizer& opt,
                      double max_lr,
                      int64_t total_steps,
                      double pct_start,
                      bool anneal_cos,
                      bool cycle_momentum,
                      double base_momentum,
                      double max_momentum,
                      double div_factor,
                      double final_div_factor,
                      bool three_phase) {
            optim::OneCycleLROptions oo(max_lr, total_steps);
            oo.pct_start(pct_start)
                .anneal_cos(anneal_cos)
                .cycle_momentum(cycle_momentum)
                .base_momentum(base_momentum)
                .max_momentum(max_momentum)
                .div_factor(div_factor)
                .final_div_factor(final_div_factor)
                .three_phase(three_phase);
            return std::make_shared<optim::OneCycleLR>(opt, oo);
          }),
          keep);
  py::class_<
      optim::SequentialLR,
      LRScheduler,
      std::shared_ptr<optim::SequentialLR>>(o, "SequentialLR")
      .def(
          py::init<
              Optimizer&,
              std::vector<std::shared_ptr<LRScheduler>>,
              std::vector<int64_t>>(),
          keep);
}

} // namespace

void init_optim(py::module_& m) {
  py::module_ o = m.def_submodule("_optim", "ditto::optim");
  init_optimizers(o);
  init_schedulers(o);
}

} // namespace ditto::python
