#pragma once

// Internal: the NN ops' nondeterministic paths that other records share
// (Note [Op records] in record.cpp).

#include <vector>

#include "ditto/ops/record.h"

namespace ditto::detail {

// The backward paths of pad's reflect and replicate modes.
std::vector<NondeterministicPath> pad_backward_paths();

} // namespace ditto::detail
