#include "ditto/ops/index.h"

#include <cstring>
#include <vector>

#include "ditto/determinism/context.h"
#include "ditto/ops/detail/cpu_kernels.h"
#include "ditto/ops/detail/index_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto {

namespace detail {

// w's row index[i] (of len elements) combined (C) with src's row i, for
// i < n: in index order where the deterministic mode is on and the result
// depends on it, else in parallel (atomic where rows repeat).
template <Combine C>
void update_rows(
    const Tensor& w,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t rows,
    int64_t len,
    bool deterministic,
    const char* name) {
  dispatch_dtype(w.dtype(), name, [&]<typename T>() {
    if constexpr (C == Combine::kAssign || !std::is_same_v<T, bool>) {
      T* wp = w.data_ptr<T>();
      const T* s = src.data_ptr<T>();
      scatter_updates(
          deterministic && !order_independent<C, T>(),
          n,
          rows,
          len,
          [&](int64_t i) { return index[i]; },
          [&](int64_t i, bool atomic) {
            combine_row<C>(
                wp + index[i] * len,
                s + i * len,
                len,
                nullptr,
                nullptr,
                atomic);
          },
          [&](int64_t i) { prefetch_row(s + i * len, len); });
    }
  });
}

} // namespace detail

using detail::Combine;

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  detail::OpScope op("index_select", {self, index});
  DITTO_CHECK(self.defined(), ValueError, "index_select", "undefined tensor");
  DITTO_CHECK(
      index.dim() <= 1,
      ValueError,
      "index_select",
      "index must be 0-d or 1-d, got ",
      index.dim(),
      "-d");
  int64_t d = wrap_dim(dim, self.dim(), "index_select");
  Tensor s = detail::moved(self, d);
  Tensor idx = detail::checked_index(index, d, s.size(0), "index_select");
  const int64_t n = idx.numel();
  Shape out_moved = s.sizes();
  out_moved[0] = n;
  Tensor out = detail::new_tensor(out_moved, self.dtype(), self.device());
  // Rows of a contiguous dim-first copy are contiguous bytes: one memcpy
  // per selected row.
  Tensor src = s.contiguous();
  const int64_t len = s.size(0) > 0 ? s.numel() / s.size(0) : 0;
  detail::device_slots(out, "index_select")
      .select_rows(out, src, idx.data_ptr<int64_t>(), n, len, "index_select");
  return op.done(
      detail::moved_back(out, self.dim(), d).contiguous(),
      [d, si = op.save(index), in = self.sizes()](const autograd::GradList& g) {
        // The node's policy picks index_add_'s variant.
        Tensor gi = zeros(in, g[0].dtype(), g[0].device());
        gi.index_add_(d, si.unpack(), g[0]);
        return autograd::GradList{gi, Tensor()};
      });
}

Tensor take(const Tensor& self, const Tensor& index) {
  const char* name = "take";
  detail::OpScope op(name, {self, index});
  DITTO_CHECK(self.defined(), ValueError, name, "undefined tensor");
  Tensor idx = detail::checked_index(index, 0, self.numel(), name, true);
  Tensor flat = self.contiguous();
  Tensor out = detail::new_tensor(index.sizes(), self.dtype());
  const int64_t* ip = idx.data_ptr<int64_t>();
  const size_t es = self.element_size();
  const char* from = static_cast<const char*>(flat.raw_data());
  char* to = static_cast<char*>(out.raw_data());
  parallel_for(0, idx.numel(), 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(to + size_t(i) * es, from + size_t(ip[i]) * es, es);
    }
  });
  return op.done(
      out,
      [si = op.save(index), in = self.sizes()](const autograd::GradList& g) {
        Tensor gi = zeros(in, g[0].dtype());
        gi.put_(si.unpack(), g[0], /*accumulate=*/true);
        return autograd::GradList{gi, Tensor()};
      });
}

