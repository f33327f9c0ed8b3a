// gather and the scatter family: scatter_, scatter_add_, scatter_reduce_.

#include <limits>
#include <string>
#include <vector>

#include "ditto/determinism/context.h"
#include "ditto/ops/detail/index_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"

namespace ditto {

using detail::Combine;

namespace {

// Shared validation of gather and the scatters: index (and src) of self's
// rank, index no larger than self off dim and no larger than src anywhere.
void check_scatter_shapes(
    const Tensor& self,
    int64_t d,
    const Tensor& index,
    const Tensor* src,
    const char* op) {
  DITTO_CHECK(
      index.dim() == self.dim(),
      ValueError,
      op,
      "index tensor must have the same number of dimensions as self (",
      index.dim(),
      " vs ",
      self.dim(),
      ")");
  if (src) {
    DITTO_CHECK(
        src->dim() == self.dim(),
        ValueError,
        op,
        "src must have the same number of dimensions as self (",
        src->dim(),
        " vs ",
        self.dim(),
        ")");
  }
  for (int64_t k = 0; k < self.dim(); ++k) {
    DITTO_CHECK(
        k == d || index.size(k) <= self.size(k),
        ValueError,
        op,
        "size of index ",
        shape_str(index.sizes()),
        " exceeds self ",
        shape_str(self.sizes()),
        " at dimension ",
        k);
    if (src) {
      DITTO_CHECK(
          index.size(k) <= src->size(k),
          ValueError,
          op,
          "size of index ",
          shape_str(index.sizes()),
          " exceeds src ",
          shape_str(src->sizes()),
          " at dimension ",
          k);
    }
  }
}

// Index columns at and above which scatters run columns in parallel (see
// Note [Scatter by columns]) rather than element updates.
constexpr int64_t kColumnParallel = 16;
// Rows ahead that the column-parallel scatter prefetches.
constexpr int64_t kRowsAhead = 8;

// A scatter resolved to flat arrays: update u = i * cols + c (row-major
// over the index) writes destination w[ip[u] * w0 + woff[c]] from source
// s[i * s0 + soff[c]] (s0 = 0 and soff all 0: one value for all).
struct ScatterGeometry {
  Tensor W0; // self, dim first
  Tensor W; // its contiguous working copy
  Tensor idx; // dim-first index, int64, contiguous
  int64_t n = 0;
  int64_t cols = 0;
  std::vector<int64_t> woff;
};

ScatterGeometry scatter_geometry(
    const Tensor& self,
    int64_t d,
    const Tensor& index,
    const char* name) {
  ScatterGeometry g;
  g.W0 = detail::moved(self, d);
  g.idx = detail::checked_index(detail::moved(index, d), d, g.W0.size(0), name);
  if (detail::shares_storage(g.idx, self)) {
    g.idx = g.idx.clone(); // an index that is a view of self
  }
  g.W = detail::working_copy(g.W0);
  g.n = g.idx.size(0);
  Shape rest(g.idx.sizes().begin() + 1, g.idx.sizes().end());
  g.woff = detail::rest_offsets(g.W, rest);
  g.cols = int64_t(g.woff.size());
  return g;
}

template <Combine C, typename T>
void scatter_core(
    const ScatterGeometry& g,
    const T* s,
    int64_t s0,
    const std::vector<int64_t>& soff,
    bool deterministic) {
  T* w = const_cast<T*>(static_cast<const T*>(g.W.raw_data()));
  const int64_t* ip = g.idx.data_ptr<int64_t>();
  const int64_t w0 = g.W.strides()[0];
  const int64_t cols = g.cols;
  auto dst = [&](int64_t u) { return ip[u] * w0 + g.woff[size_t(u % cols)]; };
  auto from = [&](int64_t u) {
    return s[(u / cols) * s0 + soff[size_t(u % cols)]];
  };
  if (cols >= kColumnParallel) {
    // Note [Scatter by columns]
    // Updates of different columns never meet (a destination element's
    // column is its index column). With a wide index, column chunks run in
    // parallel, each applying its rows in index order: race free, so both
    // variants use it and it is deterministic. Rows go in tiles of about
    // 2^18 index elements, one parallel_for per tile, so the chunks of a
    // tile share its index and source rows in the cache instead of each
    // streaming the whole index from memory.
    const int64_t tile = std::max<int64_t>(1, (int64_t(1) << 18) / cols);
    // At least 16 columns (a 64-byte line of float32) per chunk, so chunks
    // on different threads rarely write the same cache line.
    const int64_t chunk = std::max<int64_t>(16, cols / 4);
    const int64_t* wo = g.woff.data();
    const int64_t* so = soff.data();
    for (int64_t i0 = 0; i0 < g.n; i0 += tile) {
      const int64_t i1 = std::min(g.n, i0 + tile);
      parallel_for(0, cols, chunk, [&](int64_t b, int64_t e) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t* irow = ip + i * cols;
          const T* srow = s + i * s0;
          // Strided rows defeat the hardware prefetcher: fetch ahead.
          if (i + kRowsAhead < i1) {
            detail::prefetch_row(irow + kRowsAhead * cols + b, e - b);
            detail::prefetch_row(srow + kRowsAhead * s0 + so[b], e - b);
          }
          if (i + kRowsAhead / 2 < i1) {
            const int64_t* next = irow + (kRowsAhead / 2) * cols;
            __builtin_prefetch(w + next[b] * w0 + wo[b], 1);
            __builtin_prefetch(w + next[e - 1] * w0 + wo[e - 1], 1);
          }
          for (int64_t c = b; c < e; ++c) {
            T* to = w + irow[c] * w0 + wo[c];
            *to = detail::combine<C>(*to, srow[so[c]]);
          }
        }
      });
    }
    return;
  }
  detail::scatter_updates(
      deterministic,
      g.n * cols,
      g.W.numel(),
      1,
      dst,
      [&](int64_t u, bool atomic) {
        T v = from(u);
        detail::combine_row<C>(w + dst(u), &v, 1, nullptr, nullptr, atomic);
      });
}

