#include "ditto/ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/detail/index_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto {
namespace {

using kernels::kReduceGrain;
using kernels::kReduceGroup;

// Views larger than this are not copied into rows: each chunk is gathered
// when it is reduced (a sum over a 2^30-element expanded view must not
// allocate 4 GiB). The arithmetic, and so the bits, are the same.
constexpr int64_t kCopyLimitBytes = int64_t(64) << 20;

// A reduction laid out as rows [outer, inner] of the input permuted so the
// reduced dims come last: each output element reduces one row of `inner`
// elements. `rows` is that layout made contiguous, or, for a large view
// that is not, undefined: chunk() then gathers what it needs.
struct Plan {
  Tensor view; // the permuted input
  Tensor rows;
  int64_t outer = 1;
  int64_t inner = 1;
  Shape out_shape;

  // The n elements of row r starting at element b, contiguous: a pointer
  // into rows, or into scratch (this thread's, at least n elements) after
  // gathering them from the view in row-major order.
  const char* chunk(int64_t r, int64_t b, int64_t n) const {
    const int64_t es = int64_t(view.element_size());
    if (rows.defined()) {
      return static_cast<const char*>(rows.raw_data()) + (r * inner + b) * es;
    }
    thread_local std::vector<char> scratch;
    scratch.resize(size_t(n * es));
    const int64_t nd = view.dim();
    const Shape& sizes = view.sizes();
    const Shape& strides = view.strides();
    // The multi-index of the first element, then an odometer.
    std::vector<int64_t> idx(size_t(nd), 0);
    int64_t rem = r * inner + b;
    int64_t off = 0;
    for (int64_t d = nd - 1; d >= 0; --d) {
      idx[size_t(d)] = rem % sizes[size_t(d)];
      rem /= sizes[size_t(d)];
      off += idx[size_t(d)] * strides[size_t(d)];
    }
    const char* base = static_cast<const char*>(view.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(scratch.data() + i * es, base + off * es, size_t(es));
      for (int64_t d = nd - 1; d >= 0; --d) {
        off += strides[size_t(d)];
        if (++idx[size_t(d)] < sizes[size_t(d)]) {
          break;
        }
        off -= sizes[size_t(d)] * strides[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
    return scratch.data();
  }
};

Plan make_plan(
    const Tensor& a,
    const IntList& dims_in,
    bool keepdim,
    const char* op) {
  DITTO_CHECK(a.defined(), ValueError, op, "undefined tensor");
  int64_t nd = a.dim();
  std::vector<bool> reduced(size_t(std::max<int64_t>(nd, 1)), dims_in.empty());
  for (int64_t d : dims_in) {
    int64_t w = wrap_dim(d, nd, op);
    DITTO_CHECK(
        !reduced[w] || dims_in.empty(),
        ValueError,
        op,
        "dim ",
        w,
        " appears multiple times in the list of dims");
    reduced[w] = true;
  }
  IntList perm;
  Plan p;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) {
      perm.push_back(d);
      p.outer *= a.sizes()[d];
      p.out_shape.push_back(a.sizes()[d]);
    } else if (keepdim) {
      p.out_shape.push_back(1);
    }
  }
  if (keepdim) {
    // Keep the dims in place: sizes of kept dims, 1 for reduced ones.
    p.out_shape.clear();
    for (int64_t d = 0; d < nd; ++d) {
      p.out_shape.push_back(reduced[d] ? 1 : a.sizes()[d]);
    }
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) {
      perm.push_back(d);
      p.inner *= a.sizes()[d];
    }
  }
  p.view = nd > 0 ? a.permute(perm) : a;
  return p;
}

// The CPU's plan of a slot's rows: view's rows made contiguous unless the
// view is large and not contiguous.
Plan cpu_plan(const Tensor& view, int64_t rows, int64_t inner, const char* op) {
  Plan p;
  p.view = view;
  p.outer = rows;
  p.inner = inner;
  const bool large =
      checked_mul(
          view.numel(), int64_t(view.element_size()), op, "the input's bytes") >
      kCopyLimitBytes;
  if (view.is_contiguous() || !large) {
    p.rows = view.contiguous();
  }
  return p;
}

// Combines per-chunk partials with a fixed pairwise tree.
template <typename Acc, typename F>
Acc tree_combine(std::vector<Acc>& p, F combine) {
  size_t n = p.size();
  for (size_t s = 1; s < n; s *= 2) {
    for (size_t i = 0; i + s < n; i += 2 * s) {
      p[i] = combine(p[i], p[i + s]);
    }
  }
  return p[0];
}

// Reduces each row with `loop` over fixed chunks of kReduceGrain elements,
// the chunk partials combined by tree_combine. Rows run in parallel when
// there are several; a single long row runs its chunks in parallel. Either
// way the arithmetic is the same. See Note [Fixed chunks]. The loop gets runs
// of up to kReduceGroup chunks (Note [Interleaved chunks]), fewer when that
// leaves threads idle: a chunk's partial is the same either way.
template <typename Acc, typename F>
void reduce_rows(
    const Plan& p,
    kernels::ReduceLoop loop,
    Acc identity,
    F combine,
    Acc* out) {
  const int64_t chunks = (p.inner + kReduceGrain - 1) / kReduceGrain;
  auto row = [&](int64_t r, bool parallel) {
    if (p.inner == 0) {
      out[r] = identity;
      return;
    }
    std::vector<Acc> partial(size_t(chunks), identity);
    // Chunks [c0, c1) of row r.
    auto run = [&](int64_t c0, int64_t c1) {
      int64_t b = c0 * kReduceGrain;
      int64_t n = std::min(c1 * kReduceGrain, p.inner) - b;
      loop(p.chunk(r, b, n), n, &partial[size_t(c0)]);
    };
    if (parallel) {
      const int64_t per_thread = chunks / std::max(1, get_num_threads());
      parallel_for(
          0, chunks, std::clamp<int64_t>(per_thread, 1, kReduceGroup), run);
    } else {
      for (int64_t c = 0; c < chunks; c += kReduceGroup) {
        run(c, std::min(c + kReduceGroup, chunks));
      }
    }
    out[r] = tree_combine(partial, combine);
  };
  if (p.outer == 1) {
    row(0, true);
    return;
  }
  int64_t rows_per_task =
      std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(p.inner, 1));
  parallel_for(0, p.outer, rows_per_task, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      row(r, false);
    }
  });
}

