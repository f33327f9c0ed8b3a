#include "ditto/ops/shape_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto {
namespace {

// The gradient of pad: constant padding passes the gradient of the region
// the input landed in; reflect padding also adds the mirrored positions'
// (summed by index_add_, whose variant the node's policy picks).
// Where output index idx (already shifted by the left pad) of a padded dim
// of size `size` reads: reflect (edge not repeated) or replicate (clamp).
int64_t source_index(int64_t idx, int64_t size, bool reflect) {
  if (reflect) {
    return idx < 0 ? -idx : (idx >= size ? 2 * (size - 1) - idx : idx);
  }
  return idx < 0 ? 0 : (idx >= size ? size - 1 : idx);
}

Tensor pad_backward(
    const Tensor& g,
    const Shape& in,
    const Shape& out_shape,
    const std::vector<int64_t>& lo,
    bool constant,
    bool reflect) {
  const int64_t nd = int64_t(in.size());
  if (constant) {
    Tensor gi = zeros(in, g.dtype());
    Tensor dst = gi, src = g;
    for (int64_t d = 0; d < nd; ++d) {
      int64_t l = lo[size_t(d)];
      int64_t s0 = std::max<int64_t>(0, -l);
      int64_t d0 = std::max<int64_t>(0, l);
      int64_t len = std::min(in[size_t(d)] - s0, out_shape[size_t(d)] - d0);
      if (len <= 0) {
        return gi;
      }
      dst = dst.narrow(d, s0, len);
      src = src.narrow(d, d0, len);
    }
    dst.copy_(src);
    return gi;
  }
  const Shape ost = contiguous_strides(out_shape);
  const Shape ist = contiguous_strides(in);
  int64_t total = 1;
  for (int64_t s : out_shape) {
    total *= s;
  }
  Tensor map = detail::new_tensor({total}, kInt64);
  int64_t* mp = map.data_ptr<int64_t>();
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, j = 0;
    for (int64_t d = 0; d < nd; ++d) {
      int64_t idx = rem / ost[size_t(d)] - lo[size_t(d)];
      rem %= ost[size_t(d)];
      const int64_t size = in[size_t(d)];
      j += source_index(idx, size, reflect) * ist[size_t(d)];
    }
    mp[i] = j;
  }
  int64_t n = 1;
  for (int64_t s : in) {
    n *= s;
  }
  Tensor gi = zeros({n}, g.dtype());
  gi.index_add_(0, map, g.contiguous().reshape({-1}));
  return gi.view(in);
}

} // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  detail::OpScope scope("cat", tensors);
  DITTO_CHECK(
      !tensors.empty(),
      ValueError,
      "cat",
      "expected a non-empty list of tensors");
  // As PyTorch: 1-d empty tensors are skipped; the rest must agree in every
  // dim but `dim`.
  const Tensor* ref = nullptr;
  Dtype dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) {
    DITTO_CHECK(t.defined(), ValueError, "cat", "undefined tensor in list");
    dtype = promote_types(dtype, t.dtype());
    if (!(t.dim() == 1 && t.numel() == 0) && ref == nullptr) {
      ref = &t;
    }
  }
  if (ref == nullptr) {
    return scope.done(
        detail::new_tensor({0}, dtype),
        [n = tensors.size()](const autograd::GradList&) {
          return autograd::GradList(n);
        });
  }
  DITTO_CHECK(
      ref->dim() > 0,
      ValueError,
      "cat",
      "zero-dimensional tensor cannot be concatenated");
  int64_t d = wrap_dim(dim, ref->dim(), "cat");
  Shape shape = ref->sizes();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) {
      continue;
    }
    DITTO_CHECK(
        t.dim() == ref->dim(),
        ValueError,
        "cat",
        "tensors must have same number of dimensions: got ",
        ref->dim(),
        " and ",
        t.dim());
    for (int64_t k = 0; k < t.dim(); ++k) {
      DITTO_CHECK(
          k == d || t.sizes()[k] == ref->sizes()[k],
          ValueError,
          "cat",
          "sizes of tensors must match except in dimension ",
          d,
          ". Expected size ",
          ref->sizes()[k],
          " but got size ",
          t.sizes()[k],
          " for tensor number ",
          i,
          " in the list");
    }
    shape[d] += t.sizes()[d];
  }
  Tensor out = detail::new_tensor(shape, dtype);
  int64_t pos = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) {
      continue;
    }
    detail::copy_into(out.narrow(d, pos, t.sizes()[d]), t, "cat");
    pos += t.sizes()[d];
  }
  // Each input's gradient is its slice of the output's.
  std::vector<int64_t> lengths;
  for (const Tensor& t : tensors) {
    lengths.push_back(t.dim() == 1 && t.numel() == 0 ? -1 : t.sizes()[d]);
  }
  return scope.done(out, [d, lengths](const autograd::GradList& g) {
    autograd::GradList grads;
    int64_t at = 0;
    for (int64_t len : lengths) {
      grads.push_back(len < 0 ? Tensor() : g[0].narrow(d, at, len));
      at += std::max<int64_t>(len, 0);
    }
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  // Composite: the unsqueezes and the cat record the gradient.
  detail::OpScope scope("stack", tensors, detail::OpScope::kComposite);
  DITTO_CHECK(
      !tensors.empty(),
      ValueError,
      "stack",
      "expected a non-empty list of tensors");
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    DITTO_CHECK(
        tensors[i].defined() && tensors[i].sizes() == tensors[0].sizes(),
        ValueError,
        "stack",
        "expects each tensor to be equal size, but got ",
        shape_str(tensors[0].sizes()),
        " at entry 0 and ",
        tensors[i].defined() ? shape_str(tensors[i].sizes()) : "undefined",
        " at entry ",
        i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return scope.done(cat(parts, d));
}

Tensor flip(const Tensor& a, const IntArg& dims) {
  detail::OpScope scope("flip", {a});
  DITTO_CHECK(a.defined(), ValueError, "flip", "undefined tensor");
  // A view with negative strides is not representable, so flip copies by
  // walking the source backwards along the flipped dims.
  std::vector<bool> f(size_t(std::max<int64_t>(a.dim(), 1)), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, a.dim(), "flip");
    DITTO_CHECK(
        !f[w], ValueError, "flip", "dim ", w, " appears multiple times");
    f[w] = true;
  }
  Tensor out = detail::new_tensor(a.sizes(), a.dtype());
  if (a.numel() == 0) {
    return scope.done(out, [dims](const autograd::GradList& g) {
      return autograd::GradList{flip(g[0], dims)};
    });
  }
  Tensor src = a.contiguous();
  const int64_t n = a.numel();
  const int64_t nd = a.dim();
  const Shape& sizes = a.sizes();
  const Shape st = contiguous_strides(sizes);
  const size_t es = a.element_size();
  const char* in = static_cast<const char*>(src.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  parallel_for(0, n, detail::elementwise_grain(n), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t rem = i, j = 0;
      for (int64_t d = 0; d < nd; ++d) {
        int64_t idx = rem / st[d];
        rem %= st[d];
        j += (f[d] ? sizes[d] - 1 - idx : idx) * st[d];
      }
      std::memcpy(o + i * int64_t(es), in + j * int64_t(es), es);
    }
  });
  return scope.done(out, [dims](const autograd::GradList& g) {
    return autograd::GradList{flip(g[0], dims)};
  });
}

