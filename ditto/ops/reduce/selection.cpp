// Order statistics along a dim (selection.h): one row per task, each row's
// choice made by PyTorch 1.13's algorithm for that op.

#include "ditto/ops/selection.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/shape_ops.h"

namespace ditto {
namespace {

template <typename T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

// x > y with NaN above everything: PyTorch's gt_or_nan.
template <typename T>
bool gt_or_nan(T x, T y) {
  return (is_nan(x) && !is_nan(y)) || x > y;
}

// Moves the element of rank k (gt_or_nan order) of v to position k,
// swapping idx alongside: PyTorch's quickselect (Sedgewick's partition,
// median of three), so that ties land where they land in PyTorch.
template <typename T>
void quick_select(std::vector<T>& v, std::vector<int64_t>& idx, int64_t k) {
  auto swap = [&](int64_t i, int64_t j) {
    std::swap(v[size_t(i)], v[size_t(j)]);
    std::swap(idx[size_t(i)], idx[size_t(j)]);
  };
  auto at = [&](int64_t i) { return v[size_t(i)]; };
  int64_t lo = 0, hi = int64_t(v.size()) - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (gt_or_nan(at(lo), at(hi))) {
        swap(lo, hi);
      }
      return;
    }
    const int64_t mid = (lo + hi) >> 1;
    swap(mid, lo + 1);
    if (gt_or_nan(at(lo + 1), at(hi))) {
      swap(lo + 1, hi);
    }
    if (gt_or_nan(at(lo), at(hi))) {
      swap(lo, hi);
    }
    if (gt_or_nan(at(lo + 1), at(lo))) {
      swap(lo + 1, lo);
    }
    int64_t i = lo + 1, j = hi;
    const T pivot = at(lo);
    while (true) {
      do {
        ++i;
      } while (gt_or_nan(pivot, at(i)));
      do {
        --j;
      } while (gt_or_nan(at(j), pivot));
      if (j < i) {
        break;
      }
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) {
      lo = i;
    }
    if (j >= k) {
      hi = j - 1;
    }
  }
}

// Runs pick<T>(row, len, values, indices) on every row of a along dim,
// each filling k outputs; returns (values, indices) with dim of size k
// (removed when k == 1 and not keepdim), and records their backward: the
// output gradient placed at the indices.
template <class Pick>
std::pair<Tensor, Tensor> by_rows(
    detail::OpScope& scope,
    const Tensor& a,
    int64_t dim,
    int64_t k,
    bool keepdim,
    const Pick& pick) {
  const char* op = scope.name();
  const int64_t d = wrap_dim(dim, std::max<int64_t>(a.dim(), 1), op);
  Tensor moved = a.dim() > 0 ? a.transpose(d, -1).contiguous() : a.reshape({1});
  const int64_t len = moved.size(-1);
  const int64_t rows = len == 0 ? 0 : moved.numel() / len;
  Shape out_moved = moved.sizes();
  out_moved.back() = k;
  Tensor values = detail::new_tensor(out_moved, a.dtype());
  Tensor indices = detail::new_tensor(out_moved, kInt64);
  DITTO_CHECK(
      a.dtype() != kBool, TypeError, op, "not implemented for bool tensors");
  dispatch_dtype(a.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      return;
    } else {
      const T* x = moved.data_ptr<T>();
      T* v = values.data_ptr<T>();
      int64_t* ix = indices.data_ptr<int64_t>();
      parallel_for(
          0,
          rows,
          std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len)),
          [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) {
              pick.template operator()<T>(
                  x + r * len, len, v + r * k, ix + r * k);
            }
          });
    }
  });
  if (a.dim() == 0) {
    values = values.reshape({});
    indices = indices.reshape({});
  } else {
    values = values.transpose(d, -1).contiguous();
    indices = indices.transpose(d, -1).contiguous();
    if (!keepdim && k == 1) {
      values = values.squeeze(d);
      indices = indices.squeeze(d);
    }
  }
  const bool squeezed = a.dim() > 0 && !keepdim && k == 1;
  scope.done(
      {values, indices},
      [d, squeezed, in = a.sizes(), si = scope.save(indices)](
          const autograd::GradList& g) {
        if (in.empty()) {
          return autograd::GradList{g[0]};
        }
        Tensor idx = si.unpack(), go = g[0];
        if (squeezed) {
          idx = idx.unsqueeze(d);
          go = go.unsqueeze(d);
        }
        Tensor gi = zeros(in, go.dtype());
        gi.scatter_(d, idx, go);
        return autograd::GradList{gi};
      });
  return {values, indices};
}

