#pragma once

// The fused steps of the recurrent layers (ditto/nn/rnn.h), each with its
// backward.

#include "ditto/ops/declared.h"

// ditto::nn::functional's lstm_cell_gates, gru_cell_gates and split_rows
// are declared (ditto/ops/composite/rnn.ops.toml, ditto/ops/declared.h).