namespace {

// pad's checks of its arguments, every mode's.
void check_pad_args(
    const Tensor& a,
    const IntList& pads,
    std::string_view mode,
    std::optional<double> value) {
  DITTO_CHECK(a.defined(), ValueError, "pad", "undefined tensor");
  DITTO_CHECK(
      pads.size() % 2 == 0 && int64_t(pads.size()) / 2 <= a.dim(),
      ValueError,
      "pad",
      "padding length must be even and at most twice the number of dims, "
      "got ",
      shape_str(pads),
      " for a ",
      a.dim(),
      "-d tensor");
  DITTO_CHECK(
      mode == "constant" || mode == "reflect" || mode == "replicate" ||
          mode == "circular",
      ValueError,
      "pad",
      "unsupported padding mode '",
      mode,
      "'; expected 'constant', 'reflect', 'replicate' or 'circular'");
  DITTO_CHECK(
      mode == "constant" || !value || *value == 0,
      ValueError,
      "pad",
      "Padding mode \"",
      mode,
      "\" doesn't take in value argument");
}

// circular: each padded dim, last first, between its wrapped slices (the
// last `left` entries before it, the first `right` after it); each pad at
// most the dim's size. Made of narrow and cat, which record the gradient.
Tensor pad_circular(const Tensor& a, const IntList& pads) {
  detail::OpScope scope("pad", {a}, detail::OpScope::kComposite);
  Tensor out = a;
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    const int64_t d = a.dim() - 1 - int64_t(i);
    const int64_t left = pads[2 * i], right = pads[2 * i + 1];
    const int64_t size = out.size(d);
    DITTO_CHECK(
        left >= 0 && right >= 0 && left <= size && right <= size,
        ValueError,
        "pad",
        "circular padding of (",
        left,
        ", ",
        right,
        ") is out of range for a dim of size ",
        size);
    std::vector<Tensor> parts;
    if (left > 0) {
      parts.push_back(out.narrow(d, size - left, left));
    }
    parts.push_back(out);
    if (right > 0) {
      parts.push_back(out.narrow(d, 0, right));
    }
    if (parts.size() > 1) {
      out = cat(parts, d);
    }
  }
  return scope.done(out);
}

} // namespace

