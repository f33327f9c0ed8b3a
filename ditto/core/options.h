#pragma once

// LibTorch-style options (nn's, optim's): Conv2dOptions(1, 32,
// 3).stride(1).padding(1). Each DITTO_NN_ARG(type, name) = default; declares a
// setter returning the options (for chaining), a getter, and the stored value.

#define DITTO_NN_ARG(T, name)      \
 public:                           \
  auto& name(const T& new_value) { \
    name##_ = new_value;           \
    return *this;                  \
  }                                \
  const T& name() const {          \
    return name##_;                \
  }                                \
                                   \
 private:                          \
  T name##_
