#include "ditto/nn/modules/container.h"

#include <cxxabi.h>

#include <cstdlib>

#include "ditto/core/error.h"

namespace ditto::nn {

std::string AnyValue::demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

namespace {

void check_index(const char* op, size_t index, size_t size) {
  DITTO_CHECK(
      index < size,
      IndexError,
      op,
      "index ",
      index,
      " is out of range for ",
      size,
      " modules");
}

} // namespace

// ---- Sequential

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named)
    : Module("Sequential") {
  std::vector<std::function<void()>> draws;
  for (const NamedAnyModule& m : named) {
    add(m.name(), m.module());
    draws.push_back(take_reset(*m.module().ptr()));
  }
  defer_resets(std::move(draws));
}

SequentialImpl::SequentialImpl(OrderedDict<std::string, AnyModule>&& named)
    : Module("Sequential") {
  std::vector<std::function<void()>> draws;
  for (auto& [name, m] : named) {
    add(name, m);
    draws.push_back(take_reset(*m.ptr()));
  }
  defer_resets(std::move(draws));
}

void SequentialImpl::add(std::string name, AnyModule module, size_t index) {
  DITTO_CHECK(!module.is_empty(), ValueError, "Sequential", "empty module");
  if (index == size_t(-1) || index >= modules_.size()) {
    register_module(name, module.ptr());
    modules_.push_back(std::move(module));
    return;
  }
  // Children keep the modules' order: re-register from index on.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> tail;
  auto named = named_children();
  for (size_t i = index; i < named.size(); ++i) {
    tail.emplace_back(named[i].key(), named[i].value());
  }
  for (const auto& [n, m] : tail) {
    unregister_module(n);
  }
  register_module(name, module.ptr());
  for (const auto& [n, m] : tail) {
    register_module(n, m);
  }
  modules_.insert(
      modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
}

void SequentialImpl::extend(const SequentialImpl& other) {
  for (const AnyModule& m : other.modules_) {
    push_back(m);
  }
}

const AnyModule& SequentialImpl::at_index(size_t index) const {
  check_index("Sequential", index, modules_.size());
  return modules_[index];
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t index) const {
  return at_index(index).ptr();
}

// ---- ModuleList

void ModuleListImpl::insert_ptr(size_t index, std::shared_ptr<Module> module) {
  DITTO_CHECK(module != nullptr, ValueError, "ModuleList", "null module");
  index = std::min(index, items_.size());
  // Children are named by position: re-register from index on.
  for (size_t i = index; i < items_.size(); ++i) {
    unregister_module(std::to_string(i));
  }
  items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(index), module);
  for (size_t i = index; i < items_.size(); ++i) {
    register_module(std::to_string(i), items_[i]);
  }
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  check_index("ModuleList", index, items_.size());
  return items_[index];
}

// ---- ModuleDict

ModuleDictImpl::ModuleDictImpl(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules)
    : Module("ModuleDict") {
  update(modules);
}

ModuleDictImpl::ModuleDictImpl(
    const OrderedDict<std::string, std::shared_ptr<Module>>& modules)
    : Module("ModuleDict") {
  for (const auto& [name, m] : modules) {
    insert_ptr(name, m);
  }
}

void ModuleDictImpl::update(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>&
        modules) {
  for (const auto& [name, m] : modules) {
    insert_ptr(name, m);
  }
}

void ModuleDictImpl::insert_ptr(
    const std::string& name,
    std::shared_ptr<Module> module) {
  DITTO_CHECK(module != nullptr, ValueError, "ModuleDict", "null module");
  if (std::shared_ptr<Module>* old = items_.find(name)) {
    replace_module(name, module);
    *old = std::move(module);
    return;
  }
  register_module(name, module);
  items_.insert(name, std::move(module));
}

std::shared_ptr<Module> ModuleDictImpl::operator[](
    const std::string& name) const {
  const std::shared_ptr<Module>* m = items_.find(name);
  DITTO_CHECK(
      m != nullptr, KeyError, "ModuleDict", "no module named \"", name, "\"");
  return *m;
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& name) {
  std::shared_ptr<Module> m = (*this)[name];
  items_.erase(name);
  unregister_module(name);
  return m;
}

void ModuleDictImpl::clear() {
  for (const std::string& name : items_.keys()) {
    unregister_module(name);
  }
  items_.clear();
}

// ---- Functional

FunctionalImpl::FunctionalImpl(Function function)
    : Module("Functional"), function_(std::move(function)) {
  DITTO_CHECK(function_ != nullptr, ValueError, "Functional", "no function");
}

Tensor FunctionalImpl::forward(Tensor input) {
  return function_(std::move(input));
}

} // namespace ditto::nn
