// The framed views: Tensor's view methods as ops. The stride arithmetic is
// in core (ditto/core/view.h); here each view opens its frame, so the trace
// sees it and autograd records its backward.

#include <numeric>

#include "ditto/core/view.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto {
namespace {

using autograd::GradList;

// A gradient of `sizes` that is zero except where `place` (a view of it
// matching g) receives g.
template <typename Place>
Tensor scatter_into_zeros(const Tensor& g, const Shape& sizes, Place place) {
  Tensor out = zeros(sizes, g.dtype(), g.device());
  place(out).copy_(g);
  return out;
}

} // namespace

Tensor as_strided(
    const Tensor& self,
    const IntArg& sizes,
    const IntArg& strides,
    std::optional<int64_t> storage_offset) {
  detail::OpScope op("as_strided", {self});
  detail::check_defined(self, "as_strided");
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  Tensor out = detail::as_strided_view(self, sizes, strides, offset);
  // The gradient of each storage element is the sum of the gradients of the
  // output elements that read it, summed by index_add_ (whose variant the
  // node's policy picks); the input then reads its own elements back.
  return op.done_view(
      out,
      [sizes = Shape(sizes),
       strides = Shape(strides),
       offset,
       in_sizes = self.sizes(),
       in_strides = self.strides(),
       in_offset = self.storage_offset()](const GradList& g) {
        int64_t extent = offset + 1;
        for (size_t d = 0; d < sizes.size(); ++d) {
          extent += (sizes[d] - 1) * strides[d];
        }
        int64_t in_extent = in_offset + 1;
        for (size_t d = 0; d < in_sizes.size(); ++d) {
          in_extent += (in_sizes[d] - 1) * in_strides[d];
        }
        int64_t n = std::max(extent, in_extent);
        Tensor positions = full(sizes, offset, kInt64);
        for (size_t d = 0; d < sizes.size(); ++d) {
          Shape shape(sizes.size(), 1);
          shape[d] = sizes[d];
          positions = ::ditto::add(
              positions,
              ::ditto::mul(
                  arange(0, sizes[d], 1, kInt64).view(shape), strides[d]));
        }
        Tensor buffer = zeros({n}, g[0].dtype());
        buffer.index_add_(
            0, positions.reshape({-1}), g[0].contiguous().reshape({-1}));
        return GradList{
            detail::as_strided_view(buffer, in_sizes, in_strides, in_offset)};
      });
}

