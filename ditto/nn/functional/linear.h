#pragma once

// linear as nn::functional names it; the op is declared in
// ditto/ops/linalg/linalg.ops.toml.

#include "ditto/ops/linalg.h"

namespace ditto::nn::functional {

using ::ditto::linear;

} // namespace ditto::nn::functional