// g (the gradient of a reduction over dims) with the reduced dims back as
// size 1, so that it broadcasts against the input's shape.
Tensor unreduce(
    const Tensor& g,
    const Shape& in,
    const IntList& dims,
    bool keepdim) {
  const int64_t nd = int64_t(in.size());
  if (keepdim || nd == 0) {
    return g.reshape(keepdim ? g.sizes() : Shape(size_t(nd), 1));
  }
  std::vector<bool> reduced(size_t(nd), dims.empty());
  for (int64_t d : dims) {
    reduced[size_t(wrap_dim(d, nd, "sum"))] = true;
  }
  Shape shape;
  int64_t k = 0;
  for (int64_t d = 0; d < nd; ++d) {
    shape.push_back(reduced[size_t(d)] ? 1 : g.sizes()[size_t(k++)]);
  }
  return g.reshape(shape);
}

IntList all_dims(int64_t nd) {
  IntList d(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) {
    d[size_t(i)] = i;
  }
  return d;
}

// The product over dims, keeping them (prod takes one dim at a time).
Tensor prod_over(Tensor x, const IntList& dims) {
  for (int64_t d : dims) {
    x = prod(x, d, true);
  }
  return x;
}

Tensor sum_impl(
    const Tensor& a,
    const IntList& dims,
    bool keepdim,
    const char* name,
    bool is_mean,
    bool is_prod) {
  if (a.defined() && !has_kernels(a.dtype()) &&
      (is_floating(a.dtype()) || !is_mean)) {
    // Note [Storage dtypes]: float16 and bfloat16 sum in float32 and round
    // the result once (PyTorch's CPU accumulates them in float32); int8 and
    // int16 sum to int64.
    Tensor r = sum_impl(
        a.to(compute_dtype(a.dtype())), dims, keepdim, name, is_mean, is_prod);
    return is_floating(a.dtype()) ? r.to(a.dtype()) : r;
  }
  detail::OpScope scope(name, {a});
  Plan p = make_plan(a, dims, keepdim, name);
  Dtype in = a.dtype();
  if (is_mean) {
    DITTO_CHECK(
        is_floating(in),
        TypeError,
        name,
        "could not infer output dtype. Input dtype must be floating point, "
        "got: ",
        in);
  }
  Dtype acc = is_floating(in) ? in : kInt64;
  Tensor out = detail::new_tensor(p.out_shape, acc, a.device());
  using kernels::ReduceKind;
  detail::device_slots(out, name).reduce(
      is_prod       ? ReduceKind::Prod
          : is_mean ? ReduceKind::Mean
                    : ReduceKind::Sum,
      out,
      p.view,
      p.outer,
      p.inner,
      name);
  return scope.done(
      out,
      [in = a.sizes(),
       dims,
       keepdim,
       is_mean,
       is_prod,
       n = p.inner,
       sa = is_prod ? scope.save(a) : autograd::SavedTensor(),
       sy = is_prod ? scope.save(out)
                    : autograd::SavedTensor()](const autograd::GradList& g) {
        Tensor gk = unreduce(g[0], in, dims, keepdim);
        if (is_mean) {
          return autograd::GradList{div(gk.expand(in), double(n))};
        }
        if (!is_prod) {
          return autograd::GradList{gk.expand(in)};
        }
        // d prod / d x_i = product of the others: out / x_i where x_i != 0;
        // at a row's only zero, the product of the rest; else 0 (PyTorch).
        Tensor x = sa.unpack();
        Tensor y = unreduce(sy.unpack(), in, dims, keepdim);
        Tensor zero = eq(x, 0.0);
        IntList rd = dims.empty() ? all_dims(int64_t(in.size())) : dims;
        Tensor zeros_per_row = sum(zero, rd, true);
        Tensor rest = prod_over(where(zero, 1.0, x), rd);
        Tensor at_zero = where(eq(zeros_per_row, 1), mul(gk, rest), 0.0);
        return autograd::GradList{where(zero, at_zero, div(mul(gk, y), x))};
      });
}

