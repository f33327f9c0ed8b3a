// The loops behind every elementwise op and reduction. This file is compiled
// once per CPU capability (DITTO_KERNEL_NS = scalar, avx2, avx512) with that
// capability's flags; see Note [Same bits on every ISA].
//
// Note [Same bits on every ISA]
// Each loop is written as scalar C++ in which every element goes through a
// fixed sequence of IEEE operations (contraction is off, no fast-math, no
// libm). The compiler may vectorize it for AVX2 or AVX-512, which changes how
// many elements are processed at once but not the operations applied to
// each, so every variant produces the same bits. Reductions keep 16 partial
// sums (one per logical lane, element i going to lane i % 16) and combine
// them in a fixed tree, which a 16-float AVX-512 register, two AVX2 registers
// or 16 scalars all compute alike.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ditto/core/half.h"
#include "ditto/kernels/cpu/erf.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/kernels/cpu/math.h"
#include "ditto/kernels/cpu/special.h"
#include "ditto/kernels/cpu/trig.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#define DITTO_VECTOR_BYTES 64
#elif defined(__AVX2__)
#include <immintrin.h>
#define DITTO_VECTOR_BYTES 32
#endif

#ifndef DITTO_KERNEL_NS
#error "DITTO_KERNEL_NS must name the capability this file is compiled for"
#endif

namespace ditto::kernels::DITTO_KERNEL_NS {

#include "ditto/kernels/cpu/box_muller.h"

namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

// Integer arithmetic wraps (two's complement) instead of being undefined.
template <typename T>
using Wide = std::conditional_t<
    std::is_same_v<T, bool>,
    bool,
    std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, int, T>>>;

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return a + b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    return T(Wide<T>(a) + Wide<T>(b));
  }
}

template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return a - b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a != b;
  } else {
    return T(Wide<T>(a) - Wide<T>(b));
  }
}

template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return a * b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return T(Wide<T>(a) * Wide<T>(b));
  }
}

// Integer power by squaring. A negative exponent gives 1/base^-e truncated,
// as PyTorch: 1 for base 1, +-1 for base -1, else 0.
template <typename T>
T int_pow(T base, T e) {
  if constexpr (std::is_signed_v<T>) {
    if (e < 0) {
      return base == 1 ? T(1) : base == -1 ? T((e & 1) ? -1 : 1) : T(0);
    }
  }
  Wide<T> result = 1;
  Wide<T> b = Wide<T>(base);
  for (int i = 0; i < 64 && e > 0; ++i) {
    if (e & 1) {
      result = Wide<T>(result * b);
    }
    b = Wide<T>(b * b);
    e = T(e >> 1);
  }
  return T(result);
}

// Float to integer: NaN and out-of-range values give the integer minimum,
// what x86 conversion instructions give, but defined here so the scalar
// and vector paths agree.
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, Half>) {
    return convert<To>(half_to_float(v)); // exact in float32
  } else if constexpr (std::is_same_v<From, BFloat16>) {
    return convert<To>(bfloat16_to_float(v));
  } else if constexpr (std::is_same_v<To, Half>) {
    // As c10::Half(float): a double or an integer goes through float32.
    return float_to_half(convert<float>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return float_to_bfloat16(convert<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsFloat<To>) {
    return static_cast<To>(v);
  } else if constexpr (kIsFloat<From>) {
    // Through int64: in range when -2^63 <= v < 2^63.
    constexpr From lo = From(-9223372036854775808.0);
    bool ok = v >= lo && v < -lo;
    int64_t i = static_cast<int64_t>(ok ? v : From(0));
    i = ok ? i : std::numeric_limits<int64_t>::min();
    if constexpr (std::is_same_v<To, int32_t>) {
      bool fits = i >= INT32_MIN && i <= INT32_MAX;
      return fits ? int32_t(i) : INT32_MIN;
    } else {
      return static_cast<To>(static_cast<uint64_t>(i));
    }
  } else {
    // Integer to narrower integer: two's complement truncation.
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(
        static_cast<uint64_t>(static_cast<int64_t>(v))));
  }
}

#define DITTO_BINARY_FUNCTOR(Name, expr) \
  struct Name {                          \
    template <typename T>                \
    static auto apply(T a, T b) {        \
      return expr;                       \
    }                                    \
  };

DITTO_BINARY_FUNCTOR(AddF, wrap_add(a, b))
DITTO_BINARY_FUNCTOR(SubF, wrap_sub(a, b))
DITTO_BINARY_FUNCTOR(MulF, wrap_mul(a, b))
DITTO_BINARY_FUNCTOR(DivF, a / b)
DITTO_BINARY_FUNCTOR(EqF, a == b)
DITTO_BINARY_FUNCTOR(NeF, a != b)
DITTO_BINARY_FUNCTOR(LtF, a < b)
DITTO_BINARY_FUNCTOR(LeF, a <= b)
DITTO_BINARY_FUNCTOR(GtF, a > b)
DITTO_BINARY_FUNCTOR(GeF, a >= b)
// |a| with b's sign bit (floating only: the op promotes integers).
DITTO_BINARY_FUNCTOR(CopysignF, std::copysign(a, b))
// Integers and bool only (the table has no floating loops for them): on
// bool, & | ^ are and, or, xor.
DITTO_BINARY_FUNCTOR(BitwiseAndF, T(a& b))
DITTO_BINARY_FUNCTOR(BitwiseOrF, T(a | b))
DITTO_BINARY_FUNCTOR(BitwiseXorF, T(a ^ b))
#undef DITTO_BINARY_FUNCTOR

