#include "ditto/ops/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ditto/kernels/cpu/math.h"
#include "ditto/kernels/device_kernels.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/random_fill.h"
#include "ditto/ops/detail/random_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/generator_impl.h"

namespace ditto {
using namespace random_fill;

namespace {
// A random factory with torch's options: drawn by fill on a new tensor of
// the options' dtype, on their device, requires_grad as they ask.
template <typename Fill>
Tensor drawn(
    const char* name,
    const Shape& size,
    const TensorOptions& options,
    Fill fill) {
  return detail::with_options(
      new_filled(name, size, options.dtype(), options.device(), fill), options);
}
} // namespace

Tensor& Tensor::uniform_(
    double from,
    double to,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(*this) && is_floating(dtype())) {
    return uniform_storage(*this, from, to, gen);
  }
  detail::OpScope op("uniform_", {*this}, detail::OpScope::kInplace);
  if (!is_cpu()) {
    device_fill(*this, gen, "uniform_", [&](Tensor& host, const Generator& g) {
      host.uniform_(from, to, g);
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  check_uniform_args(*this, from, to);
  detail::check_no_internal_overlap(*this, "uniform_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  dispatch_dtype(dtype(), "uniform_", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      // As PyTorch: each bound must lie in T's range (not infinite, not
      // NaN), then the width must be finite in T.
      const double lo = double(std::numeric_limits<T>::lowest());
      const double hi = double(std::numeric_limits<T>::max());
      const char* type = std::is_same_v<T, float> ? "float" : "double";
      DITTO_CHECK(
          from >= lo && from <= hi,
          ValueError,
          "uniform_",
          "from is out of bounds for ",
          type);
      DITTO_CHECK(
          to >= lo && to <= hi,
          ValueError,
          "uniform_",
          "to is out of bounds for ",
          type);
      const T f = T(from);
      const T t = T(to);
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
      const bool unit = f == T(0) && width == T(1); // x * 1 + 0 is exact
      std::lock_guard<std::mutex> lock(g.mutex);
      if (g.philox_key() && is_contiguous()) {
        uint64_t first = g.reserve(uint64_t(numel()) * kUniformWords<T>);
        philox_fill<T, kUniformWords<T>>(
            data_ptr<T>(), numel(), *g.philox_key(), first, [&](uint64_t v) {
              T x = uniform01_from<T>(v);
              return unit ? x : std::fma(x, width, f);
            });
        return;
      }
      for_each_in_memory_order<T>(*this, [&](T* p) {
        T x = uniform01<T>(g);
        // PyTorch's AVX2/AVX-512 kernels (its default on x86-64) contract
        // x * width + from into one fused multiply-add.
        *p = unit ? x : std::fma(x, width, f);
      });
    }
  });
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

Tensor rand(
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  return new_filled("rand", shape, dtype, kCPU, [&](Tensor& t) {
    t.uniform_(0.0, 1.0, gen);
  });
}

Tensor rand_like(const Tensor& t, const std::optional<Generator>& gen) {
  return rand(t.sizes(), t.dtype(), gen);
}

Tensor rand(
    const IntArg& size,
    const std::optional<Generator>& generator,
    const TensorOptions& options) {
  return drawn("rand", size, options, [&](Tensor& t) {
    t.uniform_(0.0, 1.0, generator);
  });
}

// From the default generator (of the device the tensor is made on).
Tensor rand_like(const Tensor& self, const TensorOptions& options) {
  return rand(self.sizes(), std::nullopt, detail::like_options(self, options));
}

} // namespace ditto

namespace ditto {

Tensor& Tensor::normal_(
    double mean,
    double std,
    const std::optional<Generator>& gen) {
  if (detail::is_storage(*this) && is_floating(dtype())) {
    return normal_storage(*this, mean, std, gen);
  }
  detail::OpScope op("normal_", {*this}, detail::OpScope::kInplace);
  if (!is_cpu()) {
    device_fill(*this, gen, "normal_", [&](Tensor& host, const Generator& g) {
      host.normal_(mean, std, g);
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  check_normal_args(*this, std);
  detail::check_no_internal_overlap(*this, "normal_");
  Generator hold;
  GeneratorImpl& g = resolve(gen, hold);
  std::lock_guard<std::mutex> lock(g.mutex);
  const int64_t n = numel();
  if (g.philox_key() && n >= 16 && is_contiguous()) {
    // The same 16-block structure with counter-based uniforms: elements
    // and blocks are independent, so both steps run in parallel.
    dispatch_dtype(dtype(), "normal_", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        T* d = data_ptr<T>();
        constexpr int kW = kUniformWords<T>;
        const int64_t tail = n % 16 ? 16 : 0;
        uint64_t first = g.reserve(uint64_t(n + tail) * kW);
        auto u = [](uint64_t v) { return uniform01_from<T>(v); };
        philox_fill<T, kW>(d, n, *g.philox_key(), first, u);
        parallel_for(0, n / 16, kPhiloxGrain / 16, [&](int64_t b, int64_t e) {
          normal_blocks<true>(d + 16 * b, e - b, mean, std);
        });
        if (tail) {
          T fresh[16];
          philox_fill<T, kW>(
              fresh, 16, *g.philox_key(), first + uint64_t(n) * kW, u);
          std::copy(fresh, fresh + 16, d + n - 16);
          normal_blocks<true>(d + n - 16, 1, mean, std);
        }
      }
    });
    op.done_inplace(*this, draws_have_no_gradient);
    return *this;
  }
  if (n >= 16 && is_contiguous()) {
    // PyTorch's vectorized fill: n uniforms, 16-blocks transformed in
    // place, then, if n % 16 != 0, 16 fresh uniforms for the last 16
    // elements and one more block. The scalar cache is not touched.
    dispatch_dtype(dtype(), "normal_", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        T* d = data_ptr<T>();
        for (int64_t i = 0; i < n; ++i) {
          d[i] = uniform01<T>(g);
        }
        normal_blocks<false>(d, n / 16, mean, std);
        if (n % 16 != 0) {
          T* tail = d + n - 16;
          for (int i = 0; i < 16; ++i) {
            tail[i] = uniform01<T>(g);
          }
          normal_blocks<false>(tail, 1, mean, std);
        }
      }
    });
  } else {
    dispatch_dtype(dtype(), "normal_", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const bool own = g.philox_key() != nullptr;
        for_each_in_memory_order<T>(*this, [&](T* p) {
          *p =
              T(own ? normal_scalar<true>(g, mean, std)
                    : normal_scalar<false>(g, mean, std));
        });
      }
    });
  }
  op.done_inplace(*this, draws_have_no_gradient);
  return *this;
}

Tensor randn(
    const Shape& shape,
    Dtype dtype,
    const std::optional<Generator>& gen) {
  return new_filled("randn", shape, dtype, kCPU, [&](Tensor& t) {
    t.normal_(0.0, 1.0, gen);
  });
}

Tensor randn_like(const Tensor& t, const std::optional<Generator>& gen) {
  return randn(t.sizes(), t.dtype(), gen);
}

Tensor randn(
    const IntArg& size,
    const std::optional<Generator>& generator,
    const TensorOptions& options) {
  return drawn("randn", size, options, [&](Tensor& t) {
    t.normal_(0.0, 1.0, generator);
  });
}

// From the default generator (of the device the tensor is made on).
Tensor randn_like(const Tensor& self, const TensorOptions& options) {
  return randn(self.sizes(), std::nullopt, detail::like_options(self, options));
}

} // namespace ditto