struct ArgResult {
  Tensor values;
  Tensor indices;
};

// Max or min of each row with the index of its first occurrence. Chunk
// results are combined left to right so the first index wins ties and the
// first NaN wins overall.
ArgResult arg_impl(
    const Tensor& a,
    std::optional<int64_t> dim,
    bool keepdim,
    bool is_max,
    const char* name) {
  detail::OpScope scope(name);
  DITTO_CHECK(a.defined(), ValueError, name, "undefined tensor");
  IntList dims;
  if (dim) {
    dims.push_back(*dim);
  }
  Plan p = make_plan(a, dims, keepdim && dim.has_value(), name);
  if (dim) {
    int64_t d = wrap_dim(*dim, a.dim(), name);
    DITTO_CHECK(
        a.dim() == 0 || a.sizes()[d] != 0,
        IndexError,
        name,
        "expected reduction dim ",
        d,
        " to have non-zero size");
  } else {
    DITTO_CHECK(
        a.numel() > 0,
        IndexError,
        name,
        "expected a non-empty tensor; specify the reduction dim with the "
        "'dim' argument");
  }
  if (!has_kernels(a.dtype())) { // Note [Storage dtypes]: exact
    ArgResult r =
        arg_impl(a.to(compute_dtype(a.dtype())), dim, keepdim, is_max, name);
    return {r.values.to(a.dtype()), r.indices};
  }
  Dtype d = a.dtype();
  Tensor values = detail::new_tensor(p.out_shape, d, a.device());
  Tensor indices = detail::new_tensor(p.out_shape, kInt64, a.device());
  detail::device_slots(values, name)
      .arg_reduce(values, indices, p.view, p.outer, p.inner, is_max, name);
  return {values, indices};
}

} // namespace

namespace {

// torch's dtype= of a reduction: the input converted first (the trace
// shows the conversion, then the reduction); no copy without a dtype.
Tensor converted(
    const Tensor& a,
    std::optional<Dtype> dtype,
    const char* name) {
  DITTO_CHECK(a.defined(), ValueError, name, "undefined tensor");
  return dtype && *dtype != a.dtype() ? a.to(*dtype) : a;
}

} // namespace

Tensor sum(const Tensor& a, std::optional<Dtype> dtype) {
  return sum_impl(converted(a, dtype, "sum"), {}, false, "sum", false, false);
}
Tensor sum(
    const Tensor& a,
    const OptionalIntArg& dims,
    bool keepdim,
    std::optional<Dtype> dtype) {
  return sum_impl(
      converted(a, dtype, "sum"),
      dims.value_or({}),
      keepdim,
      "sum",
      false,
      false);
}
Tensor sum_to_size(const Tensor& a, const IntArg& shape) {
  DITTO_CHECK(a.defined(), ValueError, "sum_to_size", "undefined tensor");
  if (a.sizes() == shape) {
    return a;
  }
  DITTO_CHECK(
      expands_to(shape, a.sizes()),
      ValueError,
      "sum_to_size",
      "size ",
      shape_str(shape),
      " is not expandable to size ",
      shape_str(a.sizes()));
  // Composite: the sum and the view record the gradient.
  detail::OpScope scope("sum_to_size", {a}, detail::OpScope::kComposite);
  const int64_t lead = a.dim() - int64_t(shape.size());
  IntList dims;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d < lead || (shape[size_t(d - lead)] == 1 && a.sizes()[d] != 1)) {
      dims.push_back(d);
    }
  }
  Tensor r = dims.empty() ? a : sum(a, dims, true);
  return scope.done(lead > 0 || r.sizes() != shape ? r.view(shape) : r);
}

