#pragma once

#include <utility>

#include "ditto/core/tensor.h"

namespace ditto {

// Reductions combine fixed-size chunks in a fixed order, so their bits do not
// depend on the thread count or the CPU capability. Integer and bool sums
// give int64, as in PyTorch. An empty dims list reduces over every dim.
DITTO_API Tensor sum(const Tensor& a);
DITTO_API Tensor sum(const Tensor& a, const IntArg& dims, bool keepdim = false);
// Sums a (broadcast from shape) back to shape: leading dims, and dims where
// shape has size 1 (torch.Tensor.sum_to_size). a itself when the sizes
// match.
DITTO_API Tensor sum_to_size(const Tensor& a, const Shape& shape);
DITTO_API Tensor mean(const Tensor& a);
DITTO_API Tensor
mean(const Tensor& a, const IntArg& dims, bool keepdim = false);
DITTO_API Tensor prod(const Tensor& a);
DITTO_API Tensor prod(const Tensor& a, int64_t dim, bool keepdim = false);

// The p-norm over dims (every dim when empty): (sum |x|^p)^(1/p) for
// p > 0, max |x| for p = inf, the count of nonzeros for p = 0 (no
// gradient). Floating inputs. The 2-norm's gradient x / norm is 0 where
// the norm is 0, as PyTorch's.
DITTO_API Tensor norm(const Tensor& a, const Scalar& p = 2);
DITTO_API Tensor norm(
    const Tensor& a,
    const Scalar& p,
    const IntArg& dims,
    bool keepdim = false);

// all, any (and their .dim overloads), argmax and argmin are declared in
// reduce/reduce.ops.toml (generated into declared.h).

// Over all elements: the max/min value (NaN propagates).
DITTO_API Tensor max(const Tensor& a);
DITTO_API Tensor min(const Tensor& a);
// Over one dim: values and indices; ties take the first index and a NaN
// wins, as in PyTorch.
DITTO_API std::pair<Tensor, Tensor> max(
    const Tensor& a,
    int64_t dim,
    bool keepdim = false);
DITTO_API std::pair<Tensor, Tensor> min(
    const Tensor& a,
    int64_t dim,
    bool keepdim = false);

} // namespace ditto