// atan2, hypot, logaddexp, xlogy (floating operands: the op promotes
// integers). hypot: float in double, where the sum of squares is exact
// but one rounding, and double scaled by the larger operand.
struct Atan2F {
  template <typename T>
  static T apply(T a, T b) {
    return math::atan2(a, b);
  }
};
struct HypotF {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (std::is_same_v<T, float>) {
      const double x = a, y = b;
      return static_cast<float>(std::sqrt(x * x + y * y));
    } else {
      const T x = std::fabs(a), y = std::fabs(b);
      const T big = x > y ? x : y, small = x > y ? y : x;
      const T r = small / big;
      const T h = big * std::sqrt(T(1) + r * r);
      // 0/0 (both zero) and inf/inf; an infinite operand wins over a NaN.
      return x == std::numeric_limits<T>::infinity() ||
              y == std::numeric_limits<T>::infinity()
          ? std::numeric_limits<T>::infinity()
          : (big == T(0) ? T(0) : h);
    }
  }
};
// max + log1p(exp(-|a - b|)); equal infinities give themselves.
struct LogaddexpF {
  template <typename T>
  static T apply(T a, T b) {
    if (a == b && std::isinf(a)) {
      return a;
    }
    const T m = a > b ? a : b;
    return (a != a || b != b) ? a + b
                              : m + math::log1p(math::exp(-std::fabs(a - b)));
  }
};
// self * log(other), 0 where self is 0 (unless other is NaN).
struct XlogyF {
  template <typename T>
  static T apply(T a, T b) {
    if (b != b) {
      return b;
    }
    return a == T(0) ? T(0) : a * math::log(b);
  }
};
// Python's modulo: the remainder of a / b with b's sign. Floating: C's
// fmod (exact) plus b when the signs differ (one rounding); integers as
// Python's % (a zero divisor is refused before the loop).
struct RemainderF {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      const T r = std::fmod(a, b);
      return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
    } else if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else {
      if (b == T(-1) || b == 0) {
        return T(0);
      }
      const T r = T(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
    }
  }
};

// C's fmod: exact in IEEE (the remainder is representable); integers
// truncate as C's % (a zero divisor is refused before the loop; -1 gives 0,
// where INT_MIN % -1 would overflow).
struct FmodF {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return std::fmod(a, b);
    } else if constexpr (std::is_same_v<T, bool>) {
      return false; // b is true: a % 1
    } else {
      return b == 0 || b == T(-1) ? T(0) : T(a % b);
    }
  }
};

struct PowF {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return math::pow(a, b);
    } else if constexpr (std::is_same_v<T, bool>) {
      return a || !b;
    } else {
      return int_pow(a, b);
    }
  }
};

// maximum/minimum propagate NaN from either side.
struct MaximumF {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return a != a ? a : (b != b ? b : (a > b ? a : b));
    } else {
      return a > b ? a : b;
    }
  }
};

struct MinimumF {
  template <typename T>
  static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return a != a ? a : (b != b ? b : (a < b ? a : b));
    } else {
      return a < b ? a : b;
    }
  }
};

