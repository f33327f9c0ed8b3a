#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// out = op(x) in float32, the CPU kernels' expressions (kernels::UnaryOp
// numbering: 0 neg, 1 abs, 2 relu... as passed by kernels.cpp).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { uint out_[]; };
layout(set = 0, binding = 2) readonly buffer X { uint x_[]; };
void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    // On the bits (common.glsl): the sign flip of -x, and the CPU's
    // selects, which keep NaN and -0 as the CPU does.
    uint u = x_[operand_index(i, 1)];
    uint r;
    if (op == 0) {
      r = u ^ 0x80000000u;
    } else if (op == 1) {
      // x < 0 ? -x : (x == 0 ? 0 : x)
      r = negative_bits(u) ? (u & 0x7FFFFFFFu)
                           : (u == 0x80000000u ? 0u : u);
    } else {
      // x < 0 ? 0 : x
      r = negative_bits(u) ? 0u : u;
    }
    out_[operand_index(i, 0)] = r;
  }
}
