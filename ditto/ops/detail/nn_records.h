#pragma once

// Internal: what the NN ops' records share (Note [Op records] in
// record.cpp): nondeterministic paths other records hold, and the pooling
// ops' samples.

#include <string>
#include <vector>

#include "ditto/ops/detail/sample_util.h"
#include "ditto/ops/record.h"

namespace ditto::detail {

// The backward paths of pad's reflect and replicate modes.
std::vector<NondeterministicPath> pad_backward_paths();

// The path of a backward that scatters by planes (Note [Plane scatters] in
// scatter_engine.h).
NondeterministicPath plane_path(const char* entry, std::string cost = {});

// An (N, C, H, W) input, a 3-d one, and a single plane (fewer planes than
// threads: the backward's fast variant differs there).
struct PoolInputs {
  Tensor x, x3, plane;
};

PoolInputs pool_inputs(const SampleSpec& spec);
// The calls every pooling op must refuse.
std::vector<Sample> pool_bad_samples(samples::Fn1 fn);

} // namespace ditto::detail