template <typename Op, typename T>
void binary_loop(
    int64_t n,
    char* out,
    const char* a,
    const char* b,
    int64_t so,
    int64_t sa,
    int64_t sb) {
  using R = decltype(Op::apply(T{}, T{}));
  R* o = reinterpret_cast<R*>(out);
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  if (so == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) {
      o[i] = Op::apply(x[i], y[i]);
    }
  } else if (so == 1 && sa == 1 && sb == 0) {
    const T yv = y[0];
    for (int64_t i = 0; i < n; ++i) {
      o[i] = Op::apply(x[i], yv);
    }
  } else if (so == 1 && sa == 0 && sb == 1) {
    const T xv = x[0];
    for (int64_t i = 0; i < n; ++i) {
      o[i] = Op::apply(xv, y[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      o[i * so] = Op::apply(x[i * sa], y[i * sb]);
    }
  }
}

template <FusedOp op, typename T>
void fused_loop(
    int64_t n,
    char* out,
    const char* a,
    const char* b,
    const char* c,
    const int64_t* st,
    double s_in) {
  T* o = reinterpret_cast<T*>(out);
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  const T* z = reinterpret_cast<const T*>(c);
  const T s = static_cast<T>(s_in);
  auto f = [s](T xv, T yv, T zv) {
    if constexpr (op == FusedOp::AddScaled) {
      return std::fma(s, yv, xv);
    } else if constexpr (op == FusedOp::Addcmul) {
      return std::fma(T(s * yv), zv, xv);
    } else {
      return T(xv + T(T(s * yv) / zv));
    }
  };
  const bool dense = st[0] == 1 && st[1] == 1 && st[2] == 1 &&
      (op == FusedOp::AddScaled || st[3] == 1);
  if (dense) {
    for (int64_t i = 0; i < n; ++i) {
      o[i] = f(x[i], y[i], op == FusedOp::AddScaled ? T(0) : z[i]);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    o[i * st[0]] =
        f(x[i * st[1]],
          y[i * st[2]],
          op == FusedOp::AddScaled ? T(0) : z[i * st[3]]);
  }
}

template <FusedOp op>
void fill_fused(KernelTable& t) {
  t.fused[int(op)][dtype_index(kFloat32)] = &fused_loop<op, float>;
  t.fused[int(op)][dtype_index(kFloat64)] = &fused_loop<op, double>;
}

#define DITTO_UNARY_FUNCTOR(Name, expr) \
  struct Name {                         \
    template <typename T>               \
    static T apply(T x) {               \
      return expr;                      \
    }                                   \
  };

DITTO_UNARY_FUNCTOR(LogF, math::log(x))
DITTO_UNARY_FUNCTOR(Log1pF, math::log1p(x))
DITTO_UNARY_FUNCTOR(SqrtF, std::sqrt(x))
DITTO_UNARY_FUNCTOR(TanhF, math::tanh(x))
// 1 / sqrt(x) and 1 / x, each step rounded: PyTorch's CPU kernels (AVX2
// and scalar alike) compute the same quotients.
DITTO_UNARY_FUNCTOR(RsqrtF, T(1) / std::sqrt(x))
DITTO_UNARY_FUNCTOR(ReciprocalF, T(1) / x)
// ~x on integers, not on bool (~true is -2, nonzero).
struct BitwiseNotF {
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else {
      return T(~x);
    }
  }
};

// Note [Trig loops]: trig.h's functions, in T (float: the double function
// rounded once). sin, cos and tan reduce |x| >= 2^19 with Payne-Hanek, a
// scalar function: a contiguous block runs the branch-free medium
// reduction, which vectorizes, when every element is below 2^19, and the
// per-element function otherwise; the bits are the same either way.
template <int which>
struct TrigF {
  template <typename T>
  static T apply(T x) {
    return static_cast<T>(
        math::detail::trig_any<which>(static_cast<double>(x)));
  }
  template <typename T>
  static void block(int64_t m, T* o, const T* x) {
    bool medium = true;
    for (int64_t i = 0; i < m; ++i) {
      medium &= math::detail::abs(static_cast<double>(x[i])) <
          math::detail::kTrigMediumLimit;
    }
    if (medium) {
      for (int64_t i = 0; i < m; ++i) {
        o[i] = static_cast<T>(
            math::detail::trig_medium<which>(static_cast<double>(x[i])));
      }
    } else {
      for (int64_t i = 0; i < m; ++i) {
        o[i] = apply(x[i]);
      }
    }
  }
};
using SinF = TrigF<0>;
using CosF = TrigF<1>;
using TanF = TrigF<2>;
DITTO_UNARY_FUNCTOR(AsinF, math::asin(x))
DITTO_UNARY_FUNCTOR(AcosF, math::acos(x))
DITTO_UNARY_FUNCTOR(AtanF, math::atan(x))
DITTO_UNARY_FUNCTOR(SinhF, math::sinh(x))
DITTO_UNARY_FUNCTOR(CoshF, math::cosh(x))
DITTO_UNARY_FUNCTOR(AsinhF, math::asinh(x))
DITTO_UNARY_FUNCTOR(AcoshF, math::acosh(x))
DITTO_UNARY_FUNCTOR(AtanhF, math::atanh(x))
DITTO_UNARY_FUNCTOR(Log2F, math::log2(x))
DITTO_UNARY_FUNCTOR(Log10F, math::log10(x))
DITTO_UNARY_FUNCTOR(Exp2F, math::exp2(x))
DITTO_UNARY_FUNCTOR(Expm1F, math::expm1(x))
// special.h: lgamma, digamma and trigamma (digamma's derivative).
DITTO_UNARY_FUNCTOR(LgammaF, math::lgamma(x))
DITTO_UNARY_FUNCTOR(DigammaF, math::digamma(x))
DITTO_UNARY_FUNCTOR(TrigammaF, math::trigamma(x))
// -1, 0 or 1 (NaN gives 0, as torch.sign; -0 gives 0); integers alike.
struct SignF {
  template <typename T>
  static T apply(T x) {
    return static_cast<T>(int(T(0) < x) - int(x < T(0)));
  }
};

// Rounding to an integral value is exact in IEEE; integers are their own
// value. round is to nearest, ties to even (kernels run in round to
// nearest), as torch.round.
#define DITTO_ROUNDING_FUNCTOR(Name, fn) \
  struct Name {                          \
    template <typename T>                \
    static T apply(T x) {                \
      if constexpr (kIsFloat<T>) {       \
        return fn(x);                    \
      } else {                           \
        return x;                        \
      }                                  \
    }                                    \
  };
DITTO_ROUNDING_FUNCTOR(FloorF, std::floor)
DITTO_ROUNDING_FUNCTOR(CeilF, std::ceil)
DITTO_ROUNDING_FUNCTOR(TruncF, std::trunc)
DITTO_ROUNDING_FUNCTOR(RoundF, std::nearbyint)
#undef DITTO_ROUNDING_FUNCTOR

// Note [Staged loops]
// exp and sigmoid are chains of 40 to 60 dependent vector operations per
// element. In one loop over the whole chain the out-of-order window fills
// with operations that wait on their predecessors, and the loop runs at the
// chain's latency rather than the core's throughput (float exp over 1M
// elements with AVX2 on a Zen 4: 780 us; sigmoid 1370 us). So the
// contiguous case runs each stage of math::detail::exp_stages over a block of
// kStageBlock elements before the next, with the state between stages in
// stack arrays that stay in L1 (the same: 580 us and 870 us). Each element
// still goes through exactly the operations of math::exp / math::sigmoid in
// the same order, so the bits are theirs, and the same on every capability.
constexpr int64_t kStageBlock = 256;

template <typename T>
struct ExpStages {
  // float's exp_finish needs only r and k (Note [Float exp]); double's
  // also the reduction's hi and lo.
  static constexpr bool kHiLo = !std::is_same_v<T, float>;
  using Reduced = decltype(math::detail::exp_reduce(T{}));
  using Int = decltype(Reduced{}.k);
  alignas(64) T hi[kHiLo ? kStageBlock : 1];
  alignas(64) T lo[kHiLo ? kStageBlock : 1];
  alignas(64) T r[kStageBlock];
  alignas(64) T p[kStageBlock];
  alignas(64) Int k[kStageBlock];

  // exp_reduce then exp_poly of arg(x[i]) for i < m.
  template <typename Arg>
  void reduce_and_poly(int64_t m, const T* x, Arg arg) {
    for (int64_t i = 0; i < m; ++i) {
      Reduced a = math::detail::exp_reduce(arg(x[i]));
      if constexpr (kHiLo) {
        hi[i] = a.hi;
        lo[i] = a.lo;
      }
      r[i] = a.r;
      k[i] = a.k;
    }
    for (int64_t i = 0; i < m; ++i) {
      p[i] = math::detail::exp_poly(r[i]);
    }
  }

  // exp_finish of element i (its argument v): float's result, double's
  // hi + lo.
  auto finish(int64_t i, T v) const {
    Reduced a{};
    if constexpr (kHiLo) {
      a.hi = hi[i];
      a.lo = lo[i];
    }
    a.r = r[i];
    a.k = k[i];
    return math::detail::exp_finish(v, a, p[i]);
  }
};

struct ExpF {
  template <typename T>
  static T apply(T x) {
    return math::exp(x);
  }
  template <typename T>
  static void block(int64_t m, T* o, const T* x) {
    ExpStages<T> st;
    st.reduce_and_poly(m, x, [](T v) { return v; });
    for (int64_t i = 0; i < m; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        o[i] = st.finish(i, x[i]);
      } else {
        o[i] = st.finish(i, x[i]).hi;
      }
    }
  }
};

