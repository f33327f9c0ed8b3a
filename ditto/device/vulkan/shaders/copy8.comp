#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#include "common.glsl"
// dst[i] = src[i] over the strided loop, 1-byte elements (bool, uint8):
// each invocation writes whole bytes (8-bit storage, so neighbours never
// race on a shared word).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Dst { uint8_t dst[]; };
layout(set = 0, binding = 2) readonly buffer Src { uint8_t src[]; };
void main() {
  uint n = uint(p[0]);
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    dst[operand_index(i, 0)] = src[operand_index(i, 1)];
  }
}