void check_input(const Tensor& a, const char* op) {
  DITTO_CHECK(a.defined(), ValueError, op, "undefined tensor");
}

// The size of dim (1 for a 0-dim tensor).
int64_t dim_size(const Tensor& a, int64_t dim, const char* op) {
  if (a.dim() == 0) {
    wrap_dim(dim, 1, op);
    return 1;
  }
  return a.size(wrap_dim(dim, a.dim(), op));
}

// IndexError naming op unless dim of a is non-empty.
void check_nonempty_dim(const Tensor& a, int64_t dim, const char* op) {
  DITTO_CHECK(
      dim_size(a, dim, op) > 0,
      IndexError,
      op,
      "Expected reduction dim ",
      dim,
      " to have non-zero size");
}

// The median of one row (nan_last: nanmedian's order): the element of rank
// (n - 1) / 2 in (value, index) order, as std::nth_element with PyTorch's
// comparator leaves it (a total order: any algorithm gives it).
struct MedianPick {
  bool ignore_nan;
  template <typename T>
  void operator()(const T* row, int64_t len, T* v, int64_t* ix) const {
    if (!ignore_nan) {
      const T* nan =
          std::find_if(row, row + len, [](T x) { return is_nan(x); });
      if (nan != row + len) {
        *v = *nan;
        *ix = nan - row;
        return;
      }
    }
    const int64_t nans = ignore_nan
        ? std::count_if(row, row + len, [](T x) { return is_nan(x); })
        : 0;
    std::vector<int64_t> order(static_cast<size_t>(len));
    std::iota(order.begin(), order.end(), 0);
    const auto nth = order.begin() + std::max<int64_t>((len - nans - 1) / 2, 0);
    std::nth_element(
        order.begin(), nth, order.end(), [row](int64_t i, int64_t j) {
          const T p = row[i], q = row[j];
          return (is_nan(q) && !is_nan(p)) || p < q || (p == q && i < j) ||
              (is_nan(p) && is_nan(q) && i < j);
        });
    *v = row[*nth];
    *ix = *nth;
  }
};

std::pair<Tensor, Tensor> median_dim(
    const char* op,
    const Tensor& a,
    int64_t dim,
    bool keepdim,
    bool ignore_nan) {
  if (detail::is_storage(a)) { // Note [Storage dtypes]: exact
    auto r = median_dim(op, detail::upcast(a), dim, keepdim, ignore_nan);
    return {r.first.to(a.dtype()), r.second};
  }
  detail::OpScope scope(op, {a});
  check_input(a, op);
  check_nonempty_dim(a, dim, op);
  return by_rows(scope, a, dim, 1, keepdim, MedianPick{ignore_nan});
}

// median or nanmedian of every element: the value of the flattened row's
// pick; the gradient spread evenly over the elements equal to it (NaN
// matching NaN), as PyTorch's evenly_distribute_backward.
Tensor median_all(const char* op, const Tensor& a, bool ignore_nan) {
  if (detail::is_storage(a)) { // Note [Storage dtypes]: exact
    return median_all(op, detail::upcast(a), ignore_nan).to(a.dtype());
  }
  detail::OpScope scope(op, {a});
  check_input(a, op);
  DITTO_CHECK(
      a.numel() > 0, ValueError, op, "median() input tensor cannot be empty");
  const Tensor flat = a.contiguous().reshape({-1});
  DITTO_CHECK(
      a.dtype() != kBool, TypeError, op, "not implemented for bool tensors");
  Tensor out = detail::new_tensor({}, a.dtype());
  dispatch_dtype(a.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      return;
    }
    int64_t where = 0;
    MedianPick{ignore_nan}.operator()<T>(
        flat.data_ptr<T>(), flat.numel(), out.data_ptr<T>(), &where);
  });
  return scope.done(
      out,
      [sf = scope.save(flat), so = scope.save(out), in = a.sizes()](
          const autograd::GradList& g) {
        Tensor x = sf.unpack(), m = so.unpack();
        Tensor gi = zeros({x.numel()}, g[0].dtype());
        dispatch_dtype(x.dtype(), "median backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* xp = x.data_ptr<T>();
            const T mv = *m.data_ptr<T>();
            auto hit = [mv](T v) { return is_nan(mv) ? is_nan(v) : v == mv; };
            int64_t count = 0;
            for (int64_t i = 0; i < x.numel(); ++i) {
              count += hit(xp[i]);
            }
            const T share = g[0].to(x.dtype()).data_ptr<T>()[0] / T(count);
            T* gp = gi.data_ptr<T>();
            for (int64_t i = 0; i < x.numel(); ++i) {
              if (hit(xp[i])) {
                gp[i] = share;
              }
            }
          }
        });
        return autograd::GradList{gi.reshape(in)};
      });
}

} // namespace

