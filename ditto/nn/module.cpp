#include "ditto/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <typeinfo>

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/error.h"

namespace ditto::nn {
namespace {

std::string demangled_type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : type.name();
}

} // namespace

// ---- Module

Module::Module() = default;
Module::Module(std::string name) : type_name_(std::move(name)) {}

const std::string& Module::name() const noexcept {
  if (type_name_.empty()) {
    type_name_ = demangled_type_name(typeid(*this));
  }
  return type_name_;
}

// In errors raised while a derived constructor runs, the type is not
// final yet: read it without keeping it.
const std::string& Module::display_name() const {
  if (!type_name_.empty()) {
    return type_name_;
  }
  thread_local std::string now;
  now = demangled_type_name(typeid(*this));
  return now;
}
Module::~Module() {
  // A child that outlives this module (held elsewhere) no longer has it
  // as its parent.
  for (auto& [name, child] : children_) {
    if (child->parent_ == this) {
      child->parent_ = nullptr;
      child->name_in_parent_.clear();
    }
  }
}

Module::Module(Module&& other) noexcept
    : type_name_(std::move(other.type_name_)),
      training_(other.training_),
      init_ticket_(other.init_ticket_),
      params_(std::move(other.params_)),
      buffers_(std::move(other.buffers_)),
      children_(std::move(other.children_)),
      parent_(other.parent_),
      name_in_parent_(std::move(other.name_in_parent_)) {
  for (auto& [name, child] : children_) {
    if (child->parent_ == &other) {
      child->parent_ = this;
    }
  }
}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    type_name_ = std::move(other.type_name_);
    training_ = other.training_;
    init_ticket_ = other.init_ticket_;
    params_ = std::move(other.params_);
    buffers_ = std::move(other.buffers_);
    children_ = std::move(other.children_);
    parent_ = other.parent_;
    name_in_parent_ = std::move(other.name_in_parent_);
    for (auto& [name, child] : children_) {
      if (child->parent_ == &other) {
        child->parent_ = this;
      }
    }
  }
  return *this;
}

trace::ModuleRef Module::trace_module() const {
  std::string path;
  for (const Module* m = this; m->parent_ != nullptr; m = m->parent_) {
    path = path.empty() ? m->name_in_parent_ : m->name_in_parent_ + "." + path;
  }
  return std::make_shared<const trace::ModuleInfo>(
      trace::ModuleInfo{std::move(path), name()});
}

void Module::check_new_name(const std::string& name, const char* what) const {
  DITTO_CHECK(
      !name.empty() && name.find('.') == std::string::npos,
      ValueError,
      display_name().c_str(),
      what,
      " name can't be empty or contain \".\", got \"",
      name,
      "\"");
  auto taken = [&](const auto& v) {
    return std::any_of(
        v.begin(), v.end(), [&](const auto& e) { return e.first == name; });
  };
  auto taken_entry = [&](const std::vector<Entry>& v) {
    return std::any_of(
        v.begin(), v.end(), [&](const Entry& e) { return e.name == name; });
  };
  DITTO_CHECK(
      !taken(children_) && !taken_entry(params_) && !taken_entry(buffers_),
      ValueError,
      display_name().c_str(),
      "attribute \"",
      name,
      "\" already exists");
}

Tensor Module::register_parameter(
    const std::string& name,
    const Tensor& t,
    bool requires_grad) {
  check_new_name(name, "parameter");
  Tensor p;
  if (t.defined()) {
    p = t.detach();
    if (requires_grad) {
      p.requires_grad_(true);
    }
  }
  params_.push_back({name, p, true});
  return p;
}

Tensor Module::register_buffer(
    const std::string& name,
    const Tensor& t,
    bool persistent) {
  check_new_name(name, "buffer");
  Tensor b = t.defined() ? t.detach() : Tensor();
  buffers_.push_back({name, b, persistent});
  return b;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> child) {
  check_new_name(name, "child module");
  DITTO_CHECK(
      child != nullptr, ValueError, display_name().c_str(), "null module");
  // The first registration names the module in traces; never one that
  // would make a module its own ancestor.
  bool ancestor = false;
  for (const Module* m = this; m != nullptr && !ancestor; m = m->parent_) {
    ancestor = m == child.get();
  }
  if (child->parent_ == nullptr && !ancestor) {
    child->parent_ = this;
    child->name_in_parent_ = name;
  }
  children_.emplace_back(name, std::move(child));
}

