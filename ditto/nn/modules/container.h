#pragma once

// The containers, as LibTorch's: Sequential, ModuleList, ModuleDict and
// Functional (each a holder of its Impl). Modules go in as holders
// (nn::Linear(3, 4)), shared_ptrs or values.

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ditto/core/ordered_dict.h"
#include "ditto/nn/module.h"
#include "ditto/nn/modules/any.h"

namespace ditto::detail {

// Any module argument (holder, shared_ptr, value) as a shared_ptr.
template <typename M>
auto as_module_ptr(M&& module) {
  using D = std::decay_t<M>;
  if constexpr (nn::is_module_holder_v<D>) {
    return module.ptr();
  } else if constexpr (std::is_base_of_v<nn::Module, D>) {
    static_assert(
        !std::is_lvalue_reference_v<M>,
        "a module value is moved into a container: pass a holder, a "
        "shared_ptr or std::move(module)");
    return std::make_shared<D>(std::forward<M>(module));
  } else {
    return std::shared_ptr<typename D::element_type>(module);
  }
}

} // namespace ditto::detail

namespace ditto::nn {

// A name and a module, for Sequential({{"conv", Conv2d(...)}, ...}).
class NamedAnyModule {
 public:
  template <
      typename M,
      typename = std::enable_if_t<!std::is_same_v<std::decay_t<M>, AnyModule>>>
  NamedAnyModule(std::string name, M&& module)
      : name_(std::move(name)),
        module_(detail::as_module_ptr(std::forward<M>(module))) {}
  NamedAnyModule(std::string name, AnyModule module)
      : name_(std::move(name)), module_(std::move(module)) {}
  const std::string& name() const noexcept {
    return name_;
  }
  AnyModule& module() noexcept {
    return module_;
  }
  const AnyModule& module() const noexcept {
    return module_;
  }

 private:
  std::string name_;
  AnyModule module_;
};

// Children named "0", "1", ... (or as given), applied in order: the first
// takes forward's arguments, each next one the output before it.
class DITTO_API SequentialImpl : public Module {
 public:
  using Iterator = std::vector<AnyModule>::iterator;
  using ConstIterator = std::vector<AnyModule>::const_iterator;

  SequentialImpl() : Module("Sequential") {}
  template <
      typename First,
      typename... Rest,
      typename = std::enable_if_t<
          !std::is_same_v<std::decay_t<First>, SequentialImpl>>>
  explicit SequentialImpl(First&& first, Rest&&... rest)
      : Module("Sequential") {
    // The arguments' initial draws, taken in source order (C++ builds the
    // arguments in an unspecified order): see ditto/core/deferred.h.
    std::vector<std::function<void()>> draws;
    draws.push_back(take_reset(*push_back_ptr(std::forward<First>(first))));
    (draws.push_back(take_reset(*push_back_ptr(std::forward<Rest>(rest)))),
     ...);
    defer_resets(std::move(draws));
  }
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named);
  explicit SequentialImpl(OrderedDict<std::string, AnyModule>&& named);

