#pragma once

// ditto::linalg's decompositions, linalg::qr, linalg::svd and
// linalg::svd_lowrank, are declared (ditto/ops/composite/decomp.ops.toml,
// declared.h); their bodies are in composite/decomp.cpp.

#include "ditto/ops/declared.h"
#include "ditto/ops/linalg_result.h"
