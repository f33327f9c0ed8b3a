#pragma once

// Sparse COO tensors (docs/sparse.md): a tensor stored as int64 indices
// (sparse_dim, nnz) and values (nnz, dense sizes...), PyTorch's
// torch.sparse_coo layout. The accessors and conversions are Tensor
// methods (ditto/core/tensor.h); the constructors and the products with a
// dense operand are here.

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto {

// sparse_coo_tensor(indices, values[, size]) and sparse_bmm are declared
// (ditto/ops/sparse/sparse.ops.toml, declared.h).
// torch.sparse.mm and torch.sparse.addmm, ditto::sparse::mm and
// ditto::sparse::addmm, are declared (sparse/sparse.ops.toml, declared.h).

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