  template <typename M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <typename M>
  void push_back(std::string name, M&& module) {
    if constexpr (std::is_same_v<std::decay_t<M>, AnyModule>) {
      add(std::move(name), module);
    } else {
      add(std::move(name),
          AnyModule(detail::as_module_ptr(std::forward<M>(module))));
    }
  }
  // Appends every module of other (a Sequential or a container of
  // modules).
  void extend(const SequentialImpl& other);
  template <typename Container>
  void extend(const Container& modules) {
    for (const auto& m : modules) {
      push_back(m);
    }
  }
  template <typename M>
  void insert(size_t index, M&& module) {
    insert(index, std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <typename M>
  void insert(size_t index, std::string name, M&& module) {
    add(std::move(name),
        AnyModule(detail::as_module_ptr(std::forward<M>(module))),
        index);
  }

  // Runs every module in order; the last one's output as Return.
  template <typename Return = Tensor, typename... Args>
  Return forward(Args&&... args) const {
    ForwardScope scope(*this);
    DITTO_CHECK(
        !modules_.empty(),
        ValueError,
        "Sequential",
        "Cannot call forward() on an empty Sequential");
    AnyValue value = modules_.front().any_forward(std::forward<Args>(args)...);
    for (size_t i = 1; i < modules_.size(); ++i) {
      std::vector<AnyValue> in;
      in.push_back(std::move(value));
      value = modules_[i].call(std::move(in));
    }
    return value.template get<Return>();
  }

  // The index-th module (IndexError past the end).
  std::shared_ptr<Module> operator[](size_t index) const {
    return ptr(index);
  }
  std::shared_ptr<Module> ptr(size_t index) const;
  template <typename T>
  auto ptr(size_t index) const {
    return at_index(index).ptr<T>();
  }
  template <typename T>
  auto& at(size_t index) const {
    return *ptr<T>(index);
  }
  size_t size() const noexcept {
    return modules_.size();
  }
  bool is_empty() const noexcept {
    return modules_.empty();
  }
  Iterator begin() {
    return modules_.begin();
  }
  ConstIterator begin() const {
    return modules_.begin();
  }
  Iterator end() {
    return modules_.end();
  }
  ConstIterator end() const {
    return modules_.end();
  }

 private:
  template <typename M>
  std::shared_ptr<Module> push_back_ptr(M&& module) {
    AnyModule any(detail::as_module_ptr(std::forward<M>(module)));
    add(std::to_string(modules_.size()), any);
    return any.ptr();
  }
  void add(std::string name, AnyModule module, size_t index = size_t(-1));
  const AnyModule& at_index(size_t index) const;

  std::vector<AnyModule> modules_;
};
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using Impl = SequentialImpl;
  Sequential() : ModuleHolder() {}
  // Sequential({{"conv", nn::Conv2d(...)}, {"relu", nn::ReLU()}}).
  Sequential(std::initializer_list<NamedAnyModule> named)
      : ModuleHolder(std::make_shared<SequentialImpl>(named)) {}
};

// Modules held in a list (named "0", "1", ...), without a forward.
class DITTO_API ModuleListImpl : public Module {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
  using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleListImpl() : Module("ModuleList") {}
  template <
      typename First,
      typename... Rest,
      typename = std::enable_if_t<
          !std::is_same_v<std::decay_t<First>, ModuleListImpl>>>
  explicit ModuleListImpl(First&& first, Rest&&... rest)
      : Module("ModuleList") {
    // The arguments' initial draws in source order, as Sequential's.
    std::vector<std::function<void()>> draws;
    draws.push_back(take_reset(*add(std::forward<First>(first))));
    (draws.push_back(take_reset(*add(std::forward<Rest>(rest)))), ...);
    defer_resets(std::move(draws));
  }
  template <typename M>
  void push_back(M&& module) {
    add(std::forward<M>(module));
  }
  template <typename Container>
  void extend(const Container& modules) {
    for (const auto& m : modules) {
      push_back(m);
    }
  }
  template <typename M>
  void insert(size_t index, M&& module) {
    insert_ptr(index, detail::as_module_ptr(std::forward<M>(module)));
  }

  // IndexError past the end.
  std::shared_ptr<Module> operator[](size_t index) const {
    return ptr(index);
  }
  std::shared_ptr<Module> ptr(size_t index) const;
  template <typename T>
  auto ptr(size_t index) const {
    using Impl = std::
        conditional_t<is_module_holder_v<T>, typename HolderImpl<T>::type, T>;
    auto p = std::dynamic_pointer_cast<Impl>(ptr(index));
    DITTO_CHECK(
        p != nullptr,
        TypeError,
        "ModuleList",
        "module ",
        index,
        " is not of the type asked for");
    return p;
  }
  template <typename T>
  auto& at(size_t index) const {
    return *ptr<T>(index);
  }
  size_t size() const noexcept {
    return items_.size();
  }
  bool is_empty() const noexcept {
    return items_.empty();
  }
  ConstIterator begin() const {
    return items_.begin();
  }
  ConstIterator end() const {
    return items_.end();
  }