Tensor mean(const Tensor& a, std::optional<Dtype> dtype) {
  return sum_impl(converted(a, dtype, "mean"), {}, false, "mean", true, false);
}
Tensor mean(
    const Tensor& a,
    const OptionalIntArg& dims,
    bool keepdim,
    std::optional<Dtype> dtype) {
  return sum_impl(
      converted(a, dtype, "mean"),
      dims.value_or({}),
      keepdim,
      "mean",
      true,
      false);
}
Tensor prod(const Tensor& a, std::optional<Dtype> dtype) {
  return sum_impl(converted(a, dtype, "prod"), {}, false, "prod", false, true);
}
Tensor prod(
    const Tensor& a,
    int64_t dim,
    bool keepdim,
    std::optional<Dtype> dtype) {
  return sum_impl(
      converted(a, dtype, "prod"), {dim}, keepdim, "prod", false, true);
}

namespace {

// max()/min() over everything: as PyTorch 1.13, the gradient is shared
// evenly by every element equal to the result (every NaN if it is NaN).
Tensor extremum_all(const Tensor& a, bool is_max) {
  const char* name = is_max ? "max" : "min";
  detail::OpScope scope(name, {a});
  Tensor v = arg_impl(a, std::nullopt, false, is_max, name).values;
  return scope.done(
      v, [sa = scope.save(a), sv = scope.save(v)](const autograd::GradList& g) {
        Tensor x = sa.unpack();
        Tensor value = sv.unpack();
        Tensor mask = value.item<double>() != value.item<double>()
            ? ne(x, x)
            : eq(x, value);
        Tensor share = div(g[0], sum(mask));
        return autograd::GradList{where(mask, share, 0.0)};
      });
}

// max(dim)/min(dim): the gradient goes to the index each row reported.
std::pair<Tensor, Tensor> extremum_dim(
    const Tensor& a,
    int64_t dim,
    bool keepdim,
    bool is_max) {
  const char* name = is_max ? "max" : "min";
  detail::OpScope scope(name, {a});
  auto r = arg_impl(a, dim, keepdim, is_max, name);
  scope.done(
      {r.values, r.indices},
      [in = a.sizes(), dim, keepdim, si = scope.save(r.indices)](
          const autograd::GradList& g) {
        const int64_t nd = int64_t(in.size());
        if (nd == 0) {
          return autograd::GradList{g[0]};
        }
        const int64_t d = wrap_dim(dim, nd, "max");
        Tensor idx = si.unpack();
        Tensor gv = g[0];
        if (!keepdim) {
          idx = idx.unsqueeze(d);
          gv = gv.unsqueeze(d);
        }
        Tensor gi = zeros(in, gv.dtype(), gv.device());
        gi.scatter_(d, idx, gv);
        return autograd::GradList{gi};
      });
  return {r.values, r.indices};
}

} // namespace

Tensor max(const Tensor& a) {
  return extremum_all(a, true);
}
Tensor min(const Tensor& a) {
  return extremum_all(a, false);
}
std::pair<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  return extremum_dim(a, dim, keepdim, true);
}
std::pair<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) {
  return extremum_dim(a, dim, keepdim, false);
}
Tensor max(const Tensor& a, const Tensor& other) {
  return maximum(a, other);
}
Tensor min(const Tensor& a, const Tensor& other) {
  return minimum(a, other);
}
namespace {

// argmax/argmin: without dim, of the flattened tensor; keepdim then keeps
// every dim with size 1 (torch's torch.argmax(x, keepdim=True)).
Tensor arg_index(
    const Tensor& a,
    std::optional<int64_t> dim,
    bool keepdim,
    bool is_max,
    const char* name) {
  detail::OpScope scope(name, {a});
  Tensor r = arg_impl(a, dim, keepdim, is_max, name).indices;
  if (!dim && keepdim) {
    r = r.reshape(Shape(size_t(a.dim()), 1));
  }
  return scope.done(r);
}

} // namespace

Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_index(a, dim, keepdim, true, "argmax");
}
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  return arg_index(a, dim, keepdim, false, "argmin");
}

