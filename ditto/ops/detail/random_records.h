#pragma once

// Internal: what the random ops' records share (Note [Op records] in
// record.cpp).

namespace ditto::detail {

inline const char* kStream =
    "PyTorch's mt19937 stream consumed in a fixed order, or Philox keyed by "
    "element index: the same numbers for any thread count";
inline const char* kDraw = "a random draw";

} // namespace ditto::detail