std::pair<Tensor, Tensor> kthvalue(
    const Tensor& a,
    int64_t k,
    int64_t dim,
    bool keepdim) {
  const char* op = "kthvalue";
  detail::OpScope scope(op, {a});
  check_input(a, op);
  const int64_t n = dim_size(a, dim, op);
  DITTO_CHECK(
      k >= 1 && k <= n,
      IndexError,
      op,
      "selected number k out of range for dimension ",
      dim,
      ": k = ",
      k,
      ", size ",
      n);
  return by_rows(
      scope,
      a,
      dim,
      1,
      keepdim,
      [k]<typename T>(const T* row, int64_t len, T* v, int64_t* ix) {
        std::vector<T> vals(row, row + len);
        std::vector<int64_t> idx(static_cast<size_t>(len));
        std::iota(idx.begin(), idx.end(), 0);
        quick_select(vals, idx, k - 1);
        *v = vals[size_t(k - 1)];
        *ix = idx[size_t(k - 1)];
      });
}

Tensor median(const Tensor& a) {
  return median_all("median", a, false);
}

std::pair<Tensor, Tensor> median(const Tensor& a, int64_t dim, bool keepdim) {
  return median_dim("median", a, dim, keepdim, false);
}

Tensor nanmedian(const Tensor& a) {
  return median_all("nanmedian", a, true);
}

std::pair<Tensor, Tensor> nanmedian(
    const Tensor& a,
    int64_t dim,
    bool keepdim) {
  return median_dim("nanmedian", a, dim, keepdim, true);
}

std::pair<Tensor, Tensor> mode(const Tensor& a, int64_t dim, bool keepdim) {
  const char* op = "mode";
  detail::OpScope scope(op, {a});
  check_input(a, op);
  check_nonempty_dim(a, dim, op);
  return by_rows(
      scope,
      a,
      dim,
      1,
      keepdim,
      []<typename T>(const T* row, int64_t len, T* v, int64_t* ix) {
        // PyTorch's: std::sort of (value, index) by value alone, then the
        // last element of the first longest run.
        std::vector<std::pair<T, int64_t>> e(static_cast<size_t>(len));
        for (int64_t i = 0; i < len; ++i) {
          e[size_t(i)] = {row[i], i};
        }
        std::sort(e.begin(), e.end(), [](const auto& p, const auto& q) {
          return p.first < q.first;
        });
        int64_t run = 0, best = 0;
        for (int64_t i = 0; i < len; ++i) {
          ++run;
          if (i == len - 1 || e[size_t(i)].first != e[size_t(i + 1)].first) {
            if (run > best) {
              *v = e[size_t(i)].first;
              *ix = e[size_t(i)].second;
              best = run;
            }
            run = 0;
          }
        }
      });
}

