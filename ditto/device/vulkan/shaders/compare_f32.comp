#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#include "common.glsl"
// out (bool) = a cmp b for float32 a and b, as the CPU's IEEE comparisons
// (kernels::BinaryOp: 7 eq, 8 ne, 9 lt, 10 le, 11 gt, 12 ge): NaN compares
// unequal to everything, -0 equals +0. Decided on the bits (common.glsl), so
// a driver's relaxed float compares cannot change them.
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { uint8_t out_[]; };
layout(set = 0, binding = 2) readonly buffer A { uint a_[]; };
layout(set = 0, binding = 3) readonly buffer B { uint b_[]; };
void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  bool a_scalar = (p[kFlags] & 4) != 0;
  bool b_scalar = (p[kFlags] & 8) != 0;
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint a = a_scalar ? uint(p[kScalar + 1]) : a_[operand_index(i, 1)];
    uint b = b_scalar ? uint(p[kScalar + 2]) : b_[operand_index(i, 2)];
    bool nan = nan_bits(a) || nan_bits(b);
    int ka = order_key(a), kb = order_key(b);
    bool r;
    if (op == 7) {
      r = !nan && ka == kb;
    } else if (op == 8) {
      r = nan || ka != kb;
    } else if (op == 9) {
      r = !nan && ka < kb;
    } else if (op == 10) {
      r = !nan && ka <= kb;
    } else if (op == 11) {
      r = !nan && ka > kb;
    } else {
      r = !nan && ka >= kb;
    }
    out_[operand_index(i, 0)] = uint8_t(r ? 1 : 0);
  }
}