namespace {

// index_add_ and index_copy_: self[index[i]] (combine)= source[i] along
// dim, one destination row per index entry.
template <Combine C>
Tensor& index_rows_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    const Scalar& alpha,
    const char* name) {
  if (detail::is_storage(self) && source.defined() &&
      source.dtype() == self.dtype()) {
    // Note [Storage dtypes]: on an upcast copy, rounded back once.
    Tensor w = detail::upcast(self);
    index_rows_<C>(w, dim, index, detail::upcast(source), alpha, name);
    return self.copy_(w);
  }
  detail::OpScope op(name, {self, source, index}, detail::OpScope::kInplace);
  DITTO_CHECK(
      self.defined() && source.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      index.defined() && index.dim() <= 1,
      ValueError,
      name,
      "index must be 0-d or 1-d");
  detail::check_same_dtype(self, source, "source", name, C != Combine::kAssign);
  DITTO_CHECK(
      !is_integral(self.dtype()) || alpha.is_integral() || alpha.is_bool(),
      TypeError,
      name,
      "for an integral self (",
      self.dtype(),
      "), alpha must not be a floating point number (got ",
      alpha.to<double>(),
      ")");
  int64_t d = wrap_dim(dim, self.dim(), name);
  DITTO_CHECK(
      source.dim() == self.dim() || (self.dim() <= 1 && source.dim() <= 1),
      ValueError,
      name,
      "source ",
      shape_str(source.sizes()),
      " and self ",
      shape_str(self.sizes()),
      " differ in rank");
  Tensor W0 = detail::moved(self, d);
  Tensor src = detail::moved(source, d);
  DITTO_CHECK(
      index.numel() == src.size(0),
      ValueError,
      name,
      "index has ",
      index.numel(),
      " entries but source has ",
      src.size(0),
      " along dim ",
      d);
  for (int64_t k = 1; k < W0.dim(); ++k) {
    DITTO_CHECK(
        src.size(k) == W0.size(k),
        ValueError,
        name,
        "source ",
        shape_str(source.sizes()),
        " must match self ",
        shape_str(self.sizes()),
        " except along dim ",
        d);
  }
  Tensor idx = detail::checked_index(index, d, W0.size(0), name);
  if (detail::shares_storage(idx, self)) {
    idx = idx.clone(); // an index that is a view of self
  }
  detail::check_no_internal_overlap(self, name);
  Tensor W = detail::working_copy(W0);
  src = detail::unaliased(src, self);
  if (C == Combine::kAdd &&
      !(alpha.is_integral() && alpha.to<int64_t>() == 1)) {
    src = mul(src, alpha);
  }
  src = src.contiguous();
  const int64_t n = idx.numel();
  const int64_t rows = W.size(0);
  const int64_t len = rows > 0 ? W.numel() / rows : 0;
  const int64_t* ip = idx.data_ptr<int64_t>();
  if constexpr (C == Combine::kAdd) {
    detail::device_slots(W, name).add_rows(
        W, src, ip, n, rows, len, are_deterministic_algorithms_enabled(), name);
  } else {
    // index_copy_: the CPU's alone (a device has no kernel for it: OpScope
    // refused a device tensor).
    detail::update_rows<C>(
        W, src, ip, n, rows, len, are_deterministic_algorithms_enabled(), name);
  }
  detail::write_back(W0, W, name);
  return op.done_inplace(
      self,
      [dim, alpha, si = op.save(index), src_sizes = source.sizes()](
          const autograd::GradList& g) {
        Tensor idx = si.unpack();
        Tensor gsrc = index_select(g[0], dim, idx).reshape(src_sizes);
        if (C == Combine::kAdd) {
          return autograd::GradList{g[0], mul(gsrc, alpha), Tensor()};
        }
        // Overwritten rows pass no gradient to self's old values.
        Tensor gself = g[0].clone();
        gself.index_copy_(dim, idx, zeros_like(gsrc).reshape(src_sizes));
        return autograd::GradList{gself, gsrc, Tensor()};
      });
}

} // namespace

Tensor& Tensor::index_add_(
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    const Scalar& alpha) {
  Tensor& self = *this;
  return index_rows_<Combine::kAdd>(
      self, dim, index, source, alpha, "index_add_");
}

Tensor& Tensor::index_copy_(
    int64_t dim,
    const Tensor& index,
    const Tensor& source) {
  Tensor& self = *this;
  return index_rows_<Combine::kAssign>(
      self, dim, index, source, Scalar(int64_t(1)), "index_copy_");
}

// The out-of-place forms of the family's writes, on a copy of self (the
// in-place members are here and in scatter.cpp).
Tensor index_add(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    const Scalar& alpha) {
  return detail::on_copy(self, "index_add", [&](Tensor& t) {
    t.index_add_(dim, index, source, alpha);
  });
}

Tensor index_copy(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source) {
  return detail::on_copy(self, "index_copy", [&](Tensor& t) {
    t.index_copy_(dim, index, source);
  });
}