std::pair<Tensor, Tensor> topk(
    const Tensor& a,
    int64_t k,
    int64_t dim,
    bool largest,
    bool sorted) {
  const char* op = "topk";
  if (detail::is_storage(a)) { // Note [Storage dtypes]: exact
    auto r = topk(detail::upcast(a), k, dim, largest, sorted);
    return {r.first.to(a.dtype()), r.second};
  }
  detail::OpScope scope(op, {a});
  check_input(a, op);
  const int64_t n = dim_size(a, dim, op);
  DITTO_CHECK(
      k >= 0 && k <= n,
      IndexError,
      op,
      "selected index k out of range: k = ",
      k,
      ", size ",
      n);
  return by_rows(
      scope,
      a,
      dim,
      k,
      true,
      [k, largest, sorted]<typename T>(
          const T* row, int64_t len, T* v, int64_t* ix) {
        if (k == 0) {
          return;
        }
        using Elem = std::pair<T, int64_t>;
        std::vector<Elem> q(static_cast<size_t>(len));
        for (int64_t i = 0; i < len; ++i) {
          q[size_t(i)] = {row[i], i};
        }
        // PyTorch's comparators: NaN counts as the largest value.
        auto cmp = [largest](const Elem& x, const Elem& y) {
          return largest
              ? (is_nan(x.first) && !is_nan(y.first)) || x.first > y.first
              : (!is_nan(x.first) && is_nan(y.first)) || x.first < y.first;
        };
        if (k * 64 <= len) {
          std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
        } else {
          std::nth_element(q.begin(), q.begin() + k - 1, q.end(), cmp);
          if (sorted) {
            std::sort(q.begin(), q.begin() + k - 1, cmp);
          }
        }
        for (int64_t i = 0; i < k; ++i) {
          v[i] = q[size_t(i)].first;
          ix[i] = q[size_t(i)].second;
        }
      });
}

namespace {

enum class Interp { kLinear, kLower, kHigher, kMidpoint, kNearest };

Interp interp_of(std::string_view name, const char* op) {
  if (name == "linear") {
    return Interp::kLinear;
  }
  if (name == "lower") {
    return Interp::kLower;
  }
  if (name == "higher") {
    return Interp::kHigher;
  }
  if (name == "midpoint") {
    return Interp::kMidpoint;
  }
  DITTO_CHECK(
      name == "nearest",
      ValueError,
      op,
      "quantile() interpolation must be one of linear, lower, higher, "
      "midpoint or nearest. Got ",
      name);
  return Interp::kNearest;
}

// PyTorch 1.13's quantile_impl: sort, ranks q * (n - 1) in a's dtype
// (NaN rows: the last rank; nanquantile: q * (count - 1)), rounded by the
// mode, then a lerp between the gathered neighbours. The sort, gather and
// arithmetic are ditto's ops, so the gradient is theirs.
Tensor quantile_impl(
    const char* op,
    const Tensor& a,
    const Tensor& q,
    std::optional<int64_t> dim,
    bool keepdim,
    std::string_view interpolation,
    bool ignore_nan) {
  detail::OpScope scope(op, {a, q}, detail::OpScope::kComposite);
  check_input(a, op);
  DITTO_CHECK(q.defined(), ValueError, op, "undefined q");
  DITTO_CHECK(
      is_floating(a.dtype()),
      TypeError,
      op,
      "quantile() input tensor must be either float or double dtype, got ",
      dtype_name(a.dtype()));
  DITTO_CHECK(
      q.dtype() == a.dtype(),
      TypeError,
      op,
      "quantile() q tensor must be same dtype as the input tensor: ",
      dtype_name(q.dtype()),
      " against ",
      dtype_name(a.dtype()));
  DITTO_CHECK(
      q.dim() <= 1,
      ValueError,
      op,
      "quantile() q must be a scalar or 1D tensor, got ",
      q.dim(),
      " dims");
  DITTO_CHECK(
      a.numel() > 0,
      ValueError,
      op,
      "quantile() input tensor must be non-empty");
  const Interp mode = interp_of(interpolation, op);
  const Tensor qv = q.to(kFloat64).contiguous().reshape({-1});
  for (int64_t i = 0; i < qv.numel(); ++i) {
    const double v = qv.data_ptr<double>()[i];
    DITTO_CHECK(
        v >= 0 && v <= 1,
        ValueError,
        op,
        "quantile() q values must be in the range [0, 1], got ",
        v);
  }
  // The output's shape (q's dim first) and the sorted rows (rows, n).
  Shape out_shape;
  Tensor rows;
  if (!dim.has_value()) {
    rows = a.reshape({1, -1});
    if (keepdim) {
      out_shape.assign(size_t(a.dim()), 1);
    }
  } else {
    const int64_t d = wrap_dim(*dim, std::max<int64_t>(a.dim(), 1), op);
    const Tensor x = a.dim() == 0 ? a.reshape({1}) : a;
    for (int64_t i = 0; i < x.dim(); ++i) {
      if (i != d) {
        out_shape.push_back(x.size(i));
      } else if (keepdim) {
        out_shape.push_back(1);
      }
    }
    rows = x.unsqueeze(-1).transpose(d, -1).contiguous();
    rows = rows.reshape({-1, rows.size(-1)});
  }
  if (q.dim() == 1) {
    out_shape.insert(out_shape.begin(), q.numel());
  }
  const Tensor sorted = sort(rows, -1).first;
  const int64_t n = sorted.size(1), nrows = sorted.size(0), nq = qv.numel();
  DITTO_CHECK(
      n <= (int64_t(1) << 24),
      ValueError,
      op,
      "quantile() input tensor is too large: ",
      n,
      " elements along the reduced dim");
  Tensor below = detail::new_tensor({nrows, nq}, kInt64);
  Tensor above = detail::new_tensor({nrows, nq}, kInt64);
  Tensor weight = detail::new_tensor({nrows, nq}, a.dtype());
  dispatch_dtype(a.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const Tensor sq = q.contiguous().reshape({-1});
      const T* qp = sq.data_ptr<T>();
      const T* sp = sorted.data_ptr<T>();
      int64_t* bp = below.data_ptr<int64_t>();
      int64_t* ap = above.data_ptr<int64_t>();
      T* wp = weight.data_ptr<T>();
      for (int64_t r = 0; r < nrows; ++r) {
        // Sorted rows hold their NaNs last.
        int64_t count = n;
        while (count > 0 && is_nan(sp[r * n + count - 1])) {
          --count;
        }
        for (int64_t k = 0; k < nq; ++k) {
          T rank;
          if (ignore_nan) {
            rank = qp[k] * T(count - 1);
            rank = rank < 0 ? T(0) : rank;
          } else {
            rank = count < n ? T(n - 1) : qp[k] * T(n - 1);
          }
          if (mode == Interp::kLower) {
            rank = std::floor(rank);
          } else if (mode == Interp::kHigher) {
            rank = std::ceil(rank);
          } else if (mode == Interp::kNearest) {
            rank = std::nearbyint(rank);
          }
          const int64_t i = r * nq + k;
          bp[i] = int64_t(rank);
          ap[i] = int64_t(std::ceil(rank));
          wp[i] = mode == Interp::kMidpoint ? T(0.5) : rank - T(bp[i]);
        }
      }
    }
  });
  Tensor out = gather(sorted, 1, below);
  if (mode == Interp::kLinear || mode == Interp::kMidpoint) {
    out = lerp(out, gather(sorted, 1, above), weight);
  }
  if (q.dim() == 0) {
    out = out.reshape(out_shape);
  } else {
    out = out.transpose(0, 1).contiguous().reshape(out_shape);
  }
  return scope.done(out);
}