struct SigmoidF {
  template <typename T>
  static T apply(T x) {
    return math::sigmoid(x);
  }
  template <typename T>
  static void block(int64_t m, T* o, const T* x) {
    ExpStages<T> st;
    auto neg_abs = [](T v) { return -math::detail::abs(v); };
    st.reduce_and_poly(m, x, neg_abs);
    if constexpr (std::is_same_v<T, float>) {
      // Note [Float sigmoid]: exp(-|x|) and one division.
      // (Two stages here, the division apart: 3% slower.)
      for (int64_t i = 0; i < m; ++i) {
        o[i] = math::sigmoid_quotient(x[i], st.finish(i, neg_abs(x[i])));
      }
    } else {
      // exp(-|x|) as hi + lo, kept in hi and lo.
      for (int64_t i = 0; i < m; ++i) {
        math::detail::Parts<T> e = st.finish(i, neg_abs(x[i]));
        st.hi[i] = e.hi;
        st.lo[i] = e.lo;
      }
      for (int64_t i = 0; i < m; ++i) {
        o[i] = math::sigmoid_finish(x[i], st.hi[i], st.lo[i]);
      }
    }
  }
};

// Note [erf]: math::erf (erf.h), in T: float at most 1.03 ulp, double
// 1.01 ulp, the same fixed operations on every capability.
struct ErfF {
  template <typename T>
  static T apply(T x) {
    return math::erf(x);
  }
};

// Note [Float GELU]: the exact GELU x Phi(x). double: (x * 0.5) * (1 +
// erf(x * sqrt(1/2))), each operation rounded, as PyTorch's GeluKernel
// groups it, with the 1.01-ulp double erf. float: math::gelu (erf.h),
// Phi(x) = 1/2 + x P(x^2)/Q(x^2), one division and no exp: 30 vector
// operations where the grouping above with the 1.03-ulp erf takes about 60
// (issue 62: 1.6 times PyTorch's time at one thread; about 0.6 times now,
// docs/benchmarks.md). Its error, every float input against the double
// x Phi(x) (tests/kernels/math_test.cpp checks 22M of them): at most 5.03
// ulp for x >= -1 (PyTorch 1.13's, Abramowitz and Stegun's erf: 10.9 ulp),
// |error| <= 2.94e-7 |x| everywhere; in the negative tail, where 1/2 + x R
// cancels as PyTorch's 1 + erf does, ulps grow as the result shrinks (at
// most 954 for x >= -3, PyTorch's 549, the erf grouping's 109) and the
// absolute error stays below 1.08e-6 (PyTorch's 2.6e-7, the erf grouping's
// 8e-8), largest near x = -5 where GELU is -1.4e-6. The price of the
// speed: an accurate tail needs an exp (Gaussian decay), which alone costs
// about PyTorch's whole GELU here. For x <= -5.5426 the result is -0, for x
// >= 5.5426 x itself, and gelu(-inf) is NaN (-inf times 0), as with the erf
// grouping and PyTorch's. ditto::erf itself stays math::erf.
struct GeluF {
  template <typename T>
  static T apply(T x) {
    if constexpr (std::is_same_v<T, float>) {
      return math::gelu(x);
    } else {
      const T half = T(0.5), one = T(1), alpha = T(0.7071067811865476);
      return (x * half) * (ErfF::apply(x * alpha) + one);
    }
  }
};

struct CubeF {
  template <typename T>
  static T apply(T x) {
    return (x * x) * x;
  }
};
#undef DITTO_UNARY_FUNCTOR

struct NegF {
  template <typename T>
  static T apply(T x) {
    if constexpr (kIsFloat<T>) {
      return -x;
    } else {
      return wrap_sub(T(0), x);
    }
  }
};

struct AbsF {
  template <typename T>
  static T apply(T x) {
    if constexpr (kIsFloat<T>) {
      // Clearing the sign bit keeps NaN payloads and maps -0 to +0.
      return x < T(0) ? -x : (x == T(0) ? T(0) : x);
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? wrap_sub(T(0), x) : x;
    } else {
      return x;
    }
  }
};

// As PyTorch's clamp_min(x, 0): NaN and -0.0 pass through.
struct ReluF {
  template <typename T>
  static T apply(T x) {
    return x < T(0) ? T(0) : x;
  }
};

template <typename Op, typename T>
void unary_loop(int64_t n, char* out, const char* a, int64_t so, int64_t sa) {
  T* o = reinterpret_cast<T*>(out);
  const T* x = reinterpret_cast<const T*>(a);
  if constexpr (requires { Op::block(n, o, x); }) {
    if (so == 1 && sa == 1) {
      // Note [Staged loops]
      for (int64_t i = 0; i < n; i += kStageBlock) {
        Op::block(std::min(kStageBlock, n - i), o + i, x + i);
      }
      return;
    }
  }
  if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) {
      o[i] = Op::apply(x[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      o[i * so] = Op::apply(x[i * sa]);
    }
  }
}

template <typename To, typename From>
void cast_loop(int64_t n, char* out, const char* a, int64_t so, int64_t sa) {
  To* o = reinterpret_cast<To*>(out);
  const From* x = reinterpret_cast<const From*>(a);
  if (so == 1 && sa == 1) {
    if constexpr (std::is_same_v<To, From>) {
      std::memmove(o, x, size_t(n) * sizeof(To));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        o[i] = convert<To>(x[i]);
      }
    }
  } else if (so == 1 && sa == 0) {
    const To v = convert<To>(x[0]);
    for (int64_t i = 0; i < n; ++i) {
      o[i] = v;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      o[i * so] = convert<To>(x[i * sa]);
    }
  }
}

