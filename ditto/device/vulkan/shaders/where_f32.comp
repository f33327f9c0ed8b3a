#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#include "common.glsl"
// out = cond ? a : b for a bool cond and 4-byte a, b (moved as bits);
// a or b may be a scalar (flags bits 2 and 3, as the binary ops).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { uint out_[]; };
layout(set = 0, binding = 2) readonly buffer C { uint8_t c_[]; };
layout(set = 0, binding = 3) readonly buffer A { uint a_[]; };
layout(set = 0, binding = 4) readonly buffer B { uint b_[]; };
void main() {
  uint n = uint(p[0]);
  bool a_scalar = (p[kFlags] & 8) != 0;
  bool b_scalar = (p[kFlags] & 16) != 0;
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    bool c = c_[operand_index(i, 1)] != uint8_t(0);
    uint a = a_scalar ? uint(p[kScalar + 2]) : a_[operand_index(i, 2)];
    uint b = b_scalar ? uint(p[kScalar + 3]) : b_[operand_index(i, 3)];
    out_[operand_index(i, 0)] = c ? a : b;
  }
}
