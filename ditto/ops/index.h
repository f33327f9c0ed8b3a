#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ditto/core/scalar.h"
#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h" // index_select, gather, take, masked_select

namespace ditto {

// The scatter/index family. Ops that combine several values into one
// destination have two variants (docs/determinism.md): with the
// deterministic mode on, every destination receives its values in index
// order, the bits of the serial loop for any thread count; with it off,
// threads combine values in whatever order they get there (faster under
// some loads, not reproducible for floating types; integer sums, products
// and extrema are exact either way). Ops where duplicate indices pick a
// winner (index_copy_, scatter_ with a tensor src, index_put_ and put_
// without accumulate) keep the last occurrence in index order in the
// deterministic variant. Indices are validated before anything is written:
// after an error, self is unchanged. The in-place members of the family are
// Tensor methods (ditto/core/tensor.h): t.index_add_(0, idx, src).

// index_select, gather, take and masked_select are declared in
// index/index.ops.toml (generated into declared.h).

// index and index_put (torch's advanced indexing, self[indices] and
// self[indices] = values) are declared in index/index.ops.toml.

// bincount and histc are declared in reduce/reduce.ops.toml (declared.h).

// embedding_bag is declared (index/index.ops.toml, declared.h).

} // namespace ditto