// clamp: NaN in x propagates, and so does a NaN bound; lo > hi gives hi.
template <typename T>
void clamp_loop(
    int64_t n,
    char* out,
    const char* a,
    int64_t so,
    int64_t sa,
    const void* lo_p,
    const void* hi_p) {
  T* o = reinterpret_cast<T*>(out);
  const T* x = reinterpret_cast<const T*>(a);
  const bool has_lo = lo_p != nullptr;
  const bool has_hi = hi_p != nullptr;
  const T lo = has_lo ? *static_cast<const T*>(lo_p) : T(0);
  const T hi = has_hi ? *static_cast<const T*>(hi_p) : T(0);
  auto f = [&](T v) {
    if constexpr (kIsFloat<T>) {
      if (has_lo) {
        v = lo != lo ? lo : (v < lo ? lo : v);
      }
      if (has_hi) {
        v = hi != hi ? hi : (v > hi ? hi : v);
      }
    } else {
      if (has_lo) {
        v = v < lo ? lo : v;
      }
      if (has_hi) {
        v = v > hi ? hi : v;
      }
    }
    return v;
  };
  if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) {
      o[i] = f(x[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      o[i * so] = f(x[i * sa]);
    }
  }
}

// c ? u : v by masks on the bits: no branch (a random mask mispredicted
// half of them: where on 2^20 float32 elements took 2.5 ms on two threads,
// Zen 5), and loops of it vectorize. The chosen value's bits, unchanged.
template <typename T>
inline T pick(bool c, T u, T v) {
  using U = std::conditional_t<
      sizeof(T) == 1,
      uint8_t,
      std::conditional_t<
          sizeof(T) == 2,
          uint16_t,
          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(U) == sizeof(T));
  const U m = U(U(0) - U(c));
  return std::bit_cast<T>(
      U((std::bit_cast<U>(u) & m) | (std::bit_cast<U>(v) & U(~m))));
}

template <typename T>
void where_loop(
    int64_t n,
    char* out,
    const char* cond,
    const char* a,
    const char* b,
    const int64_t* s) {
  T* o = reinterpret_cast<T*>(out);
  const bool* c = reinterpret_cast<const bool*>(cond);
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
    for (int64_t i = 0; i < n; ++i) {
      o[i] = pick(c[i], x[i], y[i]);
    }
  } else if (s[0] == 1 && s[1] == 1 && s[2] == 0 && s[3] == 1) {
    const T u = x[0]; // masked_fill, where(mask, scalar, t)
    for (int64_t i = 0; i < n; ++i) {
      o[i] = pick(c[i], u, y[i]);
    }
  } else if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 0) {
    const T v = y[0];
    for (int64_t i = 0; i < n; ++i) {
      o[i] = pick(c[i], x[i], v);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      o[i * s[0]] = pick(c[i * s[1]], x[i * s[2]], y[i * s[3]]);
    }
  }
}

template <typename T>
using Acc = std::conditional_t<kIsFloat<T>, T, int64_t>;

constexpr int kLanes = 16;

// See Note [Same bits on every ISA]: element i goes to lane i % 16, then the
// lanes are combined as ((0+8)+(4+12))+... by halving.
template <typename T, bool kProd>
T combine_lanes(T* acc) {
  for (int w = kLanes / 2; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) {
      acc[j] = kProd ? acc[j] * acc[j + w] : acc[j] + acc[j + w];
    }
  }
  return acc[0];
}

template <typename T, bool kProd>
T lane_reduce_chunk(const T* x, int64_t n) {
  T acc[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    acc[j] = kProd ? T(1) : T(0);
  }
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      acc[j] = kProd ? acc[j] * x[i + j] : acc[j] + x[i + j];
    }
  }
  for (int j = 0; i + j < n; ++j) {
    acc[j] = kProd ? acc[j] * x[i + j] : acc[j] + x[i + j];
  }
  return combine_lanes<T, kProd>(acc);
}

// Note [Blocked sums]
// A floating sum's chunk is cut into blocks of 256 elements (16 per lane).
// Lane j of block b sums its 16 elements (chunk elements 256 b + j,
// 256 b + j + 16, ...) in order from +0; each lane then adds its blocks'
// sums in the fixed pairwise tree (block i += block i + s for i a multiple
// of 2s, s = 1, 2, 4, ..., 32; a block past the chunk's end is absent),
// and the lanes combine by halving as before. A lane's error grows with
// 16 + 6 additions instead of the 1,024 of one running sum per lane: on
// data of two magnitudes it is as accurate as PyTorch's cascade sum or
// better (tests/ops/reduce_test.cpp, SumIsAtLeastAsAccurateAsPyTorchs).
// Since 2026-12-03; products keep one running product per lane.
constexpr int64_t kBlockLen = 16;
constexpr int64_t kBlockElems = kBlockLen * kLanes;
constexpr int64_t kChunkBlocks = kReduceGrain / kBlockElems;
static_assert(kChunkBlocks * kBlockElems == kReduceGrain);

// The pairwise tree over nb blocks' lane sums, then the lanes.
template <typename T>
T combine_blocks(T (*part)[kLanes], int64_t nb) {
  for (int64_t s = 1; s < nb; s *= 2) {
    for (int64_t b = 0; b + s < nb; b += 2 * s) {
      for (int j = 0; j < kLanes; ++j) {
        part[b][j] = part[b][j] + part[b + s][j];
      }
    }
  }
  return combine_lanes<T, false>(part[0]);
}

template <typename T>
T blocked_sum_chunk(const T* x, int64_t n) {
  T part[kChunkBlocks][kLanes];
  const int64_t nb = (n + kBlockElems - 1) / kBlockElems;
  for (int64_t b = 0; b < nb; ++b) {
    const T* xb = x + b * kBlockElems;
    const int64_t m = std::min(kBlockElems, n - b * kBlockElems);
    T acc[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      acc[j] = T(0);
    }
    int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        acc[j] = acc[j] + xb[i + j];
      }
    }
    for (int j = 0; i + j < m; ++j) {
      acc[j] = acc[j] + xb[i + j];
    }
    for (int j = 0; j < kLanes; ++j) {
      part[b][j] = acc[j];
    }
  }
  return nb == 0 ? T(0) : combine_blocks<T>(part, nb);
}