namespace detail::cpu {

// The CPU's reduce slot (Note [Device kernel slots]): each row's sum,
// mean or product, rows in parallel, the chunk partials by tree_combine.
void reduce(
    kernels::ReduceKind kind,
    const Tensor& out,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    const char* name) {
  const Plan p = cpu_plan(view, rows, inner, name);
  const bool is_prod = kind == kernels::ReduceKind::Prod;
  const bool is_mean = kind == kernels::ReduceKind::Mean;
  const Dtype in = view.dtype();
  const Dtype acc = out.dtype();
  const auto& table = kernels::kernel_table();
  auto loop =
      is_prod ? table.prod[dtype_index(in)] : table.sum[dtype_index(in)];
  dispatch_dtype(acc, name, [&]<typename A>() {
    if constexpr (
        std::is_same_v<A, float> || std::is_same_v<A, double> ||
        std::is_same_v<A, int64_t>) {
      A* o = out.data_ptr<A>();
      if (is_prod) {
        reduce_rows<A>(
            p,
            loop,
            A(1),
            [](A x, A y) {
              if constexpr (std::is_integral_v<A>) {
                return A(uint64_t(x) * uint64_t(y));
              } else {
                return x * y;
              }
            },
            o);
      } else {
        reduce_rows<A>(
            p,
            loop,
            A(0),
            [](A x, A y) {
              if constexpr (std::is_integral_v<A>) {
                return A(uint64_t(x) + uint64_t(y));
              } else {
                return x + y;
              }
            },
            o);
      }
      if (is_mean) {
        if constexpr (std::is_floating_point_v<A>) {
          const A n = A(p.inner);
          for (int64_t i = 0; i < p.outer; ++i) {
            o[i] = o[i] / n;
          }
        }
      }
    }
  });
}

// The CPU's arg_reduce slot: each row's extremum and its first index.
void arg_reduce(
    const Tensor& values,
    const Tensor& indices,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    bool is_max,
    const char* name) {
  const Plan p = cpu_plan(view, rows, inner, name);
  const auto& table = kernels::kernel_table();
  const Dtype d = view.dtype();
  auto loop = is_max ? table.max[dtype_index(d)] : table.min[dtype_index(d)];
  dispatch_dtype(d, name, [&]<typename T>() {
    T* vo = values.data_ptr<T>();
    int64_t* io = indices.data_ptr<int64_t>();
    const int64_t chunks = (p.inner + kReduceGrain - 1) / kReduceGrain;
    auto better = [&](T cand, T best) {
      if constexpr (std::is_floating_point_v<T>) {
        if (best != best) {
          return false;
        }
        return cand != cand || (is_max ? cand > best : cand < best);
      } else {
        return is_max ? cand > best : cand < best;
      }
    };
    auto row = [&](int64_t r, bool parallel) {
      // unique_ptr, not vector: vector<bool> has no addressable elements.
      std::unique_ptr<T[]> cv(new T[size_t(chunks)]);
      std::unique_ptr<int64_t[]> ci(new int64_t[size_t(chunks)]);
      auto chunk = [&](int64_t c) {
        int64_t b = c * kReduceGrain;
        int64_t n = std::min(kReduceGrain, p.inner - b);
        loop(p.chunk(r, b, n), n, &cv[size_t(c)], &ci[size_t(c)]);
        ci[size_t(c)] += b;
      };
      if (parallel) {
        parallel_chunks(chunks, chunk);
      } else {
        for (int64_t c = 0; c < chunks; ++c) {
          chunk(c);
        }
      }
      T best = cv[0];
      int64_t best_i = ci[0];
      for (int64_t c = 1; c < chunks; ++c) {
        if (better(cv[size_t(c)], best)) {
          best = cv[size_t(c)];
          best_i = ci[size_t(c)];
        }
      }
      vo[r] = best;
      io[r] = best_i;
    };
    if (p.outer == 1) {
      row(0, true);
    } else {
      int64_t per_task =
          std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(p.inner, 1));
      parallel_for(0, p.outer, per_task, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          row(r, false);
        }
      });
    }
  });
}

} // namespace detail::cpu

} // namespace ditto
