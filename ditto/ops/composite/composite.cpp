// The bodies of the composite ops of ditto/ops/composite/composite.ops.toml
// that are more than one expression (ditto/ops/detail/composite.h). Everything
// here is made of public ops: their gradients, traces and device support carry
// over, and each result is the fixed chain of its parts.

#include "ditto/ops/detail/composite.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "ditto/core/error.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::detail {

namespace {

// The dims of a reduction: all when absent or empty, each wrapped.
IntArg reduce_dims(
    const Tensor& self,
    const OptionalIntArg& dim,
    const char* op) {
  IntArg out;
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      out.push_back(d);
    }
    return out;
  }
  for (int64_t d : *dim) {
    out.push_back(wrap_dim(d, std::max<int64_t>(self.dim(), 1), op));
  }
  return out;
}

} // namespace

// ---- shapes

Tensor tri(const Tensor& self, int64_t diagonal, bool lower, const char* op) {
  DITTO_CHECK(
      self.dim() >= 2,
      ValueError,
      op,
      "input tensor must have at least 2 dimensions, got ",
      self.dim());
  const int64_t n = self.size(-2), m = self.size(-1);
  // col - row against diagonal, as a (n, m) mask broadcast over the batch.
  Tensor d =
      sub(arange(0, m, 1, kInt64).view({1, m}),
          arange(0, n, 1, kInt64).view({n, 1}));
  Tensor keep = lower ? le(d, diagonal) : ge(d, diagonal);
  // zeros of self's dtype (a bool tensor stays bool)
  return where(keep, self, zeros_like(self));
}

Tensor diagonal(
    const Tensor& self,
    int64_t offset,
    int64_t dim1,
    int64_t dim2) {
  check_defined(self, "diagonal");
  const int64_t nd = self.dim();
  const int64_t d1 = wrap_dim(dim1, nd, "diagonal");
  const int64_t d2 = wrap_dim(dim2, nd, "diagonal");
  DITTO_CHECK(
      d1 != d2,
      ValueError,
      "diagonal",
      "diagonal dimensions cannot be identical ",
      dim1,
      ", ",
      dim2);
  const Shape& sizes = self.sizes();
  const Shape& strides = self.strides();
  int64_t start = self.storage_offset();
  int64_t len = 0;
  if (offset >= 0) {
    len = std::max<int64_t>(0, std::min(sizes[d1], sizes[d2] - offset));
    start += len > 0 ? offset * strides[d2] : 0;
  } else {
    len = std::max<int64_t>(0, std::min(sizes[d1] + offset, sizes[d2]));
    start += len > 0 ? -offset * strides[d1] : 0;
  }
  Shape out_sizes, out_strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != d1 && d != d2) {
      out_sizes.push_back(sizes[d]);
      out_strides.push_back(strides[d]);
    }
  }
  out_sizes.push_back(len);
  out_strides.push_back(strides[d1] + strides[d2]);
  return self.as_strided(out_sizes, out_strides, start);
}

Tensor diag(const Tensor& self, int64_t k) {
  check_defined(self, "diag");
  if (self.dim() == 2) {
    return detail::diagonal(self, k, 0, 1).clone();
  }
  DITTO_CHECK(
      self.dim() == 1,
      ValueError,
      "diag",
      "matrix or a vector expected, got a ",
      self.dim(),
      "-d tensor");
  const int64_t n = self.size(0);
  // |k| and the matrix's size, checked: diag(v, 2^63 - 1) must be an error,
  // not an overflow (UBSan, through the binding fuzzer).
  int64_t big = 0, area = 0;
  DITTO_CHECK(
      k != INT64_MIN && !__builtin_add_overflow(n, k >= 0 ? k : -k, &big) &&
          !__builtin_mul_overflow(big, big, &area),
      ValueError,
      "diag",
      "a diagonal of ",
      n,
      " values at offset ",
      k,
      " needs a matrix too large to index");
  // The flat positions of the diagonal in a big x big matrix.
  Tensor pos =
      add(mul(arange(0, n, 1, kInt64), big + 1), k >= 0 ? k : -k * big);
  Tensor flat = zeros({big * big}, self.dtype());
  return flat.index_add(0, pos, self).view({big, big});
}