// Note [Interleaved chunks]
// A chunk's 16 lanes are 16 chains of dependent adds: two vector registers
// with AVX2, one with AVX-512. Run one chunk at a time, the loop waits on the
// add's latency rather than on memory (sum of 1M floats, one thread, AVX2:
// 56 us against PyTorch's 46). The chunks are independent, so lane_reduce
// takes a run of them and advances kReduceGroup full chunks together: that
// many times the independent chains, each chunk's own operations in its own
// order, so each partial has the bits it had alone.
template <typename T, bool kProd>
void lane_reduce_group(const T* x, T* out) {
  constexpr int kG = int(kReduceGroup);
  T acc[kG][kLanes];
  for (int g = 0; g < kG; ++g) {
    for (int j = 0; j < kLanes; ++j) {
      acc[g][j] = kProd ? T(1) : T(0);
    }
  }
  for (int64_t i = 0; i < kReduceGrain; i += kLanes) {
#pragma GCC unroll 4
    for (int g = 0; g < kG; ++g) {
      const T* xg = x + g * kReduceGrain + i;
      for (int j = 0; j < kLanes; ++j) {
        acc[g][j] = kProd ? acc[g][j] * xg[j] : acc[g][j] + xg[j];
      }
    }
  }
  for (int g = 0; g < kG; ++g) {
    out[g] = combine_lanes<T, kProd>(acc[g]);
  }
}

// kReduceGroup full chunks of a floating sum (Note [Blocked sums]), block
// by block, the chunks' additions interleaved. The pairwise tree over the
// 64 blocks is built as the blocks complete (a binary counter: block b's
// sum absorbs the stored sums of levels 0, 1, ... while bit l of b is 1),
// the same additions as combine_blocks' tree, in a stack of 7 levels
// instead of 64 stored sums (sum of 1M floats, one thread: 52 against 72
// us).
template <typename T>
void blocked_sum_group(const T* x, T* out) {
  constexpr int kG = int(kReduceGroup);
  constexpr int kLevels = 7; // log2(kChunkBlocks) + 1
  static_assert(kChunkBlocks == int64_t(1) << (kLevels - 1));
  T stack[kG][kLevels][kLanes];
  for (int64_t b = 0; b < kChunkBlocks; ++b) {
    T acc[kG][kLanes];
    for (int g = 0; g < kG; ++g) {
      for (int j = 0; j < kLanes; ++j) {
        acc[g][j] = T(0);
      }
    }
    for (int64_t i = 0; i < kBlockElems; i += kLanes) {
#pragma GCC unroll 4
      for (int g = 0; g < kG; ++g) {
        const T* xg = x + g * kReduceGrain + b * kBlockElems + i;
        for (int j = 0; j < kLanes; ++j) {
          acc[g][j] = acc[g][j] + xg[j];
        }
      }
    }
    int level = 0;
    for (int64_t c = b; (c & 1) != 0; c >>= 1, ++level) {
      for (int g = 0; g < kG; ++g) {
        for (int j = 0; j < kLanes; ++j) {
          acc[g][j] = stack[g][level][j] + acc[g][j];
        }
      }
    }
    for (int g = 0; g < kG; ++g) {
      for (int j = 0; j < kLanes; ++j) {
        stack[g][level][j] = acc[g][j];
      }
    }
  }
  for (int g = 0; g < kG; ++g) {
    out[g] = combine_lanes<T, false>(stack[g][kLevels - 1]);
  }
}

// One partial per chunk of kReduceGrain elements (the last may be shorter).
template <typename T, bool kProd>
void lane_reduce(const char* xp, int64_t n, void* out) {
  const T* x = reinterpret_cast<const T*>(xp);
  const int64_t chunks = (n + kReduceGrain - 1) / kReduceGrain;
  int64_t c = 0;
  if constexpr (kIsFloat<T>) {
    T* o = static_cast<T*>(out);
    for (; (c + kReduceGroup) * kReduceGrain <= n; c += kReduceGroup) {
      if constexpr (kProd) {
        lane_reduce_group<T, true>(x + c * kReduceGrain, o + c);
      } else {
        blocked_sum_group<T>(x + c * kReduceGrain, o + c);
      }
    }
    for (; c < chunks; ++c) {
      const int64_t b = c * kReduceGrain;
      const int64_t m = std::min(kReduceGrain, n - b);
      o[c] = kProd ? lane_reduce_chunk<T, true>(x + b, m)
                   : blocked_sum_chunk<T>(x + b, m);
    }
  } else {
    // Integer accumulation is exact modulo 2^64, so order does not matter.
    int64_t* o = static_cast<int64_t*>(out);
    for (; c < chunks; ++c) {
      const int64_t e = std::min(n, (c + 1) * kReduceGrain);
      uint64_t acc = kProd ? 1 : 0;
      for (int64_t i = c * kReduceGrain; i < e; ++i) {
        uint64_t v = uint64_t(int64_t(x[i]));
        acc = kProd ? acc * v : acc + v;
      }
      o[c] = int64_t(acc);
    }
  }
}

// The extremum of x[0, n) and the index of its first occurrence, the first
// NaN winning over everything: what one pass that keeps the first strict
// improvement gives. Done in two passes: kArgLanes independent lanes
// without a branch (the one pass branched on every element and carried
// one dependence: about 1 ns an element, max over 2^20 float32 elements
// 593 us on two threads here, now 286): the extremum and whether there is
// a NaN; then the first index holding a value equal to it (or the first
// NaN). The value returned is the element at that index (of -0.0 and +0.0
// the first, as the one pass keeps).
constexpr int64_t kArgLanes = 16;

