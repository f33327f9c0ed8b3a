#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// out = op(x) in float32, the CPU kernels' expressions (kernels::UnaryOp
// numbering: 0 neg, 1 abs, 2 relu... as passed by kernels.cpp).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { float out_[]; };
layout(set = 0, binding = 2) readonly buffer X { float x_[]; };
void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    float x = x_[operand_index(i, 1)];
    precise float r;
    if (op == 0) {
      r = -x;
    } else if (op == 1) {
      r = x < 0.0 ? -x : (x == 0.0 ? 0.0 : x);
    } else {
      r = x < 0.0 ? 0.0 : x;
    }
    out_[operand_index(i, 0)] = r;
  }
}
