#pragma once

// linear as nn::functional names it; the op is ditto/ops/linalg.h's.

#include "ditto/ops/linalg.h"

namespace ditto::nn::functional {

using ::ditto::linear;

} // namespace ditto::nn::functional