// scatter with a tensor src, combine C, deterministic when the mode is on
// (unless C is order independent on the dtype).
template <Combine C>
void scatter_tensor(
    const ScatterGeometry& g,
    const Tensor& src_moved,
    const char* name) {
  std::vector<int64_t> soff = detail::rest_offsets(
      src_moved, Shape(g.idx.sizes().begin() + 1, g.idx.sizes().end()));
  dispatch_dtype(g.W.dtype(), name, [&]<typename T>() {
    if constexpr (C == Combine::kAssign || !std::is_same_v<T, bool>) {
      scatter_core<C, T>(
          g,
          static_cast<const T*>(src_moved.raw_data()),
          src_moved.strides()[0],
          soff,
          detail::use_deterministic<C, T>());
    }
  });
}

// Writes one value at every scattered position (order does not matter).
template <typename T>
void scatter_value(const ScatterGeometry& g, T v) {
  scatter_core<Combine::kAssign, T>(
      g, &v, 0, std::vector<int64_t>(size_t(g.cols), 0), false);
}

void check_scatter_args(
    const Tensor& self,
    const Tensor& index,
    const Tensor* src,
    const char* name) {
  DITTO_CHECK(
      self.defined() && index.defined() && (!src || src->defined()),
      ValueError,
      name,
      "undefined tensor");
  detail::check_index_dtype(index, name);
}

} // namespace

namespace {

// g (index-shaped) as the gradient of a src that may be larger than the
// index: zeros outside the index's extent.
Tensor fit_to(const Tensor& g, const Shape& shape) {
  if (g.sizes() == shape) {
    return g;
  }
  Tensor out = zeros(shape, g.dtype());
  Tensor region = out;
  for (int64_t k = 0; k < g.dim(); ++k) {
    region = region.narrow(k, 0, g.size(k));
  }
  region.copy_(g);
  return out;
}

} // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  const char* name = "gather";
  if (detail::is_storage(self)) { // Note [Storage dtypes]: exact
    return gather(detail::upcast(self), dim, index).to(self.dtype());
  }
  detail::OpScope op(name, {self, index});
  check_scatter_args(self, index, nullptr, name);
  int64_t d = wrap_dim(dim, self.dim(), name);
  check_scatter_shapes(self, d, index, nullptr, name);
  Tensor s = detail::moved(self, d);
  Tensor idx =
      detail::checked_index(detail::moved(index, d), d, s.size(0), name);
  const int64_t n = idx.size(0);
  std::vector<int64_t> soff = detail::rest_offsets(
      s, Shape(idx.sizes().begin() + 1, idx.sizes().end()));
  const int64_t cols = int64_t(soff.size());
  Tensor out = detail::new_tensor(idx.sizes(), self.dtype());
  const int64_t* ip = idx.data_ptr<int64_t>();
  dispatch_dtype(self.dtype(), name, [&]<typename T>() {
    const T* sp = static_cast<const T*>(s.raw_data());
    T* o = out.data_ptr<T>();
    const int64_t s0 = s.strides()[0];
    parallel_for(0, n * cols, 16384, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        o[k] = sp[ip[k] * s0 + soff[size_t(k % cols)]];
      }
    });
  });
  return op.done(
      detail::moved_back(out, self.dim(), d).contiguous(),
      [d, si = op.save(index), in = self.sizes()](const autograd::GradList& g) {
        // The node's policy picks scatter_add_'s variant.
        Tensor gi = zeros(in, g[0].dtype());
        gi.scatter_add_(d, si.unpack(), g[0]);
        return autograd::GradList{gi, Tensor()};
      });
}

