#pragma once

// The whole public API of ditto.

#include "ditto/config.h"
#include "ditto/core/cpu_capability.h"
#include "ditto/core/device.h"
#include "ditto/core/dtype.h"
#include "ditto/core/error.h"
#include "ditto/core/parallel.h"
#include "ditto/core/scalar.h"
#include "ditto/core/shape.h"
#include "ditto/core/storage.h"
#include "ditto/core/tensor.h"
#include "ditto/determinism/context.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/random.h"
#include "ditto/ops/reduce.h"
#include "ditto/ops/shape_ops.h"
#include "ditto/random/generator.h"
#include "ditto/random/mt19937.h"
#include "ditto/trace/trace.h"