Tensor trace(const Tensor& self) {
  check_defined(self, "trace");
  DITTO_CHECK(
      self.dim() == 2,
      ValueError,
      "trace",
      "expected a matrix, but got tensor with size ",
      shape_str(self.sizes()));
  return sum(detail::diagonal(self, 0, 0, 1));
}

Tensor roll(const Tensor& self, const IntArg& shifts, const IntArg& dims) {
  check_defined(self, "roll");
  if (dims.empty()) {
    DITTO_CHECK(
        shifts.size() == 1,
        ValueError,
        "roll",
        "shifts and dimensions must align. shifts: ",
        shifts.size(),
        ", dims: 0");
    return detail::roll(self.flatten(), shifts, IntArg{0}).view(self.sizes());
  }
  DITTO_CHECK(
      shifts.size() == dims.size(),
      ValueError,
      "roll",
      "shifts and dimensions must align. shifts: ",
      shifts.size(),
      ", dims: ",
      dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], self.dim(), "roll");
    const int64_t n = self.size(d);
    if (n == 0) {
      continue;
    }
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) {
      continue;
    }
    out = cat({out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out.defined() && out.is_same(self) ? self.clone() : out;
}

std::vector<Tensor> split_with_sizes(
    const Tensor& self,
    const IntArg& sizes,
    int64_t dim) {
  check_defined(self, "split_with_sizes");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    DITTO_CHECK(
        s >= 0,
        ValueError,
        "split_with_sizes",
        "split_sizes must be non-negative, got ",
        s);
    // A sum past INT64_MAX cannot equal the size: stop before it overflows.
    if (__builtin_add_overflow(total, s, &total)) {
      total = -1;
      break;
    }
  }
  DITTO_CHECK(
      total == self.size(d),
      ValueError,
      "split_with_sizes",
      "split_sizes must sum exactly to ",
      self.size(d),
      " (input tensor's size at dimension ",
      dim,
      "), but got split_sizes=",
      shape_str(sizes));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(self.narrow(d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& self, int64_t size, int64_t dim) {
  check_defined(self, "split");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "split");
  const int64_t n = self.size(d);
  DITTO_CHECK(
      size > 0 || (size == 0 && n == 0),
      ValueError,
      "split",
      "split_size can only be 0 if dimension size is 0, but got ",
      size);
  IntArg sizes;
  for (int64_t start = 0; start < n; start += size) {
    sizes.push_back(std::min(size, n - start));
  }
  if (sizes.empty()) {
    sizes.push_back(0);
  }
  return detail::split_with_sizes(self, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  check_defined(self, "chunk");
  DITTO_CHECK(
      chunks > 0,
      ValueError,
      "chunk",
      "chunk expects `chunks` to be greater than 0, got: ",
      chunks);
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "chunk");
  const int64_t n = self.size(d);
  // ceil(n / chunks) without forming n + chunks - 1 (chunks may be 2^63 - 1).
  const int64_t size = n / chunks + (n % chunks != 0 ? 1 : 0);
  return detail::split(self, std::max<int64_t>(size, n == 0 ? 0 : 1), d);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  check_defined(self, "unbind");
  const int64_t d = wrap_dim(dim, self.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.size(d); ++i) {
    out.push_back(self.select(d, i));
  }
  return out;
}

Tensor unflatten(const Tensor& self, int64_t dim, const IntArg& sizes) {
  check_defined(self, "unflatten");
  const int64_t d = wrap_dim(dim, self.dim(), "unflatten");
  DITTO_CHECK(
      !sizes.empty(), ValueError, "unflatten", "sizes must be non-empty");
  Shape shape(self.sizes().begin(), self.sizes().begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), self.sizes().begin() + d + 1, self.sizes().end());
  return self.view(shape);
}

