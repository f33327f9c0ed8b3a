#pragma once

// The stride arithmetic of views: each function checks its arguments and
// returns a tensor sharing self's storage. Not ops: they open no frame and
// record nothing. The framed views users call (Tensor::view, permute, ...)
// are in ditto/ops/views.cpp.

#include <optional>

#include "ditto/core/tensor.h"

namespace ditto::detail {

// Resolves one -1 in a requested shape against numel.
Shape infer_size(const Shape& shape, int64_t numel, const char* op);
// self with sizes (no -1), or nothing when the strides do not allow a view.
std::optional<Tensor> try_shape_view(const Tensor& self, const Shape& sizes);
// self with shape (may hold one -1); ValueError when no view is possible.
Tensor shape_view(const Tensor& self, const Shape& shape);
Tensor as_strided_view(
    const Tensor& self,
    const Shape& sizes,
    const Shape& strides,
    int64_t offset);
Tensor permute_view(const Tensor& self, const IntList& dims);
Tensor transpose_view(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor narrow_view(
    const Tensor& self,
    int64_t dim,
    int64_t start,
    int64_t length);
Tensor select_view(const Tensor& self, int64_t dim, int64_t index);
Tensor slice_view(
    const Tensor& self,
    int64_t dim,
    int64_t start,
    int64_t end,
    int64_t step);
Tensor unsqueeze_view(const Tensor& self, int64_t dim);
Tensor squeeze_view(const Tensor& self);
Tensor squeeze_view(const Tensor& self, int64_t dim);
Tensor expand_view(const Tensor& self, const Shape& shape);
// The sizes of self.flatten(start_dim, end_dim).
Shape flatten_shape(const Tensor& self, int64_t start_dim, int64_t end_dim);

} // namespace ditto::detail
