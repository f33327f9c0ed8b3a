// erfinv: ATen's algorithm (a rational approximation and two Newton
// steps through libm's erf and exp; docs/numerics.md).
#include <cmath>
#include <limits>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"

namespace ditto {
namespace {

// ATen's calc_erfinv (c10 Math.h), as GCC compiles it for PyTorch's AVX2
// kernels: the polynomials' a * z + b contracted into fused multiply-adds.
template <typename T>
T calc_erfinv(T y) {
  constexpr T kCentral = T(0.7);
  const T a[4] = {
      T(0.886226899), T(-1.645349621), T(0.914624893), T(-0.140543331)};
  const T b[4] = {
      T(-2.118377725), T(1.442710462), T(-0.329097515), T(0.012229801)};
  const T c[4] = {
      T(-1.970840454), T(-1.624906493), T(3.429567803), T(1.641345311)};
  const T d[2] = {T(3.543889200), T(1.637067800)};
  const T ya = std::abs(y);
  if (ya > T(1)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (ya == T(1)) {
    return std::copysign(std::numeric_limits<T>::infinity(), y);
  }
  T x;
  if (ya <= kCentral) {
    const T z = y * y;
    const T num = std::fma(std::fma(std::fma(a[3], z, a[2]), z, a[1]), z, a[0]);
    const T dem = std::fma(
        std::fma(std::fma(std::fma(b[3], z, b[2]), z, b[1]), z, b[0]), z, T(1));
    x = y * num / dem;
  } else {
    const T z = std::sqrt(-std::log((T(1) - ya) / T(2)));
    const T num = std::fma(std::fma(std::fma(c[3], z, c[2]), z, c[1]), z, c[0]);
    const T dem = std::fma(std::fma(d[1], z, d[0]), z, T(1));
    x = std::copysign(num, y) / dem;
  }
  const T k = T(2) / T(std::sqrt(3.14159265358979323846));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  x = x - (std::erf(x) - y) / (k * std::exp(-x * x));
  return x;
}

} // namespace

Tensor erfinv(const Tensor& x) {
  const char* op = "erfinv";
  detail::OpScope scope(op, {x});
  DITTO_CHECK(x.defined(), ValueError, op, "undefined tensor");
  const Tensor in =
      x.to(is_floating(x.dtype()) ? x.dtype() : kFloat32).contiguous();
  Tensor out = detail::new_tensor(x.sizes(), in.dtype());
  dispatch_dtype(in.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = in.data_ptr<T>();
      T* opp = out.data_ptr<T>();
      parallel_for(0, in.numel(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          opp[i] = calc_erfinv(ip[i]);
        }
      });
    }
  });
  return scope.done(out, [sy = scope.save(out)](const autograd::GradList& g) {
    // d/dx erfinv(x) = sqrt(pi)/2 exp(erfinv(x)^2)
    Tensor y = sy.unpack();
    return autograd::GradList{
        mul(g[0], mul(exp(mul(y, y)), 0.8862269254527580))};
  });
}

} // namespace ditto