template <typename T, bool kMax>
void arg_reduce(const char* xp, int64_t n, void* value, int64_t* index) {
  const T* x = reinterpret_cast<const T*>(xp);
  auto better = [](T v, T best) { return kMax ? v > best : v < best; };
  auto is_nan = [](T v) {
    if constexpr (kIsFloat<T>) {
      return v != v;
    } else {
      return false;
    }
  };
  int64_t found = 0;
  if (n < 4 * kArgLanes) {
    T best = x[0];
    for (int64_t i = 1; i < n && !is_nan(best); ++i) {
      if (is_nan(x[i]) || better(x[i], best)) {
        best = x[i];
        found = i;
      }
    }
  } else {
    T lane[kArgLanes];
    unsigned char nan[kArgLanes];
    for (int64_t j = 0; j < kArgLanes; ++j) {
      lane[j] = x[j];
      nan[j] = is_nan(x[j]);
    }
    int64_t i = kArgLanes;
    for (; i + kArgLanes <= n; i += kArgLanes) {
      for (int64_t j = 0; j < kArgLanes; ++j) {
        const T v = x[i + j];
        lane[j] = better(v, lane[j]) ? v : lane[j];
        nan[j] |= is_nan(v);
      }
    }
    for (; i < n; ++i) {
      lane[0] = better(x[i], lane[0]) ? x[i] : lane[0];
      nan[0] |= is_nan(x[i]);
    }
    bool any_nan = false;
    T m = lane[0];
    for (int64_t j = 0; j < kArgLanes; ++j) {
      any_nan = any_nan || nan[j];
      m = better(lane[j], m) ? lane[j] : m;
    }
    // Without a NaN, m is an element (each lane holds one) and is found.
    while (any_nan ? !is_nan(x[found]) : !(x[found] == m)) {
      ++found;
    }
  }
  *static_cast<T*>(value) = x[found];
  *index = found;
}

// Which dtypes a kernel has loops for (the declarations' dtype rule):
// every dtype, floating only, or integer and bool only (bitwise ops).
enum class Loops { kAll, kFloating, kIntegral };

template <Loops kLoops, typename T>
constexpr bool has_loop() {
  if constexpr (kLoops == Loops::kFloating) {
    return kIsFloat<T>;
  } else if constexpr (kLoops == Loops::kIntegral) {
    return !kIsFloat<T>;
  } else {
    return true;
  }
}

template <typename Op, Loops kLoops>
void fill_binary(KernelTable& t, BinaryOp op) {
#define DITTO_FILL(type, name, code)                                      \
  if constexpr (has_loop<kLoops, type>()) {                               \
    t.binary[int(op)][dtype_index(Dtype::name)] = &binary_loop<Op, type>; \
  }
  DITTO_FORALL_DTYPES(DITTO_FILL)
#undef DITTO_FILL
}

template <typename Op, Loops kLoops>
void fill_unary(KernelTable& t, UnaryOp op) {
#define DITTO_FILL(type, name, code)                                    \
  if constexpr (has_loop<kLoops, type>()) {                             \
    t.unary[int(op)][dtype_index(Dtype::name)] = &unary_loop<Op, type>; \
  }
  DITTO_FORALL_DTYPES(DITTO_FILL)
#undef DITTO_FILL
}

template <typename To>
void fill_cast_from(KernelTable& t) {
#define DITTO_FILL(type, name, code)                            \
  t.cast[dtype_index(dtype_of<To>)][dtype_index(Dtype::name)] = \
      &cast_loop<To, type>;
  DITTO_FORALL_ALL_DTYPES(DITTO_FILL)
#undef DITTO_FILL
}

void normal_blocks_f32(float* d, int64_t nblocks, float mean, float std) {
  for (int64_t b = 0; b < nblocks; ++b) {
    box_muller::normal_block_float(d + 16 * b, mean, std);
  }
}

#if defined(__AVX2__) || defined(__AVX512F__)
// Note [Philox in 64-bit lanes]
// GCC vectorizes the lane-by-lane loop (the #else branch below, which the
// scalar and NEON capabilities keep) only in part: its 32x32->64-bit
// products need 64-bit lanes, the counters are 32-bit, and the shuffles
// between the two (or scalar multiplies) made it 15 ns per block with AVX2
// and 4.3 with AVX-512 (Zen 4). Here each counter word lives in the low half
// of a 64-bit lane, so a product is one vpmuludq (which reads only the low
// halves) and its high word one shift; the high halves of the lanes collect
// garbage that no operation reads back, and only low halves are stored. 16
// blocks per step, in four vectors (AVX2) or two (AVX-512) per word: 2.9 and
// 1.8 ns per block, the same bits (Philox.BlocksPastTwoToThe32... and
// Philox.ParallelFill... compare every capability with the serial
// definition).
constexpr int kPhiloxLanes = DITTO_VECTOR_BYTES / 8;
using PhiloxVec =
    uint64_t __attribute__((vector_size(DITTO_VECTOR_BYTES), __may_alias__));

inline PhiloxVec mul_low32(PhiloxVec a, PhiloxVec b) {
#if defined(__AVX512F__)
  // The zero-masked form: the plain one's undefined pass-through operand
  // trips GCC 12's -Wmaybe-uninitialized. All eight lanes are kept.
  return PhiloxVec(_mm512_maskz_mul_epu32(0xff, __m512i(a), __m512i(b)));
#else
  return PhiloxVec(_mm256_mul_epu32(__m256i(a), __m256i(b)));
#endif
}

