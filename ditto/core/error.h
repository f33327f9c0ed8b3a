#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "ditto/core/api.h"

namespace ditto {

// Every error ditto throws derives from Error; messages start with the op
// name in brackets: "[add] shapes {2, 3} and {4} cannot be broadcast".
class DITTO_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DITTO_API ValueError : public Error {
 public:
  using Error::Error;
};

class DITTO_API TypeError : public Error {
 public:
  using Error::Error;
};

class DITTO_API IndexError : public Error {
 public:
  using Error::Error;
};

// A name that is not there: a module's child, a state_dict key.
class DITTO_API KeyError : public IndexError {
 public:
  using IndexError::IndexError;
};

// An allocation failed (torch.cuda.OutOfMemoryError's role, for CPU memory).
class DITTO_API OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

class DITTO_API NondeterministicError : public Error {
 public:
  using Error::Error;
};

// An op called on a device for which it has no kernel (PyTorch raises
// NotImplementedError for a backend without the op).
class DITTO_API NotImplementedError : public Error {
 public:
  using Error::Error;
};

// A device that cannot be used: no Vulkan loader, no such device, a lost
// device, a driver error (torch's RuntimeError for CUDA errors).
class DITTO_API DeviceError : public Error {
 public:
  using Error::Error;
};

// A broken internal invariant: a bug in ditto, never the user's input.
class DITTO_API InternalError : public Error {
 public:
  using Error::Error;
};

namespace detail {

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// The names of the op frames open on this thread, outermost first (every
// op's frame, ditto/ops/detail/op_util.h, holds an OpNameFrame). An error
// raised under the name of an inner frame (fill_ inside full, conv2d inside
// conv1d) is reported under the outermost one: the op the user called.
class DITTO_API OpNameFrame {
 public:
  explicit OpNameFrame(const char* name);
  ~OpNameFrame();
  OpNameFrame(const OpNameFrame&) = delete;
  OpNameFrame& operator=(const OpNameFrame&) = delete;
};
DITTO_API const char* reported_op(const char* op);

template <typename E, typename... Args>
[[noreturn]] void throw_error(const char* op, const Args&... args) {
  throw E(str_cat("[", reported_op(op), "] ", args...));
}

} // namespace detail
} // namespace ditto

// DITTO_CHECK(cond, ErrorType, op, message parts...): throws ErrorType with
// the message "[op] parts..." when cond is false.
#define DITTO_CHECK(cond, E, op, ...)                   \
  do {                                                  \
    if (!(cond)) {                                      \
      ::ditto::detail::throw_error<E>(op, __VA_ARGS__); \
    }                                                   \
  } while (0)

// Always-on internal assertion; throws InternalError rather than aborting.
#define DITTO_ASSERT(cond)                                   \
  do {                                                       \
    if (!(cond)) {                                           \
      throw ::ditto::InternalError(::ditto::detail::str_cat( \
          "[internal] assertion failed: " #cond " at ",      \
          __FILE__,                                          \
          ":",                                               \
          __LINE__));                                        \
    }                                                        \
  } while (0)

// LibTorch's checks, for LibTorch programs compiled against ditto
// (docs/libtorch.md): TORCH_CHECK(cond, message parts...) throws
// ditto::Error with LibTorch's wording, AT_ASSERT(cond) an InternalError.
// Left alone where a program defines its own.
#ifndef TORCH_CHECK
#define TORCH_CHECK(cond, ...)                                            \
  do {                                                                    \
    if (!(cond)) {                                                        \
      throw ::ditto::Error(::ditto::detail::str_cat(                      \
          "Expected " #cond " to be true, but got false. " __VA_OPT__(, ) \
              __VA_ARGS__));                                              \
    }                                                                     \
  } while (0)
#endif
#ifndef AT_ASSERT
#define AT_ASSERT(cond) DITTO_ASSERT(cond)
#endif