// A number q as the 0-d tensor of a's dtype PyTorch makes of it, checked
// with its message.
Tensor q_tensor(const Tensor& a, double q, const char* op) {
  DITTO_CHECK(
      q >= 0 && q <= 1,
      ValueError,
      op,
      "quantile() q must be in the range [0, 1] but got ",
      q);
  return full({}, q, a.defined() ? a.dtype() : kFloat32);
}

} // namespace

Tensor quantile(
    const Tensor& a,
    const Tensor& q,
    std::optional<int64_t> dim,
    bool keepdim,
    std::string_view interpolation) {
  return quantile_impl("quantile", a, q, dim, keepdim, interpolation, false);
}

Tensor quantile(
    const Tensor& a,
    double q,
    std::optional<int64_t> dim,
    bool keepdim,
    std::string_view interpolation) {
  return quantile(a, q_tensor(a, q, "quantile"), dim, keepdim, interpolation);
}

Tensor nanquantile(
    const Tensor& a,
    const Tensor& q,
    std::optional<int64_t> dim,
    bool keepdim,
    std::string_view interpolation) {
  return quantile_impl("nanquantile", a, q, dim, keepdim, interpolation, true);
}

Tensor nanquantile(
    const Tensor& a,
    double q,
    std::optional<int64_t> dim,
    bool keepdim,
    std::string_view interpolation) {
  return nanquantile(
      a, q_tensor(a, q, "nanquantile"), dim, keepdim, interpolation);
}

} // namespace ditto