void philox_blocks(
    uint32_t key0,
    uint32_t key1,
    uint64_t first_block,
    int64_t nblocks,
    uint32_t* out) {
  constexpr int kVecs = 16 / kPhiloxLanes;
  constexpr int kBatch = kVecs * kPhiloxLanes;
  const PhiloxVec m0 = PhiloxVec{} + 0xD2511F53u;
  const PhiloxVec m1 = PhiloxVec{} + 0xCD9E8D57u;
  PhiloxVec iota = {};
  for (int l = 0; l < kPhiloxLanes; ++l) {
    iota[l] = uint64_t(l);
  }
  for (int64_t b0 = 0; b0 < nblocks; b0 += kBatch) {
    const int m = int(std::min<int64_t>(kBatch, nblocks - b0));
    PhiloxVec c0[kVecs], c1[kVecs], c2[kVecs], c3[kVecs];
    for (int v = 0; v < kVecs; ++v) {
      const PhiloxVec blk =
          iota + (first_block + uint64_t(b0 + v * kPhiloxLanes));
      c0[v] = blk & 0xffffffffu;
      c1[v] = blk >> 32;
      c2[v] = PhiloxVec{};
      c3[v] = PhiloxVec{};
    }
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      const PhiloxVec kv0 = PhiloxVec{} + k0, kv1 = PhiloxVec{} + k1;
      for (int v = 0; v < kVecs; ++v) {
        const PhiloxVec p0 = mul_low32(c0[v], m0);
        const PhiloxVec p1 = mul_low32(c2[v], m1);
        c0[v] = (p1 >> 32) ^ c1[v] ^ kv0;
        c2[v] = (p0 >> 32) ^ c3[v] ^ kv1;
        c1[v] = p1;
        c3[v] = p0;
      }
    }
    // Words 0-1 and 2-3 of each block as one little-endian 64-bit value.
    uint64_t w01[kBatch], w23[kBatch];
    for (int v = 0; v < kVecs; ++v) {
      const PhiloxVec a = (c0[v] & 0xffffffffu) | (c1[v] << 32);
      const PhiloxVec b = (c2[v] & 0xffffffffu) | (c3[v] << 32);
      std::memcpy(w01 + v * kPhiloxLanes, &a, sizeof a);
      std::memcpy(w23 + v * kPhiloxLanes, &b, sizeof b);
    }
    char* o = reinterpret_cast<char*>(out + 4 * b0);
    for (int i = 0; i < m; ++i) {
      std::memcpy(o + 16 * i, &w01[i], 8);
      std::memcpy(o + 16 * i + 8, &w23[i], 8);
    }
  }
}
#else
// Philox4x32-10 on 16 blocks at a time, lane by lane (scalar, NEON).
// Integer arithmetic: the same bits on every ISA.
void philox_blocks(
    uint32_t key0,
    uint32_t key1,
    uint64_t first_block,
    int64_t nblocks,
    uint32_t* out) {
  constexpr int kBatch = 16;
  for (int64_t b0 = 0; b0 < nblocks; b0 += kBatch) {
    const int m = int(std::min<int64_t>(kBatch, nblocks - b0));
    uint32_t c0[kBatch], c1[kBatch], c2[kBatch], c3[kBatch];
    for (int i = 0; i < kBatch; ++i) {
      uint64_t blk = first_block + uint64_t(b0) + uint64_t(i);
      c0[i] = uint32_t(blk);
      c1[i] = uint32_t(blk >> 32);
      c2[i] = 0;
      c3[i] = 0;
    }
    uint32_t k0 = key0, k1 = key1;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      for (int i = 0; i < kBatch; ++i) {
        uint64_t p0 = uint64_t(0xD2511F53u) * c0[i];
        uint64_t p1 = uint64_t(0xCD9E8D57u) * c2[i];
        uint32_t n0 = uint32_t(p1 >> 32) ^ c1[i] ^ k0;
        uint32_t n2 = uint32_t(p0 >> 32) ^ c3[i] ^ k1;
        c1[i] = uint32_t(p1);
        c3[i] = uint32_t(p0);
        c0[i] = n0;
        c2[i] = n2;
      }
    }
    for (int i = 0; i < m; ++i) {
      uint32_t* o = out + 4 * (b0 + i);
      o[0] = c0[i];
      o[1] = c1[i];
      o[2] = c2[i];
      o[3] = c3[i];
    }
  }
}
#endif

} // namespace

void fill_gemm_table(KernelTable& t); // gemm_kernels.cpp
void fill_interp_table(KernelTable& t); // interp_kernels.cpp

void fill_kernel_table(KernelTable& t) {
  fill_gemm_table(t);
  fill_interp_table(t);
  t.philox_blocks = &philox_blocks;
  t.normal_blocks_f32 = &normal_blocks_f32;
  // kResultFloating kernels take floating operands only (the op promotes),
  // kResultIntegral ones integer and bool operands only.
  enum { kResultSame, kResultBool, kResultFloating, kResultIntegral };
#define DITTO_BINARY_KERNEL(Name, name, result, code, f64, divisor) \
  fill_binary<                                                      \
      Name##F,                                                      \
      result == kResultFloating       ? Loops::kFloating            \
          : result == kResultIntegral ? Loops::kIntegral            \
                                      : Loops::kAll>(t, BinaryOp::Name);
#include "ditto/kernels/cpu/binary_ops.inc" // generated
#undef DITTO_BINARY_KERNEL
  // Division is true division: integer operands are promoted first.

  fill_fused<FusedOp::AddScaled>(t);
  fill_fused<FusedOp::Addcmul>(t);
  fill_fused<FusedOp::Addcdiv>(t);

  enum { kUnaryNumeric, kUnaryFloating, kUnaryIntegral };
#define DITTO_UNARY_KERNEL(Name, name, rule, code, f64, bool_error) \
  fill_unary<                                                       \
      Name##F,                                                      \
      rule == kUnaryFloating       ? Loops::kFloating               \
          : rule == kUnaryIntegral ? Loops::kIntegral               \
                                   : Loops::kAll>(t, UnaryOp::Name);
#include "ditto/kernels/cpu/unary_ops.inc" // generated
#undef DITTO_UNARY_KERNEL

#define DITTO_FILL(type, name, code)                           \
  fill_cast_from<type>(t);                                     \
  t.clamp[dtype_index(Dtype::name)] = &clamp_loop<type>;       \
  t.where[dtype_index(Dtype::name)] = &where_loop<type>;       \
  t.sum[dtype_index(Dtype::name)] = &lane_reduce<type, false>; \
  t.prod[dtype_index(Dtype::name)] = &lane_reduce<type, true>; \
  t.max[dtype_index(Dtype::name)] = &arg_reduce<type, true>;   \
  t.min[dtype_index(Dtype::name)] = &arg_reduce<type, false>;
  DITTO_FORALL_DTYPES(DITTO_FILL)
#undef DITTO_FILL
// Storage dtypes: conversions, and where (which only moves elements).
#define DITTO_FILL(type, name, code) \
  fill_cast_from<type>(t);           \
  t.where[dtype_index(Dtype::name)] = &where_loop<type>;
  DITTO_FORALL_STORAGE_DTYPES(DITTO_FILL)
#undef DITTO_FILL
}

} // namespace ditto::kernels::DITTO_KERNEL_NS
