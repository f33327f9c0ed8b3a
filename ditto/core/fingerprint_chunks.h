#pragma once

// A fingerprint computed by threads: the xxh3-64 of each chunk of
// kFingerprintChunk values (NaNs canonicalized, logical order), then one
// xxh3-64 over the chunk hashes, the dtype code and the shape. Fixed chunks:
// the same value for any thread count. Not the value of fingerprint(t)
// (whose single stream no thread can share); the trace files use it, where
// hashing every op's outputs on one thread cost a fifth of a training step.

#include <cstdint>

#include "ditto/core/tensor.h"

namespace ditto::detail {

inline constexpr int64_t kFingerprintChunk = int64_t(1) << 16;

uint64_t chunked_fingerprint(const Tensor& t);

} // namespace ditto::detail
