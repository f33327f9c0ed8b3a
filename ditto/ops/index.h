#pragma once

#include "ditto/core/tensor.h"

namespace ditto {

// self.index_select(dim, index): rows of self along dim, in index order.
DITTO_API Tensor
index_select(const Tensor& self, int64_t dim, const Tensor& index);

// out[i][j] = self[index[i][j]][j] along dim (torch.gather).
DITTO_API Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);

// self[index[i]] += source[i] along dim. Two variants (see
// docs/determinism.md): with the deterministic mode on, each destination row
// adds its contributions in index order, the same bits for any thread count
// as the serial loop; off, threads add floating values with atomic adds in
// whatever order they finish (faster under contention, not reproducible).
DITTO_API Tensor& index_add_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source);

// self[index[i][j]][j] += src[i][j] along dim (torch.Tensor.scatter_add_);
// the same two variants.
DITTO_API Tensor& scatter_add_(
    Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src);

} // namespace ditto