Tensor pad(
    const Tensor& a,
    const IntArg& pads,
    std::string_view mode,
    std::optional<double> value_or_none) {
  check_pad_args(a, pads, mode, value_or_none);
  if (mode == "circular") {
    return pad_circular(a, pads);
  }
  detail::OpScope scope("pad", {a});
  const double value = value_or_none.value_or(0.0);
  const bool reflect = mode == "reflect";
  const bool constant = mode == "constant";
  Shape out_shape = a.sizes();
  std::vector<int64_t> lo(size_t(a.dim()), 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    int64_t d = a.dim() - 1 - int64_t(i);
    int64_t l = pads[2 * i], r = pads[2 * i + 1];
    int64_t size = a.sizes()[d];
    DITTO_CHECK(
        constant || (l >= 0 && r >= 0 && size > 0),
        ValueError,
        "pad",
        "padding (",
        l,
        ", ",
        r,
        ") of dim ",
        d,
        " must be non-negative, and the dim non-empty, in ",
        mode,
        " mode");
    if (reflect) {
      DITTO_CHECK(
          l >= 0 && r >= 0 && l < size && r < size,
          ValueError,
          "pad",
          "padding (",
          l,
          ", ",
          r,
          ") should be less than the input size ",
          size,
          " of dim ",
          d,
          " in reflect mode");
    }
    out_shape[d] = checked_add(
        checked_add(size, l, "pad", "the padded size"),
        r,
        "pad",
        "the padded size");
    DITTO_CHECK(
        out_shape[d] >= 0,
        ValueError,
        "pad",
        "resulting padded size ",
        out_shape[d],
        " of dim ",
        d,
        " is negative");
    lo[d] = l;
  }
  Tensor out = detail::new_tensor(out_shape, a.dtype());
  auto backward = [in = a.sizes(), out_shape, lo, constant, reflect](
                      const autograd::GradList& g) {
    return autograd::GradList{
        pad_backward(g[0], in, out_shape, lo, constant, reflect)};
  };
  if (constant) {
    out.fill_(value);
    // Negative pads crop: copy the overlapping region only.
    Tensor dst = out, src = a;
    for (int64_t d = 0; d < a.dim(); ++d) {
      int64_t l = lo[d];
      int64_t size = a.sizes()[d];
      int64_t s0 = std::max<int64_t>(0, -l);
      int64_t d0 = std::max<int64_t>(0, l);
      int64_t len = std::min(size - s0, out_shape[d] - d0);
      if (len <= 0) {
        return scope.done(out, backward);
      }
      src = src.narrow(d, s0, len);
      dst = dst.narrow(d, d0, len);
    }
    detail::copy_into(dst, src, "pad");
    return scope.done(out, backward);
  }
  // Reflect and replicate: each output index maps to one input index per
  // dim.
  Tensor src = a.contiguous();
  const int64_t nd = a.dim();
  const Shape ost = contiguous_strides(out_shape);
  const Shape ist = contiguous_strides(a.sizes());
  const size_t es = a.element_size();
  const char* in = static_cast<const char*>(src.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  parallel_for(
      0,
      out.numel(),
      detail::elementwise_grain(out.numel()),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          int64_t rem = i, j = 0;
          for (int64_t d = 0; d < nd; ++d) {
            int64_t idx = rem / ost[d] - lo[d];
            rem %= ost[d];
            j += source_index(idx, a.sizes()[d], reflect) * ist[d];
          }
          std::memcpy(o + i * int64_t(es), in + j * int64_t(es), es);
        }
      });
  return scope.done(out, backward);
}

