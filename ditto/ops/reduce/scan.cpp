// Scans along a dim (scan.h): one engine for cumsum, cumprod and
// logcumsumexp, and the running max/min with their indices.
//
// Note [Scans in fixed blocks]
// PyTorch's CPU scan is one serial chain per row: acc = op(acc, x[i]),
// out[i] = acc, in an accumulator type (double for float32 sums and
// products). ditto keeps that chain for rows of up to kScanBlock elements,
// so their bits are PyTorch's. A longer row would leave all but one thread
// idle, so it is cut into blocks of kScanBlock elements (the last one
// shorter): every block's total is folded from the identity (in parallel),
// the totals are folded in order into each block's offset, and each block's
// chain then continues from its offset (in parallel). The first block's
// chain is PyTorch's; later blocks start from the sum of the earlier
// blocks' totals instead of the running chain, which is exact for integers
// and for float32 sums in double almost always, and otherwise differs from
// PyTorch in the last bits of the accumulator. The cut depends on the row's
// length only, so the bits are the same for any thread count. The
// backwards scan reversed rows as PyTorch's do, flip(cumsum(flip(x))): their
// blocks start at the row's end.

#include "ditto/ops/scan.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ditto/kernels/cpu/math.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {
namespace {

namespace math = kernels::scalar::math;

// A tensor as (outer, n, inner) around the scanned dim.
struct RowLayout {
  int64_t outer = 1, n = 1, inner = 1;
};

RowLayout row_layout(const Shape& sizes, int64_t d) {
  RowLayout l;
  for (int64_t i = 0; i < int64_t(sizes.size()); ++i) {
    (i < d ? l.outer : i == d ? l.n : l.inner) *= sizes[size_t(i)];
  }
  return l;
}

// Adjacent rows (inner positions) scanned together by one task.
constexpr int64_t kLanes = 32;

// Runs acc = op(acc, x[i]), out[i] = T(acc) over every row of x (contiguous,
// layout l) from init, in blocks (Note [Scans in fixed blocks]).
template <typename T, typename Acc, class Op>
void scan_rows(const T* x, T* y, const RowLayout& l, Acc init, const Op& op) {
  const int64_t n = l.n, inner = l.inner;
  if (l.outer * n * inner == 0) {
    return;
  }
  const int64_t blocks = (n + kScanBlock - 1) / kScanBlock;
  const int64_t groups_per = (inner + kLanes - 1) / kLanes;
  const int64_t groups = l.outer * groups_per;
  const int64_t block_len = std::min(n, kScanBlock);
  // Lane group g: outer index and first inner position, its width.
  auto group = [&](int64_t g, int64_t& base, int64_t& width) {
    const int64_t o = g / groups_per, j0 = (g % groups_per) * kLanes;
    base = o * n * inner + j0;
    width = std::min(kLanes, inner - j0);
  };
  // Folds block b of group g from acc (width lanes), writing outputs when
  // y_out is set.
  auto run_block =
      [&](int64_t base, int64_t width, int64_t b, Acc* acc, T* y_out) {
        const int64_t i0 = b * kScanBlock, i1 = std::min(n, i0 + kScanBlock);
        const int64_t first = base + i0 * inner; // the block's first
        if (width == 1) {
          // One row: the chain in a register (the same operations).
          Acc a = acc[0];
          const T* xp = x + first;
          if (y_out == nullptr) {
            for (int64_t i = i0; i < i1; ++i, xp += inner) {
              a = op(a, Acc(*xp));
            }
          } else {
            T* yp = y_out + first;
            for (int64_t i = i0; i < i1; ++i, xp += inner, yp += inner) {
              a = op(a, Acc(*xp));
              *yp = T(a);
            }
          }
          acc[0] = a;
          return;
        }
        int64_t at = first;
        for (int64_t i = i0; i < i1; ++i, at += inner) {
          for (int64_t k = 0; k < width; ++k) {
            acc[k] = op(acc[k], Acc(x[at + k]));
          }
          if (y_out != nullptr) {
            for (int64_t k = 0; k < width; ++k) {
              y_out[at + k] = T(acc[k]);
            }
          }
        }
      };
  const int64_t grain =
      std::max<int64_t>(1, 32768 / (block_len * std::min(inner, kLanes)));
  // Offsets of every (group, block), lanes innermost.
  std::vector<Acc> offsets;
  if (blocks > 1) {
    offsets.assign(size_t(groups * blocks * kLanes), init);
    std::vector<Acc> totals(size_t(groups * blocks * kLanes), init);
    parallel_for(0, groups * (blocks - 1), grain, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t g = t / (blocks - 1), b = t % (blocks - 1);
        int64_t base = 0, width = 0;
        group(g, base, width);
        run_block(
            base,
            width,
            b,
            totals.data() + size_t((g * blocks + b) * kLanes),
            nullptr);
      }
    });
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t b = 1; b < blocks; ++b) {
        Acc* off = offsets.data() + size_t((g * blocks + b) * kLanes);
        const Acc* prev = off - kLanes;
        const Acc* tot = totals.data() + size_t((g * blocks + b - 1) * kLanes);
        for (int64_t k = 0; k < kLanes; ++k) {
          off[k] = op(prev[k], tot[k]);
        }
      }
    }
  }
  parallel_for(0, groups * blocks, grain, [&](int64_t t0, int64_t t1) {
    Acc acc[kLanes];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t g = t / blocks, b = t % blocks;
      int64_t base = 0, width = 0;
      group(g, base, width);
      for (int64_t k = 0; k < kLanes; ++k) {
        acc[k] =
            blocks > 1 ? offsets[size_t((g * blocks + b) * kLanes + k)] : init;
      }
      run_block(base, width, b, acc, y);
    }
  });
}