Tensor movedim(const Tensor& self, const IntArg& source, const IntArg& dest) {
  check_defined(self, "movedim");
  DITTO_CHECK(
      source.size() == dest.size(),
      ValueError,
      "movedim",
      "Invalid source or destination dims: source (",
      shape_str(source),
      " dims) should contain the same number of dims as destination (",
      shape_str(dest),
      " dims)");
  const int64_t nd = self.dim();
  std::vector<int64_t> order(size_t(nd), -1);
  std::vector<bool> used(size_t(nd), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], nd, "movedim");
    const int64_t t = wrap_dim(dest[i], nd, "movedim");
    DITTO_CHECK(
        order[size_t(t)] == -1 && !used[size_t(s)],
        ValueError,
        "movedim",
        "repeated dim in source or destination");
    order[size_t(t)] = s;
    used[size_t(s)] = true;
  }
  int64_t next = 0;
  for (auto& o : order) {
    if (o == -1) {
      while (used[size_t(next)]) {
        ++next;
      }
      o = next++;
    }
  }
  return self.permute(IntList(order.begin(), order.end()));
}

Tensor repeat(const Tensor& self, const IntArg& repeats) {
  check_defined(self, "repeat");
  const int64_t r = static_cast<int64_t>(repeats.size());
  DITTO_CHECK(
      r >= self.dim(),
      ValueError,
      "repeat",
      "Number of dimensions of repeat dims can not be smaller than number of "
      "dimensions of tensor");
  Shape padded(size_t(r - self.dim()), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  // (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), then merged.
  Shape inter, expanded, out;
  for (int64_t i = 0; i < r; ++i) {
    DITTO_CHECK(
        repeats[size_t(i)] >= 0,
        ValueError,
        "repeat",
        "Trying to create tensor with negative dimension ",
        repeats[size_t(i)]);
    inter.push_back(1);
    inter.push_back(padded[size_t(i)]);
    expanded.push_back(repeats[size_t(i)]);
    expanded.push_back(padded[size_t(i)]);
    out.push_back(checked_mul(
        repeats[size_t(i)], padded[size_t(i)], "repeat", "the result's size"));
  }
  return self.reshape(inter).expand(expanded).reshape(out);
}

Tensor tile(const Tensor& self, const IntArg& dims) {
  check_defined(self, "tile");
  IntArg reps = dims;
  while (static_cast<int64_t>(reps.size()) < self.dim()) {
    reps.insert(reps.begin(), 1);
  }
  return detail::repeat(self, reps);
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  DITTO_CHECK(
      !tensors.empty(), ValueError, "hstack", "expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    check_defined(t, "hstack");
    parts.push_back(t.dim() == 0 ? t.view({1}) : t);
  }
  return cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  DITTO_CHECK(
      !tensors.empty(), ValueError, "vstack", "expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    check_defined(t, "vstack");
    parts.push_back(t.dim() < 2 ? t.reshape({1, t.numel()}) : t);
  }
  return cat(parts, 0);
}

// ---- products

Tensor outer(const Tensor& self, const Tensor& vec2) {
  check_defined(vec2, "outer");
  DITTO_CHECK(
      self.dim() == 1 && vec2.dim() == 1,
      ValueError,
      "outer",
      "expected 1-D tensors, got ",
      self.dim(),
      "-D and ",
      vec2.dim(),
      "-D");
  return mul(self.view({self.size(0), 1}), vec2.view({1, vec2.size(0)}));
}

Tensor dot(const Tensor& self, const Tensor& other) {
  check_defined(other, "dot");
  DITTO_CHECK(
      self.dim() == 1 && other.dim() == 1,
      ValueError,
      "dot",
      "1D tensors expected, but got ",
      self.dim(),
      "D and ",
      other.dim(),
      "D tensors");
  DITTO_CHECK(
      self.size(0) == other.size(0),
      ValueError,
      "dot",
      "inconsistent tensor size, expected tensor [",
      self.size(0),
      "] and src [",
      other.size(0),
      "] to have the same number of elements, but got ",
      self.size(0),
      " and ",
      other.size(0),
      " elements respectively");
  return matmul(self, other);
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  check_defined(vec, "mv");
  DITTO_CHECK(
      self.dim() == 2 && vec.dim() == 1,
      ValueError,
      "mv",
      "vector + matrix @ vector expected, got ",
      self.dim(),
      ", ",
      vec.dim());
  return matmul(self, vec);
}

Tensor kron(const Tensor& self, const Tensor& other) {
  check_defined(other, "kron");
  const int64_t nd = std::max(self.dim(), other.dim());
  Shape a(size_t(nd - self.dim()), 1), b(size_t(nd - other.dim()), 1);
  a.insert(a.end(), self.sizes().begin(), self.sizes().end());
  b.insert(b.end(), other.sizes().begin(), other.sizes().end());
  Shape av, bv, out;
  for (int64_t i = 0; i < nd; ++i) {
    av.push_back(a[size_t(i)]);
    av.push_back(1);
    bv.push_back(1);
    bv.push_back(b[size_t(i)]);
    out.push_back(a[size_t(i)] * b[size_t(i)]);
  }
  return mul(self.reshape(av), other.reshape(bv)).reshape(out);
}

Tensor tensordot(
    const Tensor& self,
    const Tensor& other,
    const IntArg& dims_self,
    const IntArg& dims_other) {
  check_defined(other, "tensordot");
  DITTO_CHECK(
      dims_self.size() == dims_other.size(),
      ValueError,
      "tensordot",
      "both dimension lists should have same length");
  std::vector<bool> ca(size_t(self.dim()), false),
      cb(size_t(other.dim()), false);
  int64_t k = 1;
  IntList pa, pb;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    const int64_t da = wrap_dim(dims_self[i], self.dim(), "tensordot");
    const int64_t db = wrap_dim(dims_other[i], other.dim(), "tensordot");
    DITTO_CHECK(
        self.size(da) == other.size(db),
        ValueError,
        "tensordot",
        "contracted dimensions need to match, but first has size ",
        self.size(da),
        " in dim ",
        da,
        " and second has size ",
        other.size(db),
        " in dim ",
        db);
    ca[size_t(da)] = cb[size_t(db)] = true;
    k *= self.size(da);
  }
  Shape out;
  IntList free_a, free_b;
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!ca[size_t(d)]) {
      free_a.push_back(d);
      out.push_back(self.size(d));
      m *= self.size(d);
    }
  }
  for (int64_t d = 0; d < other.dim(); ++d) {
    if (!cb[size_t(d)]) {
      free_b.push_back(d);
      out.push_back(other.size(d));
      n *= other.size(d);
    }
  }
  pa = free_a;
  for (int64_t d : dims_self) {
    pa.push_back(wrap_dim(d, self.dim(), "tensordot"));
  }
  for (int64_t d : dims_other) {
    pb.push_back(wrap_dim(d, other.dim(), "tensordot"));
  }
  pb.insert(pb.end(), free_b.begin(), free_b.end());
  Tensor am = self.permute(pa).reshape({m, k});
  Tensor bm = other.permute(pb).reshape({k, n});
  return mm(am, bm).view(out);
}