std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending) {
  if (detail::is_storage(a)) { // Note [Storage dtypes]: exact
    auto r = sort(detail::upcast(a), dim, descending);
    return {r.first.to(a.dtype()), r.second};
  }
  detail::OpScope scope("sort", {a});
  DITTO_CHECK(a.defined(), ValueError, "sort", "undefined tensor");
  int64_t d = wrap_dim(dim, a.dim(), "sort");
  // Move the sorted dim last, sort each contiguous row, move it back.
  Tensor moved = a.dim() > 0 ? a.transpose(d, -1).contiguous() : a.reshape({1});
  int64_t len = a.dim() > 0 ? a.sizes()[d] : 1;
  int64_t rows = len == 0 ? 0 : moved.numel() / len;
  Tensor values = detail::new_tensor(moved.sizes(), a.dtype());
  Tensor indices = detail::new_tensor(moved.sizes(), kInt64);
  dispatch_dtype(a.dtype(), "sort", [&]<typename T>() {
    const T* x = moved.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* ix = indices.data_ptr<int64_t>();
    // NaN is greater than everything (last ascending, first descending);
    // equal keys keep their order (stable).
    auto less = [](T p, T q) {
      if constexpr (std::is_floating_point_v<T>) {
        return (p < q) || (q != q && p == p);
      } else {
        return p < q;
      }
    };
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(len));
      for (int64_t r = b; r < e; ++r) {
        const T* row = x + r * len;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
          return descending ? less(row[j], row[i]) : less(row[i], row[j]);
        });
        for (int64_t k = 0; k < len; ++k) {
          v[r * len + k] = row[order[size_t(k)]];
          ix[r * len + k] = order[size_t(k)];
        }
      }
    });
  });
  if (a.dim() == 0) {
    values = values.reshape({});
    indices = indices.reshape({});
  } else {
    values = values.transpose(d, -1).contiguous();
    indices = indices.transpose(d, -1).contiguous();
  }
  scope.done(
      {values, indices},
      [d, in = a.sizes(), si = scope.save(indices)](
          const autograd::GradList& g) {
        if (in.empty()) {
          return autograd::GradList{g[0]};
        }
        Tensor gi = zeros(in, g[0].dtype());
        gi.scatter_(d, si.unpack(), g[0]);
        return autograd::GradList{gi};
      });
  return {values, indices};
}

bool equal(const Tensor& a, const Tensor& b) {
  detail::OpScope scope("equal");
  DITTO_CHECK(
      a.defined() && b.defined(), ValueError, "equal", "undefined tensor");
  const bool r = [&] {
    if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
      return false;
    }
    return a.numel() == 0 || min(eq(a, b)).item<bool>();
  }();
  scope.done(std::vector<Tensor>{}); // traced, with no tensor result
  return r;
}

namespace {

bool allclose_values(
    const Tensor& a,
    const Tensor& b,
    double rtol,
    double atol,
    bool equal_nan) {
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), "allclose");
  if (checked_numel(shape, "allclose") == 0) {
    return true;
  }
  Tensor x = a.to(kFloat64).expand(shape).contiguous();
  Tensor y = b.to(kFloat64).expand(shape).contiguous();
  const double* px = x.data_ptr<double>();
  const double* py = y.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    double p = px[i], q = py[i];
    if (p != p || q != q) {
      if (!(equal_nan && p != p && q != q)) {
        return false;
      }
      continue;
    }
    if (p == q) {
      continue; // equal infinities
    }
    if (!(std::fabs(p - q) <= atol + rtol * std::fabs(q))) {
      return false;
    }
  }
  return true;
}

} // namespace

bool allclose(
    const Tensor& a,
    const Tensor& b,
    double rtol,
    double atol,
    bool equal_nan) {
  detail::OpScope scope("allclose");
  DITTO_CHECK(
      a.defined() && b.defined(), ValueError, "allclose", "undefined tensor");
  const bool r = allclose_values(a, b, rtol, atol, equal_nan);
  scope.done(std::vector<Tensor>{}); // traced, with no tensor result
  return r;
}

} // namespace ditto
