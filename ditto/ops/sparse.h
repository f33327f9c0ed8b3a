#pragma once

// Sparse COO tensors (docs/sparse.md): a tensor stored as int64 indices
// (sparse_dim, nnz) and values (nnz, dense sizes...), PyTorch's
// torch.sparse_coo layout. The accessors and conversions are Tensor
// methods (ditto/core/tensor.h); the constructors and the products with a
// dense operand are here.

#include "ditto/core/tensor.h"

namespace ditto {

// A sparse tensor of the given size from its entries: indices (integer,
// sparse_dim x nnz, each within size) and values (nnz, then the dense
// sizes). The indices are copied (so checked once); the values are kept.
// Duplicates are allowed (coalesce() sums them). Differentiable in values.
DITTO_API Tensor sparse_coo_tensor(
    const Tensor& indices,
    const Tensor& values,
    const Shape& size);
// The size inferred: each sparse dim one past its largest index, the dense
// sizes from values.
DITTO_API Tensor sparse_coo_tensor(const Tensor& indices, const Tensor& values);

// bmm with a sparse first operand (b, n, k) and a dense second (b, k, m):
// dense (b, n, m). ditto::bmm calls it for a sparse first operand.
DITTO_API Tensor sparse_bmm(const Tensor& sparse, const Tensor& dense);

namespace sparse {

// sparse (n, k) @ dense (k, m) -> dense (n, m) (torch.sparse.mm; ditto::mm
// calls it for a sparse first operand). Each output row is its entries'
// products added in the entries' stored order (Note [Sparse products]);
// the gradient reaches the dense operand and the sparse one's values.
DITTO_API Tensor mm(const Tensor& sparse, const Tensor& dense);
// beta * input + alpha * (mat1 @ mat2) with mat1 sparse (torch.sparse.addmm;
// ditto::addmm calls it for a sparse mat1).
DITTO_API Tensor addmm(
    const Tensor& input,
    const Tensor& mat1,
    const Tensor& mat2,
    const Scalar& beta = 1,
    const Scalar& alpha = 1);

} // namespace sparse

namespace detail {
// The parts of a sparse tensor; TypeError naming op for a strided one.
DITTO_API const SparseParts& sparse_parts(const Tensor& t, const char* op);
// A sparse tensor from parts already checked (no frame, no autograd).
DITTO_API Tensor
make_sparse(Tensor indices, Tensor values, Shape sizes, bool coalesced);
// add(a, b, alpha) and a.add_(b, alpha) when either is sparse: dense +
// sparse (dense), sparse + sparse (the entries of both, uncoalesced).
Tensor sparse_add(const Tensor& a, const Tensor& b, const Scalar& alpha);
Tensor& sparse_add_(Tensor& self, const Tensor& other, const Scalar& alpha);
// zero_ of a sparse tensor: no entries.
Tensor& sparse_zero_(Tensor& self);
// The values of t (dense, or sparse in any order) at the positions of the
// entries indices (sparse_dim x nnz): (nnz, dense sizes...), zero where a
// sparse t has no entry (PyTorch's sparse_mask values).
DITTO_API Tensor
values_at(const Tensor& t, const Tensor& indices, int64_t sparse_dim);
} // namespace detail

} // namespace ditto
