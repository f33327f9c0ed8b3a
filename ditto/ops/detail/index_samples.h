#pragma once

// Internal: what the records of the index, scatter and counting ops share
// (Note [Op records] in record.cpp).

#include <functional>
#include <vector>

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/record.h"

namespace ditto::detail::samples {

// The index ops' records: what the deterministic variant of the scatters
// does (Note [Owner computes] in scatter_engine.h).
inline const char* kOwnerComputes =
    "under the deterministic mode, updates are grouped by fixed destination "
    "blocks and each block applies its updates in index order: the serial "
    "loop's bits at any thread count";

inline const char* kGather =
    "a gather: every output element is copied once from its source";

// n distinct indices in [0, mod) (n <= mod), scrambled: for the ops where
// the last write wins, whose fast variant differs with duplicates.
Tensor distinct(int64_t n, int64_t mod, uint64_t seed = 0);

// Values of dtype dt (integers wide enough not to be all zero).
Tensor values(const Shape& shape, Dtype dt, uint64_t seed);

// A call that runs fn on self (inputs[0]) and returns it.
Call inplace(std::function<void(Tensor&, const std::vector<Tensor>&)> fn);

// The samples of an out-of-place form, from its samples over the
// in-place op's inputs: the form's frame is given self alone, so the other
// tensors become constants of the call.
std::vector<Sample> out_of_place(std::vector<Sample> samples);

} // namespace ditto::detail::samples
