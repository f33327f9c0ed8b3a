#pragma once

#include <vector>

#include "ditto/data/dataset.h"

namespace ditto::data {

// Transforms of a sample's [C, H, W] (or [H, W]) float tensor, as
// torchvision's tensor transforms. The random ones draw from
// data::sample_generator(), never from a generator of their own, so a
// loader decides where their randomness comes from.

// (x - mean[c]) / std[c] per channel, in x's dtype. ValueError if a std is
// 0 or the channel counts differ.
DITTO_API Transform
Normalize(std::vector<double> mean, std::vector<double> std);

// Pads each side of the last two dims with `padding` zeros, then crops a
// size x size window at top = randint(0, H - size + 1), then left =
// randint(0, W - size + 1) (torchvision.transforms.RandomCrop's draws).
DITTO_API Transform RandomCrop(int64_t size, int64_t padding = 0);

// Flips the last dim when rand(1) < p (torchvision's RandomHorizontalFlip).
DITTO_API Transform RandomHorizontalFlip(double p = 0.5);

// The transforms in order.
DITTO_API Transform Compose(std::vector<Transform> transforms);

} // namespace ditto::data