// The scanned dim of a, wrapped (a 0-dim tensor scans its one element).
int64_t scan_dim(const Tensor& a, int64_t dim, const char* op) {
  DITTO_CHECK(a.defined(), ValueError, op, "undefined tensor");
  return wrap_dim(dim, std::max<int64_t>(a.dim(), 1), op);
}

// a converted to dt and contiguous, and the layout of its rows along d.
RowLayout scan_input(const Tensor& a, Dtype dt, int64_t d, Tensor& in) {
  in = a.to(dt).contiguous();
  return a.dim() == 0 ? RowLayout{} : row_layout(a.sizes(), d);
}

// The accumulator of a running sum or product of T: double for floating
// types, wrapping unsigned 64-bit arithmetic for integers (PyTorch's int64
// accumulator, without signed overflow).
template <typename T>
using SumAcc =
    std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// scan(t, d) run from the end of each row: flip(scan(flip(t))), the form
// PyTorch's backwards take (reversed_cumsum, the reversed logcumsumexp).
template <class Scan>
Tensor reversed(const Tensor& t, int64_t d, const Scan& scan) {
  return flip(scan(flip(t, {d}), d), {d});
}

Tensor reversed_cumsum(const Tensor& t, int64_t d) {
  return reversed(
      t, d, [](const Tensor& x, int64_t dim) { return cumsum(x, dim); });
}

enum class Fold { kSum, kProd };