// ---- reductions

Tensor var(
    const Tensor& self,
    const OptionalIntArg& dim,
    std::optional<double> correction,
    bool keepdim,
    bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  check_defined(self, op);
  DITTO_CHECK(
      self.is_floating_point(),
      TypeError,
      op,
      "std and var only support floating point and complex dtypes");
  const IntArg dims = reduce_dims(self, dim, op);
  int64_t n = 1;
  for (int64_t d : dims) {
    n *= self.dim() == 0 ? 1 : self.size(d);
  }
  const double c = correction.value_or(1.0);
  Tensor centered = sub(self, mean(self, dims, true));
  Tensor ss = sum(mul(centered, centered), dims, keepdim);
  Tensor v = div(ss, std::max(0.0, static_cast<double>(n) - c));
  return take_sqrt ? sqrt(v) : v;
}

std::tuple<Tensor, Tensor> var_mean(
    const Tensor& self,
    const OptionalIntArg& dim,
    std::optional<double> correction,
    bool keepdim,
    bool take_sqrt) {
  Tensor v = detail::var(self, dim, correction, keepdim, take_sqrt);
  return {v, mean(self, reduce_dims(self, dim, "var_mean"), keepdim)};
}

Tensor logsumexp(const Tensor& self, const IntArg& dim, bool keepdim) {
  check_defined(self, "logsumexp");
  Tensor x = self.is_floating_point() ? self : self.to(kFloat32);
  const IntArg dims = reduce_dims(x, dim, "logsumexp");
  if (x.numel() == 0) {
    return log(sum(exp(x), dims, keepdim));
  }
  // The maximum, 0 where it is infinite, keeps exp from overflowing.
  Tensor m = detail::amax(x, dims, true, true).detach();
  m = where(eq(abs(m), std::numeric_limits<double>::infinity()), Scalar(0), m);
  Tensor out = add(log(sum(exp(sub(x, m)), dims, true)), m);
  if (!keepdim) {
    IntArg sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) {
      out = out.squeeze(*it);
    }
  }
  return out;
}