namespace {

// scatter_add_ and scatter_ with a tensor src: validate everything, then
// combine src into self at index along dim.
template <Combine C>
Tensor& scatter_src_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    const char* name) {
  if (detail::is_storage(self) && src.defined() &&
      src.dtype() == self.dtype()) {
    // Note [Storage dtypes]: on an upcast copy, rounded back once.
    Tensor w = detail::upcast(self);
    scatter_src_<C>(w, dim, index, detail::upcast(src), name);
    return self.copy_(w);
  }
  detail::OpScope op(name, {self, src, index}, detail::OpScope::kInplace);
  check_scatter_args(self, index, &src, name);
  detail::check_same_dtype(self, src, "src", name, C != Combine::kAssign);
  int64_t d = wrap_dim(dim, self.dim(), name);
  check_scatter_shapes(self, d, index, &src, name);
  detail::check_no_internal_overlap(self, name);
  ScatterGeometry g = scatter_geometry(self, d, index, name);
  scatter_tensor<C>(g, detail::moved(detail::unaliased(src, self), d), name);
  detail::write_back(g.W0, g.W, name);
  return op.done_inplace(
      self,
      [d, si = op.save(index), src_sizes = src.sizes()](
          const autograd::GradList& grads) {
        Tensor idx = si.unpack();
        Tensor gsrc = fit_to(gather(grads[0], d, idx), src_sizes);
        if (C == Combine::kAdd) {
          return autograd::GradList{grads[0], gsrc, Tensor()};
        }
        // Overwritten positions pass no gradient to self's old values.
        Tensor gself = grads[0].clone();
        gself.scatter_(d, idx, 0);
        return autograd::GradList{gself, gsrc, Tensor()};
      });
}

} // namespace

Tensor& Tensor::scatter_add_(
    int64_t dim,
    const Tensor& index,
    const Tensor& src) {
  Tensor& self = *this;
  return scatter_src_<Combine::kAdd>(self, dim, index, src, "scatter_add_");
}

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor& self = *this;
  return scatter_src_<Combine::kAssign>(self, dim, index, src, "scatter_");
}

Tensor& Tensor::scatter_(
    int64_t dim,
    const Tensor& index,
    const Scalar& value) {
  Tensor& self = *this;
  const char* name = "scatter_";
  if (detail::is_storage(self)) { // Note [Storage dtypes]
    Tensor w = detail::upcast(self);
    w.scatter_(dim, index, value);
    return self.copy_(w);
  }
  detail::OpScope op(name, {self, index}, detail::OpScope::kInplace);
  check_scatter_args(self, index, nullptr, name);
  int64_t d = wrap_dim(dim, self.dim(), name);
  check_scatter_shapes(self, d, index, nullptr, name);
  detail::check_no_internal_overlap(self, name);
  dispatch_dtype(self.dtype(), name, [&]<typename T>() {
    const T v = value.to_checked<T>(name);
    ScatterGeometry g = scatter_geometry(self, d, index, name);
    scatter_value<T>(g, v);
    detail::write_back(g.W0, g.W, name);
  });
  return op.done_inplace(
      self, [d, si = op.save(index)](const autograd::GradList& grads) {
        Tensor gself = grads[0].clone();
        gself.scatter_(d, si.unpack(), 0);
        return autograd::GradList{gself, Tensor()};
      });
}

namespace {

enum class Reduce { kSum, kProd, kMean, kAmax, kAmin };

Reduce parse_reduce(std::string_view reduce, const char* name) {
  if (reduce == "sum") {
    return Reduce::kSum;
  }
  if (reduce == "prod") {
    return Reduce::kProd;
  }
  if (reduce == "mean") {
    return Reduce::kMean;
  }
  if (reduce == "amax") {
    return Reduce::kAmax;
  }
  DITTO_CHECK(
      reduce == "amin",
      ValueError,
      name,
      "reduce must be one of sum, prod, mean, amax, amin, got '",
      reduce,
      "'");
  return Reduce::kAmin;
}

// The value an excluded self starts from: the identity of the reduction.
template <typename T>
T reduce_identity(Reduce r) {
  switch (r) {
    case Reduce::kProd:
      return T(1);
    case Reduce::kAmax:
      return std::numeric_limits<T>::has_infinity
          ? T(-std::numeric_limits<T>::infinity())
          : std::numeric_limits<T>::lowest();
    case Reduce::kAmin:
      return std::numeric_limits<T>::has_infinity
          ? std::numeric_limits<T>::infinity()
          : std::numeric_limits<T>::max();
    default:
      return T(0);
  }
}

// Floor division, as PyTorch divides integer means.
template <typename T>
T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a / b;
  } else if constexpr (std::is_unsigned_v<T>) {
    return T(a / b);
  } else {
    T q = T(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  }
}

} // namespace