void Module::replace_child(
    const std::string& name,
    std::shared_ptr<Module> child) {
  DITTO_CHECK(
      child != nullptr, ValueError, display_name().c_str(), "null module");
  for (auto& [n, c] : children_) {
    if (n == name) {
      if (c->parent_ == this) {
        c->parent_ = nullptr;
        c->name_in_parent_.clear();
      }
      if (child->parent_ == nullptr) {
        child->parent_ = this;
        child->name_in_parent_ = name;
      }
      c = std::move(child);
      return;
    }
  }
  detail::throw_error<KeyError>(
      display_name().c_str(), "no submodule named \"", name, "\"");
}

void Module::unregister_module(const std::string& name) {
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->first == name) {
      if (it->second->parent_ == this) {
        it->second->parent_ = nullptr;
        it->second->name_in_parent_.clear();
      }
      children_.erase(it);
      return;
    }
  }
  detail::throw_error<KeyError>(
      display_name().c_str(), "No Module with name `", name, "` is registered");
}

void Module::replace_tensor(const std::string& name, const Tensor& t) {
  for (auto* v : {&params_, &buffers_}) {
    for (Entry& e : *v) {
      if (e.name == name) {
        e.tensor = t;
        return;
      }
    }
  }
  detail::throw_error<KeyError>(
      display_name().c_str(), "no parameter or buffer named \"", name, "\"");
}

// visit(prefix, module) over this module and every descendant, each once,
// depth first in registration order.
namespace {

NamedTensors unique_entries(
    const Module& root,
    bool recurse,
    const std::function<void(
        const Module&,
        const std::function<void(const std::string&, const Tensor&)>&)>& list) {
  NamedTensors out;
  std::set<const TensorImpl*> seen;
  auto add = [&](const std::string& prefix, const Module& m) {
    list(m, [&](const std::string& name, const Tensor& t) {
      if (t.defined() && seen.insert(t.impl().get()).second) {
        out.insert(prefix + name, t);
      }
    });
  };
  if (!recurse) {
    add("", root);
    return out;
  }
  std::set<const Module*> seen_modules;
  std::function<void(const std::string&, const Module&)> go =
      [&](const std::string& p, const Module& m) {
        if (!seen_modules.insert(&m).second) {
          return;
        }
        add(p, m);
        for (const auto& [name, child] : m.named_children()) {
          go(p + name + ".", *child);
        }
      };
  go("", root);
  return out;
}

} // namespace

NamedTensors Module::named_parameters(bool recurse) const {
  return unique_entries(*this, recurse, [](const Module& m, const auto& emit) {
    for (const Entry& e : m.params_) {
      emit(e.name, e.tensor);
    }
  });
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters(recurse)) {
    out.push_back(t);
  }
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  return unique_entries(*this, recurse, [](const Module& m, const auto& emit) {
    for (const Entry& e : m.buffers_) {
      emit(e.name, e.tensor);
    }
  });
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers(recurse)) {
    out.push_back(t);
  }
  return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children()
    const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  std::set<const Module*> seen;
  for (const auto& [name, child] : children_) {
    if (seen.insert(child.get()).second) {
      out.insert(name, child);
    }
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  return named_children().values();
}

