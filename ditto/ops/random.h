#pragma once

#include <optional>

#include "ditto/core/tensor.h"
#include "ditto/core/tensor_options.h"
#include "ditto/ops/declared.h"
#include "ditto/random/generator.h"

namespace ditto {

// Every random op takes an optional generator last; without one it draws
// from the current thread's default generator (ditto::default_generator()).
// With an mt19937 generator the values are PyTorch 1.13's on CPU, bit for
// bit: ditto::manual_seed(0); ditto::rand({3}) is torch.rand(3) after
// torch.manual_seed(0).

// Uniform on [0, 1); float32 or float64.
DITTO_API Tensor rand(
    const Shape& shape,
    Dtype dtype = kFloat32,
    const std::optional<Generator>& gen = {});
DITTO_API Tensor
rand_like(const Tensor& t, const std::optional<Generator>& gen = {});

// Standard normal; PyTorch's paths bit for bit: the scalar Box-Muller with
// its cached second sample below 16 elements or for non-contiguous outputs,
// the 16-block fill above.
DITTO_API Tensor randn(
    const Shape& shape,
    Dtype dtype = kFloat32,
    const std::optional<Generator>& gen = {});
DITTO_API Tensor
randn_like(const Tensor& t, const std::optional<Generator>& gen = {});

// Integers uniform on [low, high) (PyTorch's modulo draw).
DITTO_API Tensor randint(
    int64_t low,
    int64_t high,
    const Shape& shape,
    Dtype dtype = kInt64,
    const std::optional<Generator>& gen = {});
DITTO_API Tensor randint_like(
    const Tensor& t,
    int64_t low,
    int64_t high,
    const std::optional<Generator>& gen = {});

// A random permutation of 0..n-1 (PyTorch's swap shuffle).
DITTO_API Tensor randperm(
    int64_t n,
    Dtype dtype = kInt64,
    const std::optional<Generator>& gen = {});

// bernoulli (both overloads), multinomial and the Tensor fills (uniform_,
// normal_, random_, bernoulli_, exponential_) are declared in
// random/random.ops.toml (declared.h, tensor_methods_declared.inc).

// ---- LibTorch's forms without a generator: the declared forms with
// torch's options (random.ops.toml) from the default generator. rand and
// randn draw on the options' device (its own generator there, as torch's
// on CUDA); randint and randperm draw on the CPU and move.
inline Tensor rand(const IntArg& shape, const TensorOptions& o) {
  return rand(shape, std::nullopt, o);
}
inline Tensor randn(const IntArg& shape, const TensorOptions& o) {
  return randn(shape, std::nullopt, o);
}
// Without a dtype in the options, randint gives int64 (LibTorch 1.13's).
inline Tensor randint(
    int64_t low,
    int64_t high,
    const Shape& shape,
    const TensorOptions& o) {
  return randint(low, high, shape, std::nullopt, o);
}
inline Tensor randint(
    int64_t high,
    const Shape& shape,
    const TensorOptions& o = {}) {
  return randint(high, shape, std::nullopt, o);
}
inline Tensor randperm(int64_t n, const TensorOptions& o) {
  return randperm(n, std::nullopt, o);
}

} // namespace ditto