Tensor put(
    const Tensor& self,
    const Tensor& index,
    const Tensor& source,
    bool accumulate) {
  return detail::on_copy(
      self, "put", [&](Tensor& t) { t.put_(index, source, accumulate); });
}

Tensor scatter(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src) {
  return detail::on_copy(
      self, "scatter", [&](Tensor& t) { t.scatter_(dim, index, src); });
}

Tensor scatter(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Scalar& value) {
  return detail::on_copy(
      self, "scatter", [&](Tensor& t) { t.scatter_(dim, index, value); });
}

Tensor scatter_add(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src) {
  return detail::on_copy(
      self, "scatter_add", [&](Tensor& t) { t.scatter_add_(dim, index, src); });
}

Tensor scatter_reduce(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    std::string_view reduce,
    bool include_self) {
  return detail::on_copy(self, "scatter_reduce", [&](Tensor& t) {
    t.scatter_reduce_(dim, index, src, reduce, include_self);
  });
}

Tensor index_reduce(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    std::string_view reduce,
    bool include_self) {
  return detail::on_copy(self, "index_reduce", [&](Tensor& t) {
    t.index_reduce_(dim, index, source, reduce, include_self);
  });
}

Tensor& Tensor::put_(
    const Tensor& index,
    const Tensor& source,
    bool accumulate) {
  Tensor& self = *this;
  const char* name = "put_";
  detail::OpScope op(name, {self, source, index}, detail::OpScope::kInplace);
  DITTO_CHECK(
      self.defined() && source.defined(), ValueError, name, "undefined tensor");
  detail::check_same_dtype(self, source, "source", name, accumulate);
  detail::check_index_dtype(index, name);
  DITTO_CHECK(
      index.numel() == source.numel(),
      ValueError,
      name,
      "index has ",
      index.numel(),
      " elements but source has ",
      source.numel());
  Tensor idx = detail::checked_index(index, 0, self.numel(), name, true);
  detail::check_no_internal_overlap(self, name);
  Tensor W = detail::working_copy(self);
  Tensor src = detail::unaliased(source, self).contiguous();
  const int64_t* ip = idx.data_ptr<int64_t>();
  auto run = [&]<Combine C>() {
    dispatch_dtype(self.dtype(), name, [&]<typename T>() {
      if constexpr (C == Combine::kAssign || !std::is_same_v<T, bool>) {
        T* w = W.data_ptr<T>();
        const T* s = src.data_ptr<T>();
        detail::scatter_updates(
            detail::use_deterministic<C, T>(),
            idx.numel(),
            W.numel(),
            1,
            [&](int64_t i) { return ip[i]; },
            [&](int64_t i, bool atomic) {
              detail::combine_row<C>(
                  w + ip[i], s + i, 1, nullptr, nullptr, atomic);
            });
      }
    });
  };
  detail::with_accumulate(accumulate, run);
  detail::write_back(self, W, name);
  return op.done_inplace(
      self,
      [accumulate, si = op.save(index), src_sizes = source.sizes()](
          const autograd::GradList& g) {
        Tensor idx = si.unpack();
        Tensor gsrc = ::ditto::take(g[0], idx).reshape(src_sizes);
        if (accumulate) {
          return autograd::GradList{g[0], gsrc, Tensor()};
        }
        Tensor gself = g[0].clone();
        gself.put_(idx, zeros_like(gsrc), false);
        return autograd::GradList{gself, gsrc, Tensor()};
      });
}

namespace detail::cpu {

// The CPU's select_rows slot: one memcpy per selected row.
void select_rows(
    const Tensor& out,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t len,
    const char* /*name*/) {
  const size_t row_bytes = size_t(len) * out.element_size();
  const char* from = static_cast<const char*>(src.raw_data());
  char* to = static_cast<char*>(out.raw_data());
  parallel_for(0, n, keys_per_task(len), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memcpy(
          to + size_t(i) * row_bytes,
          from + size_t(index[i]) * row_bytes,
          row_bytes);
    }
  });
}

// The CPU's add_rows slot: in the deterministic mode, rows in index order
// (integer rows, whose sums do not depend on it, in parallel).
void add_rows(
    const Tensor& w,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t rows,
    int64_t len,
    bool deterministic,
    const char* name) {
  update_rows<Combine::kAdd>(w, src, index, n, rows, len, deterministic, name);
}

} // namespace detail::cpu

} // namespace ditto
