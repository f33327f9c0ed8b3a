#pragma once

// PyTorch's layers as ditto modules: the same parameter names, shapes,
// default initialization (the same draws, so the same bits after the same
// seed) and printed form. Each has a plain forward method.
//
// One header per family, as LibTorch splits torch/nn/modules/.

#include "ditto/nn/functional.h"
#include "ditto/nn/module.h"
#include "ditto/nn/options.h"
#include "ditto/random/generator.h"

#include "ditto/nn/modules/activation.h"
#include "ditto/nn/modules/attention.h"
#include "ditto/nn/modules/container.h"
#include "ditto/nn/modules/conv.h"
#include "ditto/nn/modules/dropout.h"
#include "ditto/nn/modules/embedding.h"
#include "ditto/nn/modules/linear.h"
#include "ditto/nn/modules/loss.h"
#include "ditto/nn/modules/normalization.h"
#include "ditto/nn/modules/padding.h"
#include "ditto/nn/modules/pooling.h"
#include "ditto/nn/modules/transformer.h"
#include "ditto/nn/modules/upsampling.h"
