#pragma once

// Internal helpers shared by the scatter/index family (index.cpp,
// advanced_index.cpp, scatter.cpp, counting.cpp).

#include <vector>

#include "ditto/core/tensor.h"

namespace ditto::detail {

// t with dim moved first (a 0-d tensor as shape [1]).
Tensor moved(const Tensor& t, int64_t dim);
// Inverse of moved(): a dim-first tensor back to the original dim order.
Tensor moved_back(const Tensor& t, int64_t ndim, int64_t dim);

// The index as a contiguous int64 tensor whose values are checked against
// size before anything is written (index itself when it already is one and
// needs no wrapping; callers must not write to the result then). With
// allow_negative, values in [-size, 0) are wrapped (as Python indexing
// does) in a fresh copy; otherwise they are out of bounds. The error names
// op, the first bad value, the dim and its size.
Tensor checked_index(
    const Tensor& index,
    int64_t dim,
    int64_t size,
    const char* op,
    bool allow_negative = false);

// Raises TypeError unless index is int64 or int32.
void check_index_dtype(const Tensor& index, const char* op);

// values must have self's dtype (and not bool when accumulating).
void check_same_dtype(
    const Tensor& self,
    const Tensor& values,
    const char* what,
    const char* op,
    bool accumulate);

// A contiguous tensor to update in place of dst: dst itself when it is
// contiguous, a copy otherwise (write_back() copies it back at the end).
Tensor working_copy(const Tensor& dst);
void write_back(const Tensor& dst, const Tensor& work, const char* op);

// src, cloned when it shares memory with self (so updates do not read
// what they wrote).
Tensor unaliased(const Tensor& src, const Tensor& self);

// Offsets (in elements) in t of every position of the dims [first, ndim)
// of t, over the sizes `extent` (row-major), i.e. sum_k pos[k] *
// t.stride(first + k).
std::vector<int64_t> rest_offsets(
    const Tensor& t,
    const Shape& extent,
    size_t first = 1);

} // namespace ditto::detail
