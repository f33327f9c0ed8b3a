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

Tensor Tensor::as_strided(
    const Shape& sizes,
    const Shape& strides,
    int64_t offset) const {
  detail::OpScope op("as_strided", {*this});
  Tensor out = detail::as_strided_view(*this, sizes, strides, offset);
  // The gradient of each storage element is the sum of the gradients of the
  // output elements that read it, summed by index_add_ (whose variant the
  // node's policy picks); the input then reads its own elements back.
  return op.done_view(
      out,
      [sizes,
       strides,
       offset,
       in_sizes = this->sizes(),
       in_strides = this->strides(),
       in_offset = storage_offset()](const GradList& g) {
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

Tensor Tensor::view(const Shape& shape) const {
  detail::OpScope op("view", {*this});
  Tensor out = detail::shape_view(*this, shape);
  return op.done_view(out, [in = sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor Tensor::view(Dtype d) const {
  check_defined("view");
  check_dtype(d, "view");
  if (d == dtype()) {
    return *this;
  }
  DITTO_CHECK(
      ::ditto::element_size(d) == ::ditto::element_size(dtype()),
      ValueError,
      "view",
      "viewing a ",
      dtype(),
      " tensor as ",
      d,
      " needs the same element size (",
      ::ditto::element_size(dtype()),
      " != ",
      ::ditto::element_size(d),
      ")");
  DITTO_CHECK(
      !impl()->is_sparse(), ValueError, "view", "a sparse tensor has no bytes");
  return Tensor(std::make_shared<TensorImpl>(
      storage(), sizes(), strides(), storage_offset(), d));
}

Tensor Tensor::reshape(const Shape& shape) const {
  // A view when the strides allow one, else a copy: composite, so the view
  // or the copy records the gradient.
  detail::OpScope op("reshape", {*this}, detail::OpScope::kComposite);
  check_defined("reshape");
  Shape sizes = detail::infer_size(shape, numel(), "reshape");
  if (detail::try_shape_view(*this, sizes)) {
    return op.done(view(sizes));
  }
  return op.done(contiguous().view(sizes));
}

Tensor Tensor::permute(const IntList& dims) const {
  detail::OpScope op("permute", {*this});
  Tensor out = detail::permute_view(*this, dims);
  return op.done_view(out, [dims](const GradList& g) {
    const int64_t n = int64_t(dims.size());
    IntList inverse(n);
    for (int64_t i = 0; i < n; ++i) {
      inverse[dims[i] < 0 ? dims[i] + n : dims[i]] = i;
    }
    return GradList{g[0].permute(inverse)};
  });
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  detail::OpScope op("transpose", {*this});
  Tensor out = detail::transpose_view(*this, dim0, dim1);
  return op.done_view(out, [dim0, dim1](const GradList& g) {
    return GradList{g[0].transpose(dim0, dim1)};
  });
}

Tensor Tensor::t() const {
  detail::OpScope op("t", {*this});
  check_defined("t");
  DITTO_CHECK(
      dim() <= 2,
      ValueError,
      "t",
      "expects a tensor with <= 2 dimensions, but self is ",
      dim(),
      "D");
  Tensor out = detail::transpose_view(*this, 0, dim() < 2 ? 0 : 1);
  return op.done_view(
      out, [](const GradList& g) { return GradList{g[0].t()}; });
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  detail::OpScope op("narrow", {*this});
  Tensor out = detail::narrow_view(*this, d, start, length);
  return op.done_view(out, [in = sizes(), d, start, length](const GradList& g) {
    return GradList{scatter_into_zeros(g[0], in, [&](const Tensor& z) {
      return detail::narrow_view(z, d, start, length);
    })};
  });
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  detail::OpScope op("select", {*this});
  Tensor out = detail::select_view(*this, d, index);
  return op.done_view(out, [in = sizes(), d, index](const GradList& g) {
    return GradList{scatter_into_zeros(g[0], in, [&](const Tensor& z) {
      return detail::select_view(z, d, index);
    })};
  });
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step)
    const {
  detail::OpScope op("slice", {*this});
  Tensor out = detail::slice_view(*this, d, start, end, step);
  return op.done_view(
      out, [in = sizes(), d, start, end, step](const GradList& g) {
        return GradList{scatter_into_zeros(g[0], in, [&](const Tensor& z) {
          return detail::slice_view(z, d, start, end, step);
        })};
      });
}

Tensor Tensor::unsqueeze(int64_t d) const {
  detail::OpScope op("unsqueeze", {*this});
  Tensor out = detail::unsqueeze_view(*this, d);
  return op.done_view(out, [in = sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor Tensor::squeeze() const {
  detail::OpScope op("squeeze", {*this});
  Tensor out = detail::squeeze_view(*this);
  return op.done_view(out, [in = sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor Tensor::squeeze(int64_t d) const {
  detail::OpScope op("squeeze", {*this});
  Tensor out = detail::squeeze_view(*this, d);
  return op.done_view(out, [in = sizes()](const GradList& g) {
    return GradList{g[0].reshape(in)};
  });
}

Tensor Tensor::expand(const Shape& shape) const {
  detail::OpScope op("expand", {*this});
  Tensor out = detail::expand_view(*this, shape);
  // The engine sums a gradient back to the input's shape (in a fixed order).
  return op.done_view(out, [](const GradList& g) { return g; });
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  detail::OpScope op("flatten", {*this}, detail::OpScope::kComposite);
  check_defined("flatten");
  return op.done(reshape(detail::flatten_shape(*this, start_dim, end_dim)));
}

} // namespace ditto
