#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// The fused ops with a float scalar s = p[kOpScalar], with the CPU kernels'
// roundings (kernels::FusedOp): 0 AddScaled out = fma(s, y, x) (add(x, y,
// alpha=s)); 1 Addcmul out = fma(s * y rounded, z, x); 2 Addcdiv out = x +
// (s * y rounded) / z rounded (the build with DITTO_FLOAT64: div_exact).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { float out_[]; };
layout(set = 0, binding = 2) readonly buffer X { float x_[]; };
layout(set = 0, binding = 3) readonly buffer Y { float y_[]; };
layout(set = 0, binding = 4) readonly buffer Z { float z_[]; };
void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  float s = intBitsToFloat(p[kOpScalar]);
  int flags = p[kFlags];
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    float x = (flags & 4) != 0 ? intBitsToFloat(p[kScalar + 1])
                               : x_[operand_index(i, 1)];
    float y = (flags & 8) != 0 ? intBitsToFloat(p[kScalar + 2])
                               : y_[operand_index(i, 2)];
    precise float r;
    if (op == 0) {
      r = FMA(s, y, x);
    } else {
      float z = (flags & 16) != 0 ? intBitsToFloat(p[kScalar + 3])
                                  : z_[operand_index(i, 3)];
      precise float sy = s * y;
#ifdef DITTO_FLOAT64
      r = x + div_exact(sy, z);
#else
      r = FMA(sy, z, x);
#endif
    }
    out_[operand_index(i, 0)] = r;
  }
}
