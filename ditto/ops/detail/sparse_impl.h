#pragma once

// What sparse.cpp (construction, coalesce, conversions) and
// sparse_arith.cpp (sums and products) share: a sparse tensor's parts, checked
// at use (Note [Sparse parts checked at use]) and coalesced. Internal.

#include <cstdint>
#include <type_traits>
#include <vector>

#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/sparse.h"

namespace ditto::sparse_impl {

using detail::make_sparse;
using detail::require_strided;
using detail::shares_storage;
using detail::sparse_parts;

// The stored entries' count and the sparse dims of p.
int64_t nnz_of(const SparseParts& p);
int64_t sparse_dim_of(const SparseParts& p);
// t's parts, checked against t (Note [Sparse parts checked at use]).
const SparseParts& checked_parts(const Tensor& t, const char* op);
// The coalesced parts of p: entries sorted by position, duplicates summed
// in stored order; slot (if given) receives each input entry's output entry.
SparseParts coalesced_parts(
    const SparseParts& p,
    const Shape& sizes,
    std::vector<int64_t>* slot,
    const char* op);
// The coalesced parts of a sparse tensor (its own when already coalesced).
SparseParts coalesced(const Tensor& t, const char* op);
// Each entry's flat position in a tensor of sizes (row-major over the
// sparse dims); IndexError naming op for an index outside its dim.
std::vector<int64_t> positions(
    const Tensor& indices,
    const Shape& sizes,
    const char* op);
// Elements per entry: the product of the dense sizes.
int64_t row_len_of(const Tensor& values);
// Rows rows[e] of x (contiguous, len elements a row) as a new tensor of
// sizes.
Tensor gather_rows(
    const Tensor& x,
    const std::vector<int64_t>& rows,
    int64_t len,
    const Shape& sizes);
// dense += alpha * each stored entry of p, in stored order per position,
// on any number of threads (Note [Owner computes]).
void add_entries_into(
    Tensor& dense,
    const SparseParts& p,
    const Scalar& alpha,
    const char* op);

// out[0, n) = fma(s, in[0, n), out): the elementwise kernel of add(a, b,
// alpha) for floating types (one rounding per element, as PyTorch's axpy),
// a plain sum for the others.
template <typename T>
void axpy_row(T* out, const T* in, int64_t n, T s) {
  if constexpr (std::is_floating_point_v<T>) {
    static const int64_t strides[4] = {1, 1, 1, 0};
    kernels::kernel_table()
        .fused[int(kernels::FusedOp::AddScaled)][dtype_index(dtype_of<T>)](
            n,
            reinterpret_cast<char*>(out),
            reinterpret_cast<const char*>(out),
            reinterpret_cast<const char*>(in),
            nullptr,
            strides,
            double(s));
  } else {
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_same_v<T, bool>) {
        out[j] = out[j] || (s && in[j]);
      } else {
        out[j] = T(out[j] + T(s * in[j]));
      }
    }
  }
}

} // namespace ditto::sparse_impl
