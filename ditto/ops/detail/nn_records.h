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

// The nondeterministic path of max pooling's backward over n = 2 or 3 dims,
// as every record that reaches it declares it (the registry keeps the last
// declaration of a path, and the records register in any order).
NondeterministicPath max_pool_backward_path(int n);

// An (N, C, H, W) input, a 3-d one, and a single plane (fewer planes than
// threads: the backward's fast variant differs there).
struct PoolInputs {
  Tensor x, x3, plane;
};

PoolInputs pool_inputs(const SampleSpec& spec);
// The calls every pooling op must refuse.
std::vector<Sample> pool_bad_samples(samples::Fn1 fn);

// Inputs of the n-d poolings: batched, without a batch, and one plane
// (fewer planes than threads: the backward's fast variant differs there).
struct NdInputs {
  Tensor x, unbatched, plane;
};
NdInputs nd_inputs(const SampleSpec& spec, int n);
// The bad calls of an n-d pooling op: pool_bad_samples' with inputs of its
// rank.
std::vector<Sample> nd_bad_samples(int n, samples::Fn1 fn);

} // namespace ditto::detail
