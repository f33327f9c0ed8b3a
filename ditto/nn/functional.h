#pragma once

// nn::functional: PyTorch's torch.nn.functional for ditto tensors, the one
// home of the NN ops, one header per family in ditto/nn/functional/. Every
// function records its gradient. The names PyTorch also has at top level
// (torch.max_pool2d, torch.batch_norm, ...) are ditto:: too, as
// using-declarations of these.

#include "ditto/nn/functional/activation.h"
#include "ditto/nn/functional/conv.h"
#include "ditto/nn/functional/dropout.h"
#include "ditto/nn/functional/embedding.h"
#include "ditto/nn/functional/linear.h"
#include "ditto/nn/functional/loss.h"
#include "ditto/nn/functional/normalization.h"
#include "ditto/nn/functional/pooling.h"
#include "ditto/nn/functional/rnn.h"
#include "ditto/nn/functional/vision.h"