namespace {

// PyTorch 1.13's scatter_reduce_backward (FunctionsManual.cpp): the
// gradients of self (before the write) and src (index-shaped).
std::pair<Tensor, Tensor> scatter_reduce_backward(
    Reduce r,
    int64_t d,
    bool include_self,
    const Tensor& grad,
    const Tensor& self,
    const Tensor& src_whole,
    const Tensor& index,
    const Tensor& result) {
  // Only src's index-shaped corner is reduced (src may be larger in any
  // dim); its gradient is index-shaped, padded with zeros by the caller.
  Tensor src = src_whole;
  for (int64_t k = 0; k < index.dim(); ++k) {
    if (src.size(k) != index.size(k)) {
      src = src.narrow(k, 0, index.size(k));
    }
  }
  Tensor grad_self, grad_src;
  switch (r) {
    case Reduce::kSum:
      grad_self = grad;
      grad_src = gather(grad, d, index);
      break;
    case Reduce::kMean: {
      Tensor n = include_self ? ones_like(self) : zeros_like(self);
      n = n.scatter_add(d, index, ones_like(src));
      n = n.masked_fill(eq(n, 0), 1);
      grad_self = div(grad, n);
      grad_src = gather(grad_self, d, index);
      break;
    }
    case Reduce::kProd: {
      // Zeros get the product of the others explicitly.
      Tensor masked_self = self.masked_fill(eq(self, 0), 1);
      Tensor masked_self_result =
          masked_self.scatter_reduce(d, index, src, "prod", include_self);
      grad_self = div(mul(grad, masked_self_result), masked_self);
      Tensor src_zero = eq(src, 0);
      Tensor src_num_zeros =
          zeros_like(self)
              .scatter_add(d, index, src_zero.to(self.dtype()))
              .gather(d, index);
      Tensor src_single_zero = mul(src_zero, eq(src_num_zeros, 1)).to(kBool);
      Tensor masked_src = src.masked_fill(src_single_zero, 1);
      Tensor masked_src_result =
          self.scatter_reduce(d, index, masked_src, "prod", include_self);
      grad_src = where(
          src_single_zero,
          gather(mul(grad, masked_src_result), d, index),
          div(gather(mul(grad, result), d, index),
              src.masked_fill(src_zero, 1)));
      break;
    }
    case Reduce::kAmax:
    case Reduce::kAmin: {
      // Ties share the gradient evenly among self and the src values equal
      // to the result.
      Tensor value = gather(result, d, index);
      Tensor self_is_result = eq(self, result).to(self.dtype());
      Tensor src_is_result = eq(src, value).to(self.dtype());
      Tensor n = self_is_result.scatter_add(d, index, src_is_result);
      Tensor distributed = div(grad, n);
      grad_self = mul(self_is_result, distributed);
      grad_src = mul(src_is_result, gather(distributed, d, index));
      break;
    }
  }
  if (!include_self) {
    grad_self = grad_self.scatter(d, index, 0);
  }
  return {grad_self, grad_src};
}

} // namespace