Tensor sum_or_prod(
    const char* op,
    Fold fold,
    const Tensor& a,
    int64_t dim,
    std::optional<Dtype> dtype) {
  if (detail::is_storage(a) && !dtype) {
    // Note [Storage dtypes]: accumulated in float32 (int64 for int8 and
    // int16, whose sums are int64), each output rounded once.
    Tensor r = sum_or_prod(op, fold, detail::upcast(a), dim, std::nullopt);
    return is_floating(a.dtype()) ? r.to(a.dtype()) : r;
  }
  detail::OpScope scope(op, {a});
  const int64_t d = scan_dim(a, dim, op);
  const Dtype out_dt = dtype.has_value()
      ? *dtype
      : (is_floating(a.dtype()) ? a.dtype() : kInt64);
  DITTO_CHECK(
      out_dt != kBool,
      TypeError,
      op,
      "not implemented for the result dtype bool");
  Tensor in;
  const RowLayout l = scan_input(a, out_dt, d, in);
  Tensor out = detail::new_tensor(a.sizes(), out_dt);
  dispatch_dtype(out_dt, op, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using Acc = SumAcc<T>;
      const T* x = in.data_ptr<T>();
      T* y = out.data_ptr<T>();
      if (fold == Fold::kSum) {
        scan_rows<T, Acc>(x, y, l, Acc(0), [](Acc s, Acc v) { return s + v; });
      } else {
        scan_rows<T, Acc>(x, y, l, Acc(1), [](Acc s, Acc v) { return s * v; });
      }
    }
  });
  if (!is_floating(a.dtype()) || !is_floating(out_dt)) {
    return scope.done(out);
  }
  if (fold == Fold::kSum) {
    return scope.done(
        out,
        [d, scalar = a.dim() == 0, in_dt = a.dtype()](
            const autograd::GradList& g) {
          // PyTorch's cumsum_backward: the reversed running sum.
          const Tensor go = g[0].to(in_dt);
          if (scalar) {
            return autograd::GradList{go};
          }
          return autograd::GradList{reversed_cumsum(go, d)};
        });
  }
  return scope.done(
      out,
      [d, sa = scope.save(a), so = scope.save(out)](
          const autograd::GradList& g) {
        const Tensor x = sa.unpack();
        const Tensor go = g[0].to(x.dtype());
        if (x.dim() == 0 || x.size(d) <= 1) {
          return autograd::GradList{go};
        }
        // PyTorch's cumprod_backward: w = out * grad; without a zero in
        // the input, reversed_cumsum(w) / x; with one, each row in three
        // parts around its first zero z1 (and the next, z2): before z1 the
        // same formula on w cut at z1; at z1 the product of what precedes
        // it times sum(grad[j] * x[z1+1..j]) over z1 <= j < z2; after z1
        // nothing.
        const Tensor out_x = so.unpack().to(x.dtype());
        const Tensor w = mul(out_x, go);
        const Tensor is_zero = eq(x, 0);
        if (max(is_zero.to(kInt64)).item<int64_t>() == 0) {
          return autograd::GradList{div(reversed_cumsum(w, d), x)};
        }
        const Tensor zeros_so_far = cumsum(is_zero, d);
        const Tensor before = eq(zeros_so_far, 0);
        const Tensor from_first = eq(zeros_so_far, 1);
        const Tensor first = mul(from_first, is_zero);
        const Tensor between = mul(from_first, eq(is_zero, false));
        const Tensor g_before =
            div(reversed_cumsum(where(before, w, 0.0), d), x);
        const Tensor z1 = argmax(first.to(kInt64), d, true);
        const Tensor prior =
            where(eq(z1, 0), 1.0, gather(out_x, d, clamp(sub(z1, 1), 0, {})));
        const Tensor at_first =
            mul(sum(mul(cumprod(where(between, x, 1.0), d),
                        where(from_first, go, 0.0)),
                    {d},
                    true),
                prior);
        return autograd::GradList{
            where(before, g_before, where(first, at_first, 0.0))};
      });
}

// log(exp(x) + exp(y)) as PyTorch 1.13's CPU logcumsumexp takes it (y the
// running value), with ditto's exp and log1p.
template <typename T>
T log_add_exp(T x, T y) {
  const T lo = std::isnan(y) ? y : std::min(x, y);
  const T hi = std::isnan(y) ? y : std::max(x, y);
  if (lo != hi || std::isfinite(lo)) {
    return math::log1p(math::exp(lo - hi)) + hi;
  }
  return x; // both the same infinity
}

// cummax (greater) or cummin over rows of a along d.
template <bool kMax>
std::pair<Tensor, Tensor> cum_extreme(
    const char* op,
    const Tensor& a,
    int64_t dim) {
  detail::OpScope scope(op, {a});
  const int64_t d = scan_dim(a, dim, op);
  Tensor in;
  const RowLayout l = scan_input(a, a.dtype(), d, in);
  Tensor values = detail::new_tensor(a.sizes(), a.dtype());
  Tensor indices = detail::new_tensor(a.sizes(), kInt64);
  dispatch_dtype(a.dtype(), op, [&]<typename T>() {
    const T* x = in.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* ix = indices.data_ptr<int64_t>();
    const int64_t n = l.n, inner = l.inner;
    const int64_t rows = n == 0 ? 0 : l.outer * inner;
    parallel_for(
        0,
        rows,
        std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t base = (r / inner) * n * inner + r % inner;
            T best = x[base];
            int64_t where_ = 0;
            for (int64_t i = 0; i < n; ++i) {
              const T cur = x[base + i * inner];
              bool take = false;
              if constexpr (std::is_floating_point_v<T>) {
                take = std::isnan(cur) ||
                    (!std::isnan(best) && (kMax ? cur >= best : cur <= best));
              } else {
                take = kMax ? cur >= best : cur <= best;
              }
              if (take) {
                best = cur;
                where_ = i;
              }
              v[base + i * inner] = best;
              ix[base + i * inner] = where_;
            }
          }
        });
  });
  if (!is_floating(a.dtype())) {
    scope.done({values, indices});
    return {values, indices};
  }
  scope.done(
      {values, indices},
      [d, si = scope.save(indices)](const autograd::GradList& g) {
        // PyTorch's cummaxmin_backward: each row's gradient added at its
        // indices in index order (its scatter_add_ along the row), one
        // task per row.
        const Tensor idx = si.unpack().contiguous();
        const Tensor go = g[0].contiguous();
        Tensor gi = zeros(go.sizes(), go.dtype());
        const RowLayout rl =
            go.dim() == 0 ? RowLayout{} : row_layout(go.sizes(), d);
        const int64_t* ip = idx.data_ptr<int64_t>();
        dispatch_dtype(go.dtype(), "cummax backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* gp = go.data_ptr<T>();
            T* out = gi.data_ptr<T>();
            const int64_t n = rl.n, inner = rl.inner;
            parallel_for(
                0,
                rl.outer * inner,
                std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                [&](int64_t r0, int64_t r1) {
                  for (int64_t r = r0; r < r1; ++r) {
                    const int64_t base = (r / inner) * n * inner + r % inner;
                    for (int64_t i = 0; i < n; ++i) {
                      const int64_t at = base + i * inner;
                      out[base + ip[at] * inner] += gp[at];
                    }
                  }
                });
          }
        });
        return autograd::GradList{gi};
      });
  return {values, indices};
}

} // namespace

