#pragma once

// ModuleHolder<Impl>: LibTorch's module handle. A module class LinearImpl
// is used through its holder nn::Linear, a shared pointer with value
// syntax: nn::Linear(784, 64) builds a LinearImpl, fc->weight reaches it,
// fc(x) calls its forward, copies share it, and nn::Linear fc{nullptr} is
// empty until assigned. DITTO_MODULE(Name) (or TORCH_MODULE, as LibTorch
// spells it) declares Name as the holder of NameImpl. See docs/nn.md.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <type_traits>
#include <utility>

#include "ditto/core/error.h"

namespace ditto::detail {
struct ModuleHolderIndicator {};
} // namespace ditto::detail

namespace ditto::nn {

// True for ModuleHolder<...> and the classes TORCH_MODULE declares.
template <typename T>
inline constexpr bool is_module_holder_v =
    std::is_base_of_v<::ditto::detail::ModuleHolderIndicator, std::decay_t<T>>;

template <typename Contained>
class ModuleHolder : ::ditto::detail::ModuleHolderIndicator {
 public:
  using ContainedType = Contained;

  // Builds Contained() where it has a default constructor; otherwise
  // refused at compile time (write `Linear fc{nullptr};`).
  ModuleHolder() : impl_(default_construct()) {
    static_assert(
        std::is_default_constructible_v<Contained>,
        "You are trying to default construct a module which has no default "
        "constructor. Use = nullptr to give it the empty state (e.g. `Linear "
        "linear = nullptr;` instead of `Linear linear;`).");
  }
  // The empty holder.
  ModuleHolder(std::nullptr_t) : impl_(nullptr) {}
  // Builds Contained(args...): Linear(784, 64), Conv2d(Conv2dOptions(...)).
  template <
      typename Head,
      typename... Tail,
      typename = std::enable_if_t<
          !(std::is_same_v<std::decay_t<Head>, ModuleHolder> &&
            sizeof...(Tail) == 0) &&
          !(std::is_convertible_v<Head&&, std::shared_ptr<Contained>> &&
            sizeof...(Tail) == 0)>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(
            std::forward<Head>(head),
            std::forward<Tail>(tail)...)) {}
  // Builds Contained from a list of sizes: nn::AdaptiveAvgPool2d({3, 4}).
  template <typename T = Contained>
  requires std::is_constructible_v<T, std::initializer_list<int64_t>>
  explicit ModuleHolder(std::initializer_list<int64_t> sizes)
      : impl_(std::make_shared<Contained>(sizes)) {}
  // Shares an existing module (what register_module returns).
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}

  explicit operator bool() const noexcept {
    return impl_ != nullptr;
  }
  bool is_empty() const noexcept {
    return impl_ == nullptr;
  }

  Contained* operator->() {
    return get();
  }
  const Contained* operator->() const {
    return get();
  }
  Contained& operator*() {
    return *get();
  }
  const Contained& operator*() const {
    return *get();
  }
  // The module itself, where a function takes a Module& (a ditto
  // extension; LibTorch writes *holder).
  operator Contained&() {
    return *get();
  }
  operator const Contained&() const {
    return *get();
  }
  Contained* get() {
    check();
    return impl_.get();
  }
  const Contained* get() const {
    check();
    return impl_.get();
  }
  const std::shared_ptr<Contained>& ptr() const {
    check();
    return impl_;
  }

  // Calls the module's forward: fc(x) is fc->forward(x).
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    return get()->forward(std::forward<Args>(args)...);
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }
  // Indexing of containers: seq[0], dict["fc"].
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }

 protected:
  std::shared_ptr<Contained> impl_;

 private:
  static std::shared_ptr<Contained> default_construct() {
    if constexpr (std::is_default_constructible_v<Contained>) {
      return std::make_shared<Contained>();
    } else {
      return nullptr;
    }
  }
  void check() const {
    DITTO_CHECK(
        impl_ != nullptr,
        ValueError,
        "ModuleHolder",
        "Accessing empty ModuleHolder");
  }
};

template <typename Contained>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Contained>& m) {
  return os << *m;
}

} // namespace ditto::nn

// Declares Name as the holder of ImplType.
#define DITTO_MODULE_IMPL(Name, ImplType)                    \
  class Name : public ::ditto::nn::ModuleHolder<ImplType> {  \
   public:                                                   \
    using ::ditto::nn::ModuleHolder<ImplType>::ModuleHolder; \
    using Impl [[maybe_unused]] = ImplType;                  \
  }
#define DITTO_MODULE(Name) DITTO_MODULE_IMPL(Name, Name##Impl)

// LibTorch's spellings, for programs written against LibTorch.
#ifndef TORCH_MODULE
#define TORCH_MODULE_IMPL(Name, ImplType) DITTO_MODULE_IMPL(Name, ImplType)
#define TORCH_MODULE(Name) DITTO_MODULE(Name)
#endif