Tensor& Tensor::index_reduce_(
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    std::string_view reduce,
    bool include_self) {
  Tensor& self = *this;
  const char* name = "index_reduce_";
  // Composite: scatter_reduce_ records the gradient and picks the variant.
  detail::OpScope op(name, {self, source, index}, detail::OpScope::kComposite);
  DITTO_CHECK(
      self.defined() && source.defined() && index.defined(),
      ValueError,
      name,
      "undefined tensor");
  DITTO_CHECK(
      reduce == "prod" || reduce == "mean" || reduce == "amax" ||
          reduce == "amin",
      ValueError,
      name,
      "Expected reduce to be one of prod, mean, amax or amin but got ",
      reduce,
      ".");
  detail::check_index_dtype(index, name);
  DITTO_CHECK(
      index.dim() <= 1,
      IndexError,
      name,
      "Index is supposed to be a vector, but got dim: ",
      index.dim(),
      " with size: ",
      shape_str(index.sizes()));
  DITTO_CHECK(
      self.dtype() == source.dtype(),
      TypeError,
      name,
      "self (",
      self.dtype(),
      ") and source (",
      source.dtype(),
      ") must have the same scalar type");
  DITTO_CHECK(
      self.dim() >= 1, ValueError, name, "self must have at least one dim");
  const int64_t d = wrap_dim(dim, self.dim(), name);
  Shape want = self.sizes();
  want[size_t(d)] = index.numel();
  DITTO_CHECK(
      source.sizes() == want,
      ValueError,
      name,
      "source ",
      shape_str(source.sizes()),
      " must have self's sizes ",
      shape_str(self.sizes()),
      " but at dim ",
      d,
      ", where it has one slice per index (",
      index.numel(),
      ")");
  // Checked here, so that the error names this op.
  Tensor idx = detail::checked_index(index, d, self.size(d), name);
  Shape view(size_t(self.dim()), 1);
  view[size_t(d)] = index.numel();
  self.scatter_reduce_(
      d,
      idx.reshape(view).expand(source.sizes()),
      source,
      reduce,
      include_self);
  return op.done_inplace(self);
}

Tensor& Tensor::scatter_reduce_(
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    std::string_view reduce,
    bool include_self) {
  Tensor& self = *this;
  const char* name = "scatter_reduce_";
  detail::OpScope op(name, {self, src, index}, detail::OpScope::kInplace);
  const Reduce r = parse_reduce(reduce, name);
  // The backward needs self before the write, src and the result.
  autograd::SavedTensor saved_self =
      op.needs_grad() ? op.save(self.clone()) : autograd::SavedTensor();
  autograd::SavedTensor saved_src = op.save(src);
  autograd::SavedTensor saved_index = op.save(index);
  autograd::SavedTensor saved_result = op.save(self);
  check_scatter_args(self, index, &src, name);
  detail::check_same_dtype(self, src, "src", name, true);
  int64_t d = wrap_dim(dim, self.dim(), name);
  check_scatter_shapes(self, d, index, &src, name);
  detail::check_no_internal_overlap(self, name);
  ScatterGeometry g = scatter_geometry(self, d, index, name);
  Tensor s = detail::moved(detail::unaliased(src, self), d);
  if (!include_self) {
    // As PyTorch: scattered positions start from the reduction's identity.
    dispatch_dtype(self.dtype(), name, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        scatter_value<T>(g, reduce_identity<T>(r));
      }
    });
  }
  switch (r) {
    case Reduce::kSum:
    case Reduce::kMean:
      scatter_tensor<Combine::kAdd>(g, s, name);
      break;
    case Reduce::kProd:
      scatter_tensor<Combine::kMul>(g, s, name);
      break;
    case Reduce::kAmax:
      scatter_tensor<Combine::kMax>(g, s, name);
      break;
    case Reduce::kAmin:
      scatter_tensor<Combine::kMin>(g, s, name);
      break;
  }
  if (r == Reduce::kMean) {
    // Divide by the number of values reduced (self counted when included):
    // counts are integers, so their scatter is order independent.
    Tensor count = zeros(g.W.sizes(), kInt64);
    ScatterGeometry gc = g;
    gc.W = count;
    const int64_t one = 1;
    scatter_core<Combine::kAdd, int64_t>(
        gc, &one, 0, std::vector<int64_t>(size_t(g.cols), 0), false);
    const int64_t* cp = count.data_ptr<int64_t>();
    dispatch_dtype(self.dtype(), name, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        T* w = g.W.data_ptr<T>();
        parallel_for(0, g.W.numel(), 16384, [&](int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k) {
            // The count in self's dtype, as PyTorch keeps it (a uint8 count
            // can wrap to 0, which divides by 1).
            const T c = T(cp[k] + (include_self ? 1 : 0));
            if (cp[k] > 0) {
              w[k] = floor_div(w[k], c == T(0) ? T(1) : c);
            }
          }
        });
      }
    });
  }
  detail::write_back(g.W0, g.W, name);
  return op.done_inplace(
      self,
      [r, d, include_self, saved_self, saved_src, saved_index, saved_result](
          const autograd::GradList& grads) {
        auto [gself, gsrc] = scatter_reduce_backward(
            r,
            d,
            include_self,
            grads[0],
            saved_self.unpack(),
            saved_src.unpack(),
            saved_index.unpack(),
            saved_result.unpack());
        return autograd::GradList{
            gself, fit_to(gsrc, saved_src.unpack().sizes()), Tensor()};
      });
}

} // namespace ditto
