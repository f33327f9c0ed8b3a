#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// dst[i] = src[i] over the strided loop, 8-byte elements moved as bits.
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Dst { uvec2 dst[]; };
layout(set = 0, binding = 2) readonly buffer Src { uvec2 src[]; };
void main() {
  uint n = uint(p[0]);
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    dst[operand_index(i, 0)] = src[operand_index(i, 1)];
  }
}
