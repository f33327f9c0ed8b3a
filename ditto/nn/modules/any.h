#pragma once

// AnyValue and AnyModule, as LibTorch's: a module of any type behind one
// type, with a forward that takes and returns values of any type (what
// Sequential holds). A module's forward must not be overloaded, or must
// take one Tensor (then that one is used).

#include <any>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ditto/core/error.h"
#include "ditto/core/tensor.h"
#include "ditto/nn/module.h"
#include "ditto/nn/pimpl.h"

namespace ditto::nn {

// A value of any type (LibTorch's AnyValue).
class AnyValue {
 public:
  template <
      typename T,
      typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, AnyValue>>>
  explicit AnyValue(T&& value) : value_(std::forward<T>(value)) {}

  // The value as T; TypeError naming both types if it holds another type.
  template <typename T>
  T get() const {
    if (const T* p = try_get<T>()) {
      return *p;
    }
    detail::throw_error<TypeError>(
        "AnyValue.get",
        "Attempted to cast AnyValue to ",
        demangle(typeid(T).name()),
        ", but its actual type is ",
        demangle(value_.type().name()));
  }
  template <typename T>
  T* try_get() noexcept {
    return std::any_cast<T>(&value_);
  }
  template <typename T>
  const T* try_get() const noexcept {
    return std::any_cast<T>(&value_);
  }
  const std::type_info& type_info() const noexcept {
    return value_.type();
  }

 private:
  DITTO_API static std::string demangle(const char* name);
  std::any value_;
};

} // namespace ditto::nn

namespace ditto::detail {

template <typename T>
struct ForwardSignature;
template <typename C, typename R, typename... A>
struct ForwardSignature<R (C::*)(A...)> {
  using Return = R;
  using Args = std::tuple<std::decay_t<A>...>;
};
template <typename C, typename R, typename... A>
struct ForwardSignature<R (C::*)(A...) const>
    : ForwardSignature<R (C::*)(A...)> {};

template <typename M, typename = void>
struct HasUniqueForward : std::false_type {};
template <typename M>
struct HasUniqueForward<M, std::void_t<decltype(&M::forward)>>
    : std::true_type {};

// The forward an AnyModule calls: the one forward, or forward(Tensor).
template <typename M>
auto forward_signature() {
  if constexpr (HasUniqueForward<M>::value) {
    return ForwardSignature<decltype(&M::forward)>{};
  } else {
    return ForwardSignature<Tensor (M::*)(const Tensor&)>{};
  }
}

} // namespace ditto::detail

namespace ditto::nn {

class DITTO_API AnyModule {
 public:
  AnyModule() = default;
  template <typename M>
  explicit AnyModule(std::shared_ptr<M> module) {
    set(std::move(module));
  }
  template <typename M>
  explicit AnyModule(const ModuleHolder<M>& holder) {
    set(holder.ptr());
  }
  // A module value (a LinearImpl, a user's module) moved in.
  template <
      typename M,
      typename = std::enable_if_t<
          std::is_base_of_v<Module, std::decay_t<M>> &&
          !std::is_lvalue_reference_v<M>>>
  explicit AnyModule(M&& module) {
    set(std::make_shared<std::decay_t<M>>(std::forward<M>(module)));
  }

  // Calls forward with args; the result as an AnyValue. TypeError if the
  // count or the types of args are not forward's.
  template <typename... Args>
  AnyValue any_forward(Args&&... args) const {
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Args));
    (values.emplace_back(std::decay_t<Args>(std::forward<Args>(args))), ...);
    return call(std::move(values));
  }
  AnyValue call(std::vector<AnyValue>&& args) const {
    DITTO_CHECK(
        !is_empty(),
        ValueError,
        "AnyModule",
        "Cannot call forward() on an "
        "empty AnyModule");
    return call_(*module_, std::move(args));
  }
  template <typename Return = Tensor, typename... Args>
  Return forward(Args&&... args) const {
    return any_forward(std::forward<Args>(args)...).template get<Return>();
  }

  bool is_empty() const noexcept {
    return module_ == nullptr;
  }
  const std::shared_ptr<Module>& ptr() const {
    return module_;
  }
  // The module as T (its impl type, or its holder's); TypeError if it is
  // another type.
  template <typename T>
  auto ptr() const {
    using Impl = typename std::conditional_t<
        is_module_holder_v<T>,
        holder_contained<T>,
        std::type_identity<T>>::type;
    auto p = std::dynamic_pointer_cast<Impl>(module_);
    DITTO_CHECK(
        p != nullptr,
        TypeError,
        "AnyModule",
        "Attempted to cast module of "
        "type ",
        module_ ? module_->name() : std::string("(empty)"),
        " to another type");
    return p;
  }
  // T& for a module type, a holder T (sharing the module) for a holder
  // type, as LibTorch's.
  template <typename T>
  decltype(auto) get() const {
    if constexpr (is_module_holder_v<T>) {
      return T(ptr<T>());
    } else {
      return static_cast<T&>(*ptr<T>());
    }
  }
  template <typename T>
  T get_holder() const {
    return T(ptr<T>());
  }
  const std::type_info& type_info() const {
    return *type_;
  }

 private:
  template <typename T>
  struct holder_contained {
    using type = typename T::ContainedType;
  };

  template <typename M>
  void set(std::shared_ptr<M> module) {
    DITTO_CHECK(module != nullptr, ValueError, "AnyModule", "null module");
    using Sig = decltype(detail::forward_signature<M>());
    using ArgTuple = typename Sig::Args;
    type_ = &typeid(M);
    call_ = [](Module& m, std::vector<AnyValue>&& args) -> AnyValue {
      constexpr size_t n = std::tuple_size_v<ArgTuple>;
      DITTO_CHECK(
          args.size() == n,
          TypeError,
          "AnyModule",
          m.name(),
          "'s forward() expects ",
          n,
          " argument(s), but received ",
          args.size());
      auto& self = static_cast<M&>(m);
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return AnyValue(self.forward(
            args[I].template get<std::tuple_element_t<I, ArgTuple>>()...));
      }
      (std::make_index_sequence<n>{});
    };
    module_ = std::move(module);
  }

  std::shared_ptr<Module> module_;
  const std::type_info* type_ = &typeid(void);
  AnyValue (*call_)(Module&, std::vector<AnyValue>&&) = nullptr;
};

} // namespace ditto::nn
