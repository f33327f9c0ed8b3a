#pragma once

// LibTorch's at::Reduction (ATen/core/Reduction.h): the reductions as the
// ints the losses' ATen forms take, torch::mse_loss(x, y,
// torch::Reduction::Sum); torch's schemas write the default as
// `int reduction=Mean`. nn::functional's losses take their own enum class
// (nn/functional/loss.h).

namespace ditto::Reduction {
enum Reduction { None, Mean, Sum, END };
} // namespace ditto::Reduction