 private:
  template <typename T, typename = void>
  struct HolderImpl {
    using type = T;
  };
  template <typename T>
  struct HolderImpl<T, std::void_t<typename T::ContainedType>> {
    using type = typename T::ContainedType;
  };
  template <typename M>
  std::shared_ptr<Module> add(M&& module) {
    std::shared_ptr<Module> p = detail::as_module_ptr(std::forward<M>(module));
    insert_ptr(items_.size(), p);
    return p;
  }
  void insert_ptr(size_t index, std::shared_ptr<Module> module);

  std::vector<std::shared_ptr<Module>> items_;
};
DITTO_MODULE(ModuleList);

// Modules by name, in insertion order, without a forward.
class DITTO_API ModuleDictImpl : public Module {
 public:
  using Iterator = OrderedDict<std::string, std::shared_ptr<Module>>::iterator;
  using ConstIterator =
      OrderedDict<std::string, std::shared_ptr<Module>>::const_iterator;

  ModuleDictImpl() : Module("ModuleDict") {}
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>&
          modules);
  explicit ModuleDictImpl(
      const OrderedDict<std::string, std::shared_ptr<Module>>& modules);

  // Adds name (or replaces the module under it, in its place).
  template <typename M>
  void insert(const std::string& name, M&& module) {
    insert_ptr(name, detail::as_module_ptr(std::forward<M>(module)));
  }
  void update(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>&
          modules);
  // KeyError if absent.
  std::shared_ptr<Module> operator[](const std::string& name) const;
  template <typename T>
  auto& at(const std::string& name) const {
    auto* p = (*this)[name]->template as<T>();
    DITTO_CHECK(
        p != nullptr,
        TypeError,
        "ModuleDict",
        "module \"",
        name,
        "\" is not of the type asked for");
    return *p;
  }
  // Removes name and returns its module; KeyError if absent.
  std::shared_ptr<Module> pop(const std::string& name);
  void clear();
  bool contains(const std::string& name) const {
    return items_.contains(name);
  }
  std::vector<std::string> keys() const {
    return items_.keys();
  }
  std::vector<std::shared_ptr<Module>> values() const {
    return items_.values();
  }
  const std::vector<OrderedDict<std::string, std::shared_ptr<Module>>::Item>&
  items() const {
    return items_.items();
  }
  size_t size() const noexcept {
    return items_.size();
  }
  bool empty() const noexcept {
    return items_.is_empty();
  }
  ConstIterator begin() const {
    return items_.begin();
  }
  ConstIterator end() const {
    return items_.end();
  }

 private:
  void insert_ptr(const std::string& name, std::shared_ptr<Module> module);
  OrderedDict<std::string, std::shared_ptr<Module>> items_{"Module"};
};
DITTO_MODULE(ModuleDict);

// A function as a module (for Sequential): Functional(relu), or with its
// further arguments bound, Functional(leaky_relu, 0.2).
class DITTO_API FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function);
  template <
      typename F,
      typename First,
      typename... Rest,
      typename =
          std::enable_if_t<std::is_invocable_v<F, Tensor, First, Rest...>>>
  FunctionalImpl(F function, First&& first, Rest&&... rest)
      : FunctionalImpl(Function([function,
                                 bound = std::make_tuple(
                                     std::forward<First>(first),
                                     std::forward<Rest>(rest)...)](Tensor x) {
          return std::apply(
              [&](const auto&... a) { return Tensor(function(x, a...)); },
              bound);
        })) {}
  Tensor forward(Tensor input);
  Tensor operator()(Tensor input) {
    return forward(std::move(input));
  }

 private:
  Function function_;
};
DITTO_MODULE(Functional);

} // namespace ditto::nn
