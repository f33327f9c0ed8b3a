#pragma once

// nn::Module: ordered named parameters, buffers and child modules with
// PyTorch's dotted names, train/eval, state_dict, and PyTorch's printed
// form. See docs/nn.md.

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/state_dict.h"
#include "ditto/core/tensor.h"
#include "ditto/trace/trace.h"

namespace ditto::nn {

// StateDict and NamedTensors live below nn (ditto/core/state_dict.h): a
// file format and an optimizer use them without knowing modules.
using ditto::NamedTensors;
using ditto::StateDict;

// What load_state_dict(strict = false) reports.
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

// The base of every layer and model. Subclass it, register parameters,
// buffers and children in the constructor (children built in member
// declaration order draw their initial values in that order, as PyTorch
// modules built in __init__), and give the class a plain forward method:
//
//   struct Net : nn::Module {
//     Net() : Module("Net") {}
//     nn::Linear& fc1 = register_module("fc1", nn::Linear(784, 64));
//     nn::Linear& fc2 = register_module("fc2", nn::Linear(64, 10));
//     Tensor forward(const Tensor& x) { return
//     fc2.forward(fc1.forward(x).relu()); }
//   };
//
// Modules move but do not copy (a copy would share parameters silently).
class DITTO_API Module {
 public:
  explicit Module(std::string type_name = "Module");
  virtual ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name PyTorch prints and state_dict errors name ("Linear").
  const std::string& type_name() const {
    return type_name_;
  }

  // ---- registration. Names are unique per kind and may not contain '.'.
  // A parameter is a leaf that requires grad (unless requires_grad is
  // false); t is detached first. Returns the registered handle.
  Tensor register_parameter(
      const std::string& name,
      const Tensor& t,
      bool requires_grad = true);
  // A buffer (running statistics): in state_dict unless !persistent.
  Tensor register_buffer(
      const std::string& name,
      const Tensor& t,
      bool persistent = true);
  // Takes the module (moved in) and returns it where it now lives: the
  // reference stays valid while this module exists, moves included.
  template <typename M>
  std::decay_t<M>& register_module(const std::string& name, M&& module) {
    auto p = std::make_shared<std::decay_t<M>>(std::forward<M>(module));
    add_child(name, p);
    return *p;
  }
  template <typename M>
  M& register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return *module;
  }
  // Replaces the tensor of an existing parameter or buffer (keeps its
  // place in the order): what `self.weight = ...` does in PyTorch.
  void replace_tensor(const std::string& name, const Tensor& t);

  // ---- traversal, in PyTorch's order: own entries first (registration
  // order), then each child's, names joined with '.'. A tensor or module
  // reached twice is listed once, under its first name.
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<Module*> children() const;
  std::vector<std::pair<std::string, Module*>> named_children() const;
  // This module first, then every descendant, depth first.
  std::vector<Module*> modules();
  std::vector<std::pair<std::string, Module*>> named_modules();
  // The child registered as name (dotted paths reach grandchildren);
  // KeyError if absent.
  Module& get_submodule(std::string_view path);

  // This module's dotted path from its root (the chain of modules that
  // registered it, first registration wins) and its type, as traces show
  // them (trace::ModuleInfo).
  trace::ModuleRef trace_module() const;

  // ---- modes and maintenance
  // Sets the training flag of this module and every descendant.
  virtual void train(bool on = true);
  void eval() {
    train(false);
  }
  bool is_training() const {
    return training_;
  }
  // Resets every parameter's gradient: to none (undefined), or to zeros
  // in place when set_to_none is false.
  void zero_grad(bool set_to_none = true);
  // fn on every descendant (children first, depth first), then on this.
  void apply(const std::function<void(Module&)>& fn);
  // Converts floating parameters, buffers and gradients to dtype in place:
  // handles held elsewhere (an optimizer's) see the new values.
  Module& to(Dtype dtype);
  // Moves parameters, buffers and gradients to device in place (as
  // torch.nn.Module.to(device)): handles held elsewhere see the moved
  // tensors. docs/device.md.
  Module& to(Device device);

  // ---- state
  // Parameters and persistent buffers, detached, sharing storage with the
  // module; a tensor shared under several names appears under each.
  StateDict state_dict() const;
  // Copies every entry into the module. With strict, missing and
  // unexpected keys are errors; a shape mismatch always is. Every problem
  // is listed in one ValueError in PyTorch's format, and on error nothing
  // is copied.
  IncompatibleKeys load_state_dict(const StateDict& sd, bool strict = true);

  // PyTorch's printed form of the module tree:
  //   Sequential(
  //     (0): Linear(in_features=4, out_features=3, bias=True)
  //     (1): ReLU()
  //   )
  std::string repr() const;
  // What goes inside the parentheses of a leaf's line.
  virtual std::string extra_repr() const {
    return {};
  }

 protected:
  // Queues this module's initial draws: they run before anything can
  // observe them, in queue order (ditto/core/deferred.h). Layers call it
  // in their constructors instead of drawing.
  void defer_reset(std::function<void()> draws);
  // Takes m's queued draws (with those m adopted) out of the queue; empty
  // if they already ran. Containers take their arguments' draws in source
  // order and queue them again as their own (defer_resets).
  static std::function<void()> take_reset(Module& m);
  void defer_resets(std::vector<std::function<void()>> draws);

 private:
  void replace_data(const std::function<Tensor(const Tensor&)>& fn);
  struct Entry {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };
  void add_child(const std::string& name, std::shared_ptr<Module> child);
  void check_new_name(const std::string& name, const char* what) const;
  template <typename Visit>
  void walk(const std::string& prefix, Visit&& visit) const;
  void collect_state(const std::string& prefix, StateDict& out) const;
  void repr_into(std::string& out, int indent) const;

  std::string type_name_;
  bool training_ = true;
  uint64_t init_ticket_ = 0;
  std::vector<Entry> params_;
  std::vector<Entry> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  // The module that registered this one first, and the name it used.
  Module* parent_ = nullptr;
  std::string name_in_parent_;
};

// Put first in a module's forward: the ops it runs are traced with the
// module's path and type (ditto/trace). Every ditto layer does it; a user
// module does it to show itself (its children show their own paths
// either way). Costs nothing while tracing is off.
class DITTO_API ForwardScope {
 public:
  explicit ForwardScope(const Module& module) {
    if (trace::enabled()) {
      guard_.emplace(module.trace_module());
    }
  }

 private:
  std::optional<trace::ModuleGuard> guard_;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const Module& m);

} // namespace ditto::nn