std::shared_ptr<Module> Module::shared_or_alias() const {
  auto* self = const_cast<Module*>(this);
  if (auto owned = self->weak_from_this().lock()) {
    return owned;
  }
  // Not held by a shared_ptr (a module on the stack): a pointer that does
  // not own it, where LibTorch would refuse.
  return std::shared_ptr<Module>(std::shared_ptr<Module>(), self);
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix,
    bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("Module");
  std::set<const Module*> seen{this};
  if (include_self) {
    out.insert(name_prefix, shared_or_alias());
  }
  std::function<void(const std::string&, const Module&)> go =
      [&](const std::string& prefix, const Module& m) {
        for (const auto& [name, child] : m.children_) {
          if (!seen.insert(child.get()).second) {
            continue;
          }
          const std::string path = prefix.empty() ? name : prefix + "." + name;
          out.insert(path, child);
          go(path, *child);
        }
      };
  go(name_prefix, *this);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

Module& Module::get_submodule(std::string_view path) {
  Module* m = this;
  while (!path.empty()) {
    const size_t dot = path.find('.');
    const std::string_view head = path.substr(0, dot);
    Module* next = nullptr;
    for (auto& [name, child] : m->children_) {
      if (name == head) {
        next = child.get();
      }
    }
    DITTO_CHECK(
        next != nullptr,
        KeyError,
        m->display_name().c_str(),
        "has no attribute `",
        std::string(head),
        "`");
    m = next;
    path = dot == std::string_view::npos ? std::string_view()
                                         : path.substr(dot + 1);
  }
  return *m;
}

void Module::defer_reset(std::function<void()> draws) {
  init_ticket_ = detail::defer_init(std::move(draws));
}

std::function<void()> Module::take_reset(Module& m) {
  std::function<void()> fn = detail::take_deferred(m.init_ticket_);
  m.init_ticket_ = 0;
  return fn;
}

void Module::defer_resets(std::vector<std::function<void()>> draws) {
  std::erase_if(draws, [](const auto& f) { return !f; });
  if (!draws.empty()) {
    defer_reset([fns = std::move(draws)] {
      for (const auto& f : fns) {
        f();
      }
    });
  }
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) {
    child->train(on);
  }
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) {
      continue;
    }
    if (set_to_none) {
      g = Tensor();
    } else {
      autograd::NoGradGuard no_grad;
      g = g.detach();
      g.zero_();
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& m : modules()) {
    fn(*m);
  }
}

void Module::apply(const std::function<void(const Module&)>& fn) const {
  for (const auto& m : modules()) {
    fn(*m);
  }
}

void Module::apply(
    const std::function<void(const std::string&, Module&)>& fn,
    const std::string& name_prefix) {
  for (const auto& [name, m] : named_modules(name_prefix)) {
    fn(name, *m);
  }
}

void Module::apply(
    const std::function<void(const std::string&, const Module&)>& fn,
    const std::string& name_prefix) const {
  for (const auto& [name, m] : named_modules(name_prefix)) {
    fn(name, *m);
  }
}

void Module::apply(
    const std::function<void(const std::shared_ptr<Module>&)>& fn) const {
  for (const auto& m : modules()) {
    fn(m);
  }
}

void Module::apply(
    const std::function<
        void(const std::string&, const std::shared_ptr<Module>&)>& fn,
    const std::string& name_prefix) const {
  for (const auto& [name, m] : named_modules(name_prefix)) {
    fn(name, m);
  }
}

// Replaces, in place, every parameter, gradient and buffer t for which
// fn(t) gives another tensor (PyTorch's `t.data = fn(t)`): handles held
// elsewhere (an optimizer's) see the new data.
void Module::replace_data(const std::function<Tensor(const Tensor&)>& fn) {
  autograd::NoGradGuard no_grad;
  auto replace = [&fn](const Tensor& t) {
    if (t.defined()) {
      Tensor c = fn(t);
      if (!c.is_same(t)) {
        t.impl()->set_data(*c.detach().impl());
      }
    }
  };
  for (const auto& m : modules()) {
    for (Entry& e : m->params_) {
      replace(e.tensor);
      if (e.tensor.defined()) {
        replace(e.tensor.grad());
      }
    }
    for (Entry& e : m->buffers_) {
      replace(e.tensor);
    }
  }
}

Module& Module::to(Device device) {
  replace_data([device](const Tensor& t) {
    return t.device() == device ? t : t.detach().to(device);
  });
  return *this;
}

Module& Module::to(Dtype dtype) {
  DITTO_CHECK(
      is_floating(dtype),
      TypeError,
      "Module.to",
      "nn.Module.to only accepts floating point dtypes, but got desired "
      "dtype=",
      dtype);
  replace_data([dtype](const Tensor& t) {
    return is_floating(t.dtype()) && t.dtype() != dtype ? t.detach().to(dtype)
                                                        : t;
  });
  return *this;
}

} // namespace ditto::nn
