#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// Rows selected and added by index (ops/index/index.cpp): the operands are rows
// of `len` words (index_select, any 4- or 8-byte dtype) or float32 values
// (index_add_), contiguous from the word offsets p[7] (w, binding 1) and
// p[8] (src, binding 2); the integers (binding 3, int32) are the host's
// checked index, or for the deterministic add its plan. Params: p[0] the
// invocations' count, p[1] len, p[2] the mode:
//   0 index_select: w[i, j] = src[ints[i], j] over (i, j);
//   1 index_add_, deterministic: one invocation per (touched row u, j),
//     row = ints[p[5] + u], adding src[ints[k], j] for k in the row's part
//     [ints[p[6] + u] + p[3], min(ints[p[6] + u + 1], ints[p[6] + u] +
//     p[4])) in order onto w[row, j]: the serial loop's order per element
//     (the CPU's owner-computes variant), in dispatches of a part of each
//     row's updates (lavapipe stops a shader's loops after 65535 iterations);
//   2 index_add_, fast: one invocation per (i, j) adding src[i, j] into
//     w[ints[i], j] with a compare-and-swap loop, in whatever order the
//     invocations get there (the GPU's nondeterminism).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer W { uint w_[]; };
layout(set = 0, binding = 2) readonly buffer Src { uint src_[]; };
layout(set = 0, binding = 3) readonly buffer Ints { int ints_[]; };

void main() {
  const uint count = uint(p[0]), len = uint(p[1]);
  const int mode = p[2];
  const uint wo = uint(p[7]), so = uint(p[8]);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e += stride) {
    const uint i = e / len, j = e % len;
    if (mode == 0) {
      w_[wo + e] = src_[so + uint(ints_[i]) * len + j];
    } else if (mode == 1) {
      const uint at = wo + uint(ints_[p[5] + int(i)]) * len + j;
      const int first = ints_[p[6] + int(i)];
      const int end = min(ints_[p[6] + int(i) + 1], first + p[4]);
      precise float acc = uintBitsToFloat(w_[at]);
      for (int k = first + p[3]; k < end; ++k) {
        precise float v = acc + uintBitsToFloat(src_[so + uint(ints_[k]) * len + j]);
        acc = v;
      }
      w_[at] = floatBitsToUint(acc);
    } else {
      const uint at = wo + uint(ints_[i]) * len + j;
      const float v = uintBitsToFloat(src_[so + e]);
      uint old = w_[at];
      for (;;) {
        precise float sum = uintBitsToFloat(old) + v;
        const uint seen = atomicCompSwap(w_[at], old, floatBitsToUint(sum));
        if (seen == old) {
          break;
        }
        old = seen;
      }
    }
  }
}
