// The bodies of the Core ATen operators that ditto/ops/composite/aten.ops.toml
// declares as made of other ops (ditto/ops/detail/composite.h). Their
// gradients, traces and device support come from the public ops they call,
// and each result is the fixed chain of its parts. The ones made of nn's
// functions (convolution, scaled_dot_product_attention, rms_norm) are in
// ditto/nn/functional/aten_composite.cpp, so that ops stays below nn.

#include <algorithm>
#include <array>

#include "ditto/core/error.h"
#include "ditto/ops/declared.h"
#include "ditto/ops/detail/composite.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/scan.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::detail {

namespace {

// A two-number argument of the column ops (one number is both), as an
// array; ValueError naming op and what for any other count.
std::array<int64_t, 2> pair_of(
    const IntArg& v,
    const char* op,
    const char* what) {
  DITTO_CHECK(
      v.size() == 1 || v.size() == 2,
      ValueError,
      op,
      what,
      " must be one int or two ints, got ",
      v.size(),
      " values");
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// The input of a column op with its batch dim (batched: it had one).
struct ColumnInput {
  Tensor x;
  bool batched;
};

ColumnInput with_batch(
    const Tensor& self,
    int64_t batched_dims,
    const char* op) {
  DITTO_CHECK(
      self.dim() == batched_dims || self.dim() == batched_dims - 1,
      ValueError,
      op,
      "expected a ",
      batched_dims - 1,
      "-d or ",
      batched_dims,
      "-d input, got ",
      self.dim(),
      " dims");
  const bool batched = self.dim() == batched_dims;
  return {batched ? self : self.unsqueeze(0), batched};
}

// The geometry of im2col / col2im: sliding blocks over the padded image.
struct SlidingBlocks {
  std::array<int64_t, 2> k, d, p, s;
  int64_t rows = 0, cols = 0; // blocks along height and width

  SlidingBlocks(
      const IntArg& kernel,
      const IntArg& dilation,
      const IntArg& padding,
      const IntArg& stride,
      int64_t height,
      int64_t width,
      const char* op)
      : k(pair_of(kernel, op, "kernel_size")),
        d(pair_of(dilation, op, "dilation")),
        p(pair_of(padding, op, "padding")),
        s(pair_of(stride, op, "stride")) {
    // Each below 2^31, so that the geometry's arithmetic cannot overflow.
    constexpr int64_t kMax = (int64_t(1) << 31) - 1;
    for (int i = 0; i < 2; ++i) {
      DITTO_CHECK(
          k[i] > 0 && k[i] <= kMax,
          ValueError,
          op,
          "kernel_size must be in [1, 2^31), got ",
          k[i]);
      DITTO_CHECK(
          d[i] > 0 && d[i] <= kMax,
          ValueError,
          op,
          "dilation must be in [1, 2^31), got ",
          d[i]);
      DITTO_CHECK(
          s[i] > 0 && s[i] <= kMax,
          ValueError,
          op,
          "stride must be in [1, 2^31), got ",
          s[i]);
      DITTO_CHECK(
          p[i] >= 0 && p[i] <= kMax,
          ValueError,
          op,
          "padding must be in [0, 2^31), got ",
          p[i]);
    }
    DITTO_CHECK(
        height >= 0 && height <= kMax && width >= 0 && width <= kMax,
        ValueError,
        op,
        "the image's size must be in [0, 2^31), got ",
        height,
        "x",
        width);
    rows = (height + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) / s[0] + 1;
    cols = (width + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) / s[1] + 1;
    DITTO_CHECK(
        height + 2 * p[0] >= d[0] * (k[0] - 1) + 1 &&
            width + 2 * p[1] >= d[1] * (k[1] - 1) + 1,
        ValueError,
        op,
        "the kernel ",
        k[0],
        "x",
        k[1],
        " (dilation ",
        d[0],
        "x",
        d[1],
        ") does not fit the padded image ",
        height + 2 * p[0],
        "x",
        width + 2 * p[1]);
  }
};

// [start, end) along dim by step, for the view at kernel offset `offset`.
Tensor strided_blocks(
    const Tensor& x,
    int64_t dim,
    int64_t offset,
    int64_t n,
    int64_t step) {
  return x.slice(dim, offset, offset + step * (n - 1) + 1, step);
}

// A scatter's source has the shape of the part of self it replaces.
void check_fits(const Tensor& src, const Tensor& part, const char* op) {
  DITTO_CHECK(
      src.sizes() == part.sizes(),
      ValueError,
      op,
      "expected src to have a size equal to the slice of self. src size = ",
      shape_str(src.sizes()),
      ", slice size = ",
      shape_str(part.sizes()));
}

} // namespace

Tensor alias(const Tensor& self) {
  return self.as_strided(self.sizes(), self.strides(), self.storage_offset());
}

Tensor select_scatter(
    const Tensor& self,
    const Tensor& src,
    int64_t dim,
    int64_t index) {
  const char* op = "select_scatter";
  check_defined(src, op);
  DITTO_CHECK(
      self.dim() > 0,
      IndexError,
      op,
      "select() cannot be applied to a 0-dim tensor");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const int64_t size = self.size(d);
  DITTO_CHECK(
      index >= -size && index < size,
      IndexError,
      op,
      "index ",
      index,
      " is out of range for dimension ",
      d,
      " of size ",
      size);
  const int64_t i = index < 0 ? index + size : index;
  check_fits(src, self.select(d, i), op);
  return self.index_copy(
      d, tensor(std::vector<int64_t>{i}), src.to(self.dtype()).unsqueeze(d));
}

Tensor slice_scatter(
    const Tensor& self,
    const Tensor& src,
    int64_t dim,
    std::optional<int64_t> start,
    std::optional<int64_t> end,
    int64_t step) {
  const char* op = "slice_scatter";
  check_defined(src, op);
  DITTO_CHECK(self.dim() > 0, IndexError, op, "a 0-dim tensor has no slices");
  DITTO_CHECK(
      step > 0, ValueError, op, "slice step must be positive, got ", step);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const int64_t size = self.size(d);
  // Python's slice bounds: negative from the end, clamped to [0, size].
  auto bound = [size](std::optional<int64_t> v, int64_t absent) {
    int64_t x = v ? *v : absent;
    if (x < 0) {
      x += size;
    }
    return std::clamp<int64_t>(x, 0, size);
  };
  const int64_t lo = bound(start, 0);
  const int64_t hi = std::max(lo, bound(end, size));
  check_fits(src, self.slice(d, lo, hi, step), op);
  return self.index_copy(d, arange(lo, hi, step, kInt64), src.to(self.dtype()));
}

Tensor masked_scatter(
    const Tensor& self,
    const Tensor& mask,
    const Tensor& source) {
  const char* op = "masked_scatter";
  check_defined(mask, op);
  check_defined(source, op);
  DITTO_CHECK(
      mask.dtype() == kBool,
      TypeError,
      op,
      "expected a bool mask, got ",
      mask.dtype());
  DITTO_CHECK(
      source.dtype() == self.dtype(),
      TypeError,
      op,
      "expected self and source to have the same dtype, got ",
      self.dtype(),
      " and ",
      source.dtype());
  const Shape shape = broadcast_shapes(self.sizes(), mask.sizes(), op);
  const Tensor m = mask.expand(shape);
  const Tensor flat = m.reshape({-1});
  const int64_t n = sum(flat.to(kInt64)).item<int64_t>();
  DITTO_CHECK(
      source.numel() >= n,
      ValueError,
      op,
      "mask has ",
      n,
      " true positions but source only ",
      source.numel(),
      " elements");
  const Tensor base = self.expand(shape);
  if (n == 0) {
    return base.clone();
  }
  // The k-th true position takes source's k-th element (row-major).
  const Tensor rank = sub(cumsum(flat.to(kInt64), 0), 1);
  const Tensor taken =
      take(source, where(flat, rank, Scalar(0))).reshape(shape);
  return where(m, taken, base);
}

Tensor nonzero(const Tensor& self) {
  const Tensor m = ne(self, 0).contiguous();
  const bool* p = m.data_ptr<bool>();
  const int64_t numel = m.numel();
  const int64_t nd = self.dim();
  const Shape sizes = self.sizes();
  int64_t count = 0;
  for (int64_t i = 0; i < numel; ++i) {
    count += int64_t(p[i]);
  }
  Tensor out = empty({count, nd}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  // Element i's multi-index, advanced as an odometer, written for every
  // element and kept by advancing past it where p[i] (no branch on the
  // mask: a random one mispredicts half of them); past the last row it
  // goes to a scratch row.
  std::vector<int64_t> idx(size_t(nd), 0), scratch(size_t(nd), 0);
  const int64_t* const end = o + count * nd;
  for (int64_t i = 0; i < numel; ++i) {
    int64_t* dst = o < end ? o : scratch.data();
    for (int64_t d = 0; d < nd; ++d) {
      dst[d] = idx[size_t(d)];
    }
    o += nd * int64_t(p[i]);
    for (int64_t d = nd - 1; d >= 0 && ++idx[size_t(d)] == sizes[size_t(d)];
         --d) {
      idx[size_t(d)] = 0;
    }
  }
  return out;
}

Tensor im2col(
    const Tensor& self,
    const IntArg& kernel_size,
    const IntArg& dilation,
    const IntArg& padding,
    const IntArg& stride) {
  const char* op = "im2col";
  const auto [x, batched] = with_batch(self, 4, op);
  const SlidingBlocks g(
      kernel_size, dilation, padding, stride, x.size(2), x.size(3), op);
  const Tensor padded =
      g.p[0] || g.p[1] ? pad(x, {g.p[1], g.p[1], g.p[0], g.p[0]}) : x;
  // One strided view per kernel offset, stacked in torch's column order
  // (channel, then kernel row, then kernel column).
  std::vector<Tensor> patches;
  for (int64_t i = 0; i < g.k[0]; ++i) {
    for (int64_t j = 0; j < g.k[1]; ++j) {
      patches.push_back(strided_blocks(
          strided_blocks(padded, 2, i * g.d[0], g.rows, g.s[0]),
          3,
          j * g.d[1],
          g.cols,
          g.s[1]));
    }
  }
  const int64_t n = x.size(0), c = x.size(1);
  Tensor out =
      stack(patches, 2).reshape({n, c * g.k[0] * g.k[1], g.rows * g.cols});
  return batched ? out : out.squeeze(0);
}

Tensor col2im(
    const Tensor& self,
    const IntArg& output_size,
    const IntArg& kernel_size,
    const IntArg& dilation,
    const IntArg& padding,
    const IntArg& stride) {
  const char* op = "col2im";
  const auto [x, batched] = with_batch(self, 3, op);
  const auto [height, width] = pair_of(output_size, op, "output_size");
  const SlidingBlocks g(
      kernel_size, dilation, padding, stride, height, width, op);
  const int64_t kk = g.k[0] * g.k[1];
  DITTO_CHECK(
      x.size(1) % kk == 0,
      ValueError,
      op,
      "expected size of input's dimension 1 to be divisible by the product "
      "of kernel_size, but got input.size(1)=",
      x.size(1),
      " and kernel_size=(",
      g.k[0],
      ", ",
      g.k[1],
      ")");
  DITTO_CHECK(
      x.size(2) == g.rows * g.cols,
      ValueError,
      op,
      "expected size of input's dimension 2 to match the calculated number "
      "of sliding blocks ",
      g.rows,
      " * ",
      g.cols,
      " = ",
      g.rows * g.cols,
      ", but got input.size(2)=",
      x.size(2));
  const int64_t n = x.size(0), c = x.size(1) / kk;
  const int64_t hp = height + 2 * g.p[0], wp = width + 2 * g.p[1];
  const Tensor cols = x.reshape({n, c, kk, g.rows, g.cols});
  // Each kernel offset's blocks spread to their stride and padded to the
  // image, summed in offset order: every pixel adds its blocks in the
  // order PyTorch's col2im loop visits them.
  Tensor out;
  for (int64_t i = 0; i < g.k[0]; ++i) {
    for (int64_t j = 0; j < g.k[1]; ++j) {
      Tensor patch = cols.select(2, i * g.k[1] + j);
      const int64_t span_h = g.s[0] * (g.rows - 1) + 1;
      const int64_t span_w = g.s[1] * (g.cols - 1) + 1;
      if (g.s[0] > 1 || g.s[1] > 1) {
        Tensor spread = zeros({n, c, span_h, span_w}, patch.dtype());
        spread = ditto::slice_scatter(
            spread,
            ditto::slice_scatter(
                zeros({n, c, g.rows, span_w}, patch.dtype()),
                patch,
                3,
                0,
                std::nullopt,
                g.s[1]),
            2,
            0,
            std::nullopt,
            g.s[0]);
        patch = spread;
      }
      const int64_t r0 = i * g.d[0], c0 = j * g.d[1];
      Tensor placed = pad(patch, {c0, wp - c0 - span_w, r0, hp - r0 - span_h});
      out = out.defined() ? add(out, placed) : placed;
    }
  }
  out = out.narrow(2, g.p[0], height).narrow(3, g.p[1], width);
  return batched ? out : out.squeeze(0);
}

Tensor cdist(
    const Tensor& self,
    const Tensor& x2,
    double p,
    std::optional<int64_t> compute_mode) {
  const char* op = "cdist";
  check_defined(x2, op);
  DITTO_CHECK(
      self.dim() >= 2 && x2.dim() >= 2,
      ValueError,
      op,
      "cdist only supports at least 2D tensors, X1 got: ",
      self.dim(),
      "D, X2 got: ",
      x2.dim(),
      "D");
  DITTO_CHECK(
      self.size(-1) == x2.size(-1),
      ValueError,
      op,
      "X1 and X2 must have the same number of columns. X1: ",
      self.size(-1),
      " X2: ",
      x2.size(-1));
  DITTO_CHECK(
      p >= 0,
      ValueError,
      op,
      "cdist only supports non-negative p values, got ",
      p);
  DITTO_CHECK(
      !compute_mode || (*compute_mode >= 0 && *compute_mode <= 2),
      ValueError,
      op,
      "compute_mode must be 0, 1 or 2, got ",
      *compute_mode);
  const Tensor diff = sub(self.unsqueeze(-2), x2.unsqueeze(-3));
  return norm(diff, p, {-1}, false);
}

Tensor pdist(const Tensor& self, double p) {
  const char* op = "pdist";
  DITTO_CHECK(
      self.dim() == 2,
      ValueError,
      op,
      "pdist only supports 2D tensors, got: ",
      self.dim(),
      "D");
  DITTO_CHECK(
      p >= 0,
      ValueError,
      op,
      "pdist only supports non-negative p values, got ",
      p);
  const int64_t n = self.size(0);
  // n (n - 1) / 2 pairs: past 2^32 rows not even their count fits.
  DITTO_CHECK(
      n < (int64_t(1) << 32),
      OutOfMemoryError,
      op,
      "the distances of ",
      n,
      " rows do not fit in memory");
  const int64_t pairs = n * (n - 1) / 2;
  if (pairs == 0) {
    return empty({0}, self.dtype());
  }
  // The pairs' rows, allocated as tensors (a typed error when too large).
  Tensor first = empty({pairs}, kInt64), second = empty({pairs}, kInt64);
  int64_t* f = first.data_ptr<int64_t>();
  int64_t* g = second.data_ptr<int64_t>();
  for (int64_t i = 0, at = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j, ++at) {
      f[at] = i;
      g[at] = j;
    }
  }
  const Tensor diff =
      sub(index_select(self, 0, first), index_select(self, 0, second));
  return norm(diff, p, {1}, false);
}

} // namespace ditto::detail