Tensor amax(const Tensor& self, const IntArg& dim, bool keepdim, bool max_) {
  const char* op = max_ ? "amax" : "amin";
  check_defined(self, op);
  IntArg dims = reduce_dims(self, dim, op);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  if (self.dim() == 0) {
    return self.clone();
  }
  Tensor out = self;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    DITTO_CHECK(
        self.size(*it) > 0,
        IndexError,
        op,
        "Expected reduction dim ",
        *it,
        " to have non-zero size.");
    out = (max_ ? max(out, *it, true) : min(out, *it, true)).first;
  }
  if (!keepdim) {
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      out = out.squeeze(*it);
    }
  }
  return out;
}

Tensor nansum(const Tensor& self, const OptionalIntArg& dim, bool keepdim) {
  check_defined(self, "nansum");
  const IntArg dims = reduce_dims(self, dim, "nansum");
  Tensor x =
      self.is_floating_point() ? where(ne(self, self), Scalar(0), self) : self;
  return sum(x, dims, keepdim);
}

Tensor count_nonzero(const Tensor& self, const OptionalIntArg& dim) {
  check_defined(self, "count_nonzero");
  return sum(
      ne(self, Scalar(0)).to(kInt64),
      reduce_dims(self, dim, "count_nonzero"),
      false);
}

Tensor nan_to_num(
    const Tensor& self,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf) {
  check_defined(self, "nan_to_num");
  if (!self.is_floating_point()) {
    return self.clone();
  }
  const bool f64 = self.dtype() == kFloat64;
  const double big = f64 ? std::numeric_limits<double>::max()
                         : std::numeric_limits<float>::max();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor out = where(ne(self, self), Scalar(nan.value_or(0.0)), self);
  out = where(eq(self, inf), Scalar(posinf.value_or(big)), out);
  return where(eq(self, -inf), Scalar(neginf.value_or(-big)), out);
}

// ---- activations

Tensor softplus(
    const Tensor& self,
    const Scalar& beta,
    const Scalar& threshold) {
  // x where x beta > threshold; log1p(exp(x beta)) / beta elsewhere, its
  // argument clamped so that the branch not taken has no inf (and its
  // gradient no NaN).
  Tensor xb = mul(self, beta);
  Tensor soft = div(log1p(exp(clamp(xb, std::nullopt, threshold))), beta);
  return where(gt(xb, threshold), self, soft);
}

Tensor elu(
    const Tensor& self,
    const Scalar& alpha,
    const Scalar& scale,
    const Scalar& input_scale) {
  // scale x for x > 0, scale alpha (e^(x input_scale) - 1) elsewhere
  // (PyTorch's elu kernel), the exponent clamped at 0 for the branch not
  // taken.
  Tensor neg = mul(
      mul(expm1(mul(clamp(self, std::nullopt, Scalar(0)), input_scale)), alpha),
      scale);
  return where(gt(self, Scalar(0)), mul(self, scale), neg);
}

Tensor glu(const Tensor& self, int64_t dim) {
  check_defined(self, "glu");
  DITTO_CHECK(
      self.dim() > 0, ValueError, "glu", "glu does not support scalars");
  const int64_t d = wrap_dim(dim, self.dim(), "glu");
  DITTO_CHECK(
      self.size(d) % 2 == 0,
      ValueError,
      "glu",
      "Halving dimension must be even, but dimension ",
      d,
      " is size ",
      self.size(d));
  const int64_t h = self.size(d) / 2;
  return mul(self.narrow(d, 0, h), sigmoid(self.narrow(d, h, h)));
}

} // namespace ditto::detail
