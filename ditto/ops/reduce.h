#pragma once

#include <utility>

#include "ditto/core/tensor.h"
#include "ditto/ops/declared.h"

namespace ditto {

// sum, mean, prod, norm, max, min (and their overloads), sum_to_size, all,
// any, argmax and argmin are declared in reduce/reduce.ops.toml (generated
// into declared.h). Reductions combine fixed-size chunks in a fixed order,
// so their bits do not depend on the thread count or the CPU capability.

} // namespace ditto
