#include "ditto/ops/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ditto/ops/op_util.h"
#include "ditto/random/generator_impl.h"

namespace ditto {
namespace {

// Calls fn(pointer) for every element in the order of its storage
// (increasing address), as PyTorch's serial distribution kernels fill: a
// transposed tensor is filled in memory order, not in its logical order.
template <typename T, typename F>
void for_each_in_memory_order(const Tensor& t, F fn) {
  const int64_t nd = t.dim();
  std::vector<int64_t> order(static_cast<size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return t.strides()[a] > t.strides()[b];
  });
  Shape sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) {
    sizes[i] = t.sizes()[order[i]];
    strides[i] = t.strides()[order[i]];
  }
  const int64_t n = t.numel();
  T* base = static_cast<T*>(t.raw_data());
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    fn(base + off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      off += strides[d];
      if (++idx[d] < sizes[d]) {
        break;
      }
      off -= strides[d] * sizes[d];
      idx[d] = 0;
    }
  }
}

GeneratorImpl& resolve(const std::optional<Generator>& gen, Generator& hold) {
  hold = gen ? *gen : default_generator();
  return *hold.impl();
}

} // namespace

Tensor& Tensor::uniform_(
    double from,
    double to,
    const std::optional<Generator>& gen) {
  detail::OpScope op("uniform_");
  check_defined("uniform_");
  DITTO_CHECK(
      is_floating(dtype()),
      TypeError,
      "uniform_",
      "not implemented for ",
      dtype());
  DITTO_CHECK(
      from <= to,
      ValueError,
      "uniform_",
      "expects to return a [from, to) range, but found from=",
      from,
      " > to=",
      to);
  detail::check_no_internal_overlap(*this, "uniform_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  dispatch_dtype(dtype(), "uniform_", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      // PyTorch clamps the bounds into T's range, casts them to T, and
      // checks the width.
      const double lo = double(std::numeric_limits<T>::lowest());
      const double hi = double(std::numeric_limits<T>::max());
      const T f = T(std::clamp(from, lo, hi));
      const T t = T(std::clamp(to, lo, hi));
      DITTO_CHECK(
          double(t) - double(f) <= hi,
          ValueError,
          "uniform_",
          "expects to-from <= std::numeric_limits<",
          dtype(),
          ">::max(), but found to=",
          to,
          " and from=",
          from);
      const T width = t - f;
      // The low digits bits of one draw (two for double), scaled to [0, 1).
      constexpr int kDigits = std::numeric_limits<T>::digits;
      constexpr uint64_t kMask = (uint64_t(1) << kDigits) - 1;
      const T kScale = T(1) / T(uint64_t(1) << kDigits);
      std::lock_guard<std::mutex> lock(g.mutex);
      for_each_in_memory_order<T>(*this, [&](T* p) {
        uint64_t v = std::is_same_v<T, double> ? g.random64() : g.random();
        T x = T(v & kMask) * kScale;
        // PyTorch's AVX2/AVX-512 kernels (its default on x86-64) contract
        // x * width + from into one fused multiply-add.
        *p = std::fma(x, width, f);
      });
    }
  });
  op.done(*this);
  return *this;
}

Tensor rand(
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  detail::OpScope op("rand");
  DITTO_CHECK(
      is_floating(dtype), TypeError, "rand", "not implemented for ", dtype);
  Tensor t = detail::new_tensor(shape, dtype);
  t.uniform_(0.0, 1.0, gen);
  return op.done(t);
}

Tensor rand_like(const Tensor& t, const std::optional<Generator>& gen) {
  return rand(t.sizes(), t.dtype(), gen);
}

} // namespace ditto
