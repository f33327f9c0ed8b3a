#pragma once

// The containers: Sequential, ModuleList and ModuleDict.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ditto/nn/module.h"

namespace ditto::nn {

// Children named "0", "1", ... applied in order. Every child needs a
// `Tensor forward(const Tensor&)`.
class DITTO_API Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  template <typename... Ms>
  explicit Sequential(Ms&&... modules) : Module("Sequential") {
    // The arguments' initial draws, taken in source order (C++ builds the
    // arguments in an unspecified order): see ditto/core/deferred.h.
    std::vector<std::function<void()>> draws;
    (draws.push_back(take_reset(push_back(std::forward<Ms>(modules)))), ...);
    defer_resets(std::move(draws));
  }
  template <typename M>
  std::decay_t<M>& push_back(M&& module) {
    auto& m =
        register_module(std::to_string(steps_.size()), std::forward<M>(module));
    steps_.push_back([p = &m](const Tensor& x) { return p->forward(x); });
    return m;
  }
  Tensor forward(const Tensor& x) const;
  size_t size() const {
    return steps_.size();
  }
  Module& operator[](size_t i) const;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};

// Modules held in a list (named "0", "1", ...), without a forward.
class DITTO_API ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  template <typename... Ms>
  explicit ModuleList(Ms&&... modules) : Module("ModuleList") {
    // The arguments' initial draws, taken in source order (C++ builds the
    // arguments in an unspecified order): see ditto/core/deferred.h.
    std::vector<std::function<void()>> draws;
    (draws.push_back(take_reset(push_back(std::forward<Ms>(modules)))), ...);
    defer_resets(std::move(draws));
  }
  template <typename M>
  std::decay_t<M>& push_back(M&& module) {
    auto& m =
        register_module(std::to_string(items_.size()), std::forward<M>(module));
    items_.push_back(&m);
    return m;
  }
  size_t size() const {
    return items_.size();
  }
  Module& operator[](size_t i) const;
  std::vector<Module*>::const_iterator begin() const {
    return items_.begin();
  }
  std::vector<Module*>::const_iterator end() const {
    return items_.end();
  }

 private:
  std::vector<Module*> items_;
};

// Modules by name, in insertion order, without a forward.
class DITTO_API ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  template <typename M>
  std::decay_t<M>& insert(const std::string& name, M&& module) {
    auto& m = register_module(name, std::forward<M>(module));
    items_.emplace_back(name, &m);
    return m;
  }
  // KeyError if absent.
  Module& operator[](const std::string& name) const;
  bool contains(const std::string& name) const;
  std::vector<std::string> keys() const;
  size_t size() const {
    return items_.size();
  }

 private:
  std::vector<std::pair<std::string, Module*>> items_;
};

} // namespace ditto::nn
