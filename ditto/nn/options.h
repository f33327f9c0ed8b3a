#pragma once

// The options macro, DITTO_NN_ARG, lives in ditto/core/options.h (optim
// uses it too).
#include "ditto/core/options.h"