Tensor cumsum(const Tensor& a, int64_t dim, std::optional<Dtype> dtype) {
  return sum_or_prod("cumsum", Fold::kSum, a, dim, dtype);
}

Tensor cumprod(const Tensor& a, int64_t dim, std::optional<Dtype> dtype) {
  return sum_or_prod("cumprod", Fold::kProd, a, dim, dtype);
}

namespace {

// cumsum_/cumprod_: self's dtype only (torch: "Bad in-place call").
Tensor& scan_inplace(
    Tensor& self,
    const char* name,
    Fold fold,
    int64_t dim,
    std::optional<Dtype> dtype) {
  DITTO_CHECK(self.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      !dtype || *dtype == self.dtype(),
      TypeError,
      name,
      "dtype ",
      dtype_name(*dtype),
      " differs from the tensor's ",
      dtype_name(self.dtype()));
  return detail::inplace_from(self, name, [&](const Tensor& x) {
    return fold == Fold::kSum ? cumsum(x, dim, x.dtype())
                              : cumprod(x, dim, x.dtype());
  });
}

} // namespace

Tensor& Tensor::cumsum_(int64_t dim, std::optional<Dtype> dtype) {
  return scan_inplace(*this, "cumsum_", Fold::kSum, dim, dtype);
}

Tensor& Tensor::cumprod_(int64_t dim, std::optional<Dtype> dtype) {
  return scan_inplace(*this, "cumprod_", Fold::kProd, dim, dtype);
}

Tensor logcumsumexp(const Tensor& a, int64_t dim) {
  const char* op = "logcumsumexp";
  detail::OpScope scope(op, {a});
  const int64_t d = scan_dim(a, dim, op);
  DITTO_CHECK(
      is_floating(a.dtype()),
      TypeError,
      op,
      "not implemented for ",
      dtype_name(a.dtype()),
      " tensors (floating dtypes only)");
  Tensor in;
  const RowLayout l = scan_input(a, a.dtype(), d, in);
  Tensor out = detail::new_tensor(a.sizes(), a.dtype());
  dispatch_dtype(a.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      scan_rows<T, T>(
          in.data_ptr<T>(),
          out.data_ptr<T>(),
          l,
          -std::numeric_limits<T>::infinity(),
          [](T acc, T v) { return log_add_exp(v, acc); });
    }
  });
  return scope.done(
      out,
      [d, sa = scope.save(a), so = scope.save(out)](
          const autograd::GradList& g) {
        const Tensor x = sa.unpack(), y = so.unpack(), go = g[0];
        if (x.dim() == 0) {
          return autograd::GradList{go};
        }
        // PyTorch's logcumsumexp_backward: the positive and negative parts
        // of the gradient each through a reversed logcumsumexp in log
        // space.
        const double lowest = x.dtype() == kFloat32
            ? double(std::numeric_limits<float>::lowest())
            : std::numeric_limits<double>::lowest();
        const Tensor log_abs = log(abs(go));
        auto part = [&](const Tensor& take) {
          return exp(
              add(reversed(
                      sub(where(take, log_abs, lowest), y),
                      d,
                      [](const Tensor& t, int64_t dim) {
                        return logcumsumexp(t, dim);
                      }),
                  x));
        };
        return autograd::GradList{sub(part(gt(go, 0.0)), part(lt(go, 0.0)))};
      });
}

std::pair<Tensor, Tensor> cummax(const Tensor& a, int64_t dim) {
  return cum_extreme<true>("cummax", a, dim);
}

std::pair<Tensor, Tensor> cummin(const Tensor& a, int64_t dim) {
  return cum_extreme<false>("cummin", a, dim);
}

} // namespace ditto