Tensor view(const Tensor& self, const IntArg& size) {
  detail::OpScope op("view", {self});
  Tensor out = detail::shape_view(self, size);
  return op.done_view(out, [in = self.sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor view(const Tensor& self, Dtype d) {
  detail::check_defined(self, "view");
  check_dtype(d, "view");
  if (d == self.dtype()) {
    return self;
  }
  DITTO_CHECK(
      element_size(d) == element_size(self.dtype()),
      ValueError,
      "view",
      "viewing a ",
      self.dtype(),
      " tensor as ",
      d,
      " needs the same element size (",
      element_size(self.dtype()),
      " != ",
      element_size(d),
      ")");
  DITTO_CHECK(
      !self.impl()->is_sparse(),
      ValueError,
      "view",
      "a sparse tensor has no bytes");
  return Tensor(std::make_shared<TensorImpl>(
      self.storage(), self.sizes(), self.strides(), self.storage_offset(), d));
}

Tensor reshape(const Tensor& self, const IntArg& shape) {
  // A view when the strides allow one, else a copy: composite, so the view
  // or the copy records the gradient.
  detail::OpScope op("reshape", {self}, detail::OpScope::kComposite);
  detail::check_defined(self, "reshape");
  Shape sizes = detail::infer_size(shape, self.numel(), "reshape");
  if (detail::try_shape_view(self, sizes)) {
    return op.done(view(self, sizes));
  }
  return op.done(view(self.contiguous(), sizes));
}

Tensor permute(const Tensor& self, const IntArg& dims) {
  detail::OpScope op("permute", {self});
  Tensor out = detail::permute_view(self, dims);
  return op.done_view(out, [dims = IntList(dims)](const GradList& g) {
    const int64_t n = int64_t(dims.size());
    IntList inverse(n);
    for (int64_t i = 0; i < n; ++i) {
      inverse[dims[i] < 0 ? dims[i] + n : dims[i]] = i;
    }
    return GradList{g[0].permute(inverse)};
  });
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  detail::OpScope op("transpose", {self});
  Tensor out = detail::transpose_view(self, dim0, dim1);
  return op.done_view(out, [dim0, dim1](const GradList& g) {
    return GradList{g[0].transpose(dim0, dim1)};
  });
}

Tensor t(const Tensor& self) {
  detail::OpScope op("t", {self});
  detail::check_defined(self, "t");
  DITTO_CHECK(
      self.dim() <= 2,
      ValueError,
      "t",
      "expects a tensor with <= 2 dimensions, but self is ",
      self.dim(),
      "D");
  Tensor out = detail::transpose_view(self, 0, self.dim() < 2 ? 0 : 1);
  return op.done_view(
      out, [](const GradList& g) { return GradList{g[0].t()}; });
}

Tensor narrow(const Tensor& self, int64_t d, int64_t start, int64_t length) {
  detail::OpScope op("narrow", {self});
  Tensor out = detail::narrow_view(self, d, start, length);
  return op.done_view(
      out, [in = self.sizes(), d, start, length](const GradList& g) {
        return GradList{scatter_into_zeros(g[0], in, [&](const Tensor& z) {
          return detail::narrow_view(z, d, start, length);
        })};
      });
}

Tensor select(const Tensor& self, int64_t d, int64_t index) {
  detail::OpScope op("select", {self});
  Tensor out = detail::select_view(self, d, index);
  return op.done_view(out, [in = self.sizes(), d, index](const GradList& g) {
    return GradList{scatter_into_zeros(g[0], in, [&](const Tensor& z) {
      return detail::select_view(z, d, index);
    })};
  });
}

Tensor slice(
    const Tensor& self,
    int64_t d,
    std::optional<int64_t> start_or_none,
    std::optional<int64_t> end_or_none,
    int64_t step) {
  detail::OpScope op("slice", {self});
  const int64_t start = start_or_none.value_or(0);
  const int64_t end = end_or_none.value_or(INT64_MAX);
  Tensor out = detail::slice_view(self, d, start, end, step);
  return op.done_view(
      out, [in = self.sizes(), d, start, end, step](const GradList& g) {
        return GradList{scatter_into_zeros(g[0], in, [&](const Tensor& z) {
          return detail::slice_view(z, d, start, end, step);
        })};
      });
}

Tensor unsqueeze(const Tensor& self, int64_t d) {
  detail::OpScope op("unsqueeze", {self});
  Tensor out = detail::unsqueeze_view(self, d);
  return op.done_view(out, [in = self.sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor squeeze(const Tensor& self) {
  detail::OpScope op("squeeze", {self});
  Tensor out = detail::squeeze_view(self);
  return op.done_view(out, [in = self.sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor squeeze(const Tensor& self, int64_t d) {
  detail::OpScope op("squeeze", {self});
  Tensor out = detail::squeeze_view(self, d);
  return op.done_view(out, [in = self.sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor expand(const Tensor& self, const IntArg& size, bool /*implicit*/) {
  detail::OpScope op("expand", {self});
  Tensor out = detail::expand_view(self, size);
  // The engine sums a gradient back to the input's shape (in a fixed order).
  return op.done_view(out, [](const GradList& g) { return g; });
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  detail::OpScope op("flatten", {self}, detail::OpScope::kComposite);
  detail::check_defined(self, "flatten");
  return op.done(
      reshape(self, detail::flatten_shape(self, start_dim, end_dim)));
}

Tensor view_as(const Tensor& self, const Tensor& other) {
  detail::check_defined(other, "view_as");
  return view(self, other.sizes());
}

Tensor reshape_as(const Tensor& self, const Tensor& other) {
  detail::check_defined(other, "reshape_as");
  return reshape(self, other.sizes());
}

Tensor expand_as(const Tensor& self, const Tensor& other) {
  detail::check_defined(other, "expand_as");
  return expand(self, other.sizes());
}

} // namespace ditto
