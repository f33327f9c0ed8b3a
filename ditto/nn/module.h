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
#include <type_traits>
#include <utility>
#include <vector>

#include "ditto/core/ordered_dict.h"
#include "ditto/core/state_dict.h"
#include "ditto/core/tensor.h"
#include "ditto/nn/pimpl.h"
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

// The base of every layer and model, as LibTorch's torch::nn::Module.
// Layers are used through their holders (ditto/nn/pimpl.h): nn::Linear
// holds a LinearImpl. Subclass Module, register parameters, buffers and
// children in the constructor (children built in member declaration order
// draw their initial values in that order, as PyTorch modules built in
// __init__), and give the class a plain forward method:
//
//   struct NetImpl : nn::Module {
//     nn::Linear fc1 = register_module("fc1", nn::Linear(784, 64));
//     nn::Linear fc2 = register_module("fc2", nn::Linear(64, 10));
//     Tensor forward(const Tensor& x) { return fc2(fc1(x).relu()); }
//   };
//   TORCH_MODULE(Net); // or DITTO_MODULE(Net): Net holds a NetImpl
//
// Modules move but do not copy (a copy would share parameters silently);
// holders copy and share.
class DITTO_API Module : public std::enable_shared_from_this<Module> {
 public:
  // The name is the class's own ("Net", "mylib::Net"), read from its type
  // on first use, as LibTorch's.
  Module();
  explicit Module(std::string name);
  virtual ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name printed and named by errors ("Linear").
  const std::string& name() const noexcept;
  const std::string& type_name() const noexcept {
    return name();
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
  // Registers a child and returns it (assign it to a holder:
  // `nn::Linear fc = register_module("fc", nn::Linear(3, 4));`).
  template <typename M>
  std::shared_ptr<M> register_module(
      const std::string& name,
      std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> register_module(
      const std::string& name,
      ModuleHolder<M> holder) {
    return register_module(name, holder.ptr());
  }
  // A module value (a LinearImpl, a user's module) moved in.
  template <
      typename M,
      typename = std::enable_if_t<
          std::is_base_of_v<Module, std::decay_t<M>> &&
          !std::is_lvalue_reference_v<M>>>
  std::shared_ptr<std::decay_t<M>> register_module(
      const std::string& name,
      M&& module) {
    return register_module(
        name, std::make_shared<std::decay_t<M>>(std::forward<M>(module)));
  }
  // Puts module in place of the child registered as name (KeyError if
  // none), in its place in the order.
  template <typename M>
  std::shared_ptr<M> replace_module(
      const std::string& name,
      std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }
  template <typename M>
  std::shared_ptr<M> replace_module(
      const std::string& name,
      ModuleHolder<M> holder) {
    return replace_module(name, holder.ptr());
  }
  // Removes the child registered as name; KeyError if none.
  void unregister_module(const std::string& name);
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
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // This module first (unless !include_self), then every descendant,
  // depth first. A module not held by a shared_ptr is returned by a
  // pointer that does not own it.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = std::string(),
      bool include_self = true) const;
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
  // Resets every parameter's gradient: zeros in place (LibTorch 1.13's
  // default), or none (undefined) when set_to_none.
  void zero_grad(bool set_to_none = false);
  // fn on this module, then on every descendant, depth first (LibTorch's
  // order; Python's apply visits the children first).
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const Module&)>& fn) const;
  void apply(
      const std::function<void(const std::string&, Module&)>& fn,
      const std::string& name_prefix = std::string());
  void apply(
      const std::function<void(const std::string&, const Module&)>& fn,
      const std::string& name_prefix = std::string()) const;
  void apply(
      const std::function<void(const std::shared_ptr<Module>&)>& fn) const;
  void apply(
      const std::function<
          void(const std::string&, const std::shared_ptr<Module>&)>& fn,
      const std::string& name_prefix = std::string()) const;
  // This module as a T (a LinearImpl, or the holder's type nn::Linear);
  // null if it is not one.
  template <typename T>
  auto* as() noexcept {
    if constexpr (is_module_holder_v<T>) {
      return dynamic_cast<typename T::ContainedType*>(this);
    } else {
      return dynamic_cast<T*>(this);
    }
  }
  template <typename T>
  const auto* as() const noexcept {
    return const_cast<Module*>(this)->as<T>();
  }
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
  // Writes repr() to stream (LibTorch's pretty_print).
  virtual void pretty_print(std::ostream& stream) const;
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
  void replace_child(const std::string& name, std::shared_ptr<Module> child);
  std::shared_ptr<Module> shared_or_alias() const;
  const std::string& display_name() const;
  void check_new_name(const std::string& name, const char* what) const;
  template <typename Visit>
  void walk(const std::string& prefix, Visit&& visit) const;
  void collect_state(const std::string& prefix, StateDict& out) const;
  void repr_into(std::string& out, int indent) const;

  // Empty until name() reads it from the type.
  mutable std::string type_name_;
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
