#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// out = a op b in float32, each a single correctly rounded IEEE operation
// (Vulkan guarantees it for add, subtract and multiply), so the bits are
// the CPU kernel's; division through float64 (div_exact), in the build
// with DITTO_FLOAT64 (binary_f32_div), for devices with float64. Ops as
// kernels::BinaryOp: 0 add, 1 sub, 2 mul, 3 div, 5 maximum, 6 minimum.
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { float out_[]; };
layout(set = 0, binding = 2) readonly buffer A { float a_[]; };
layout(set = 0, binding = 3) readonly buffer B { float b_[]; };
void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  bool a_scalar = (p[kFlags] & 4) != 0;
  bool b_scalar = (p[kFlags] & 8) != 0;
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    float a = a_scalar ? intBitsToFloat(p[kScalar + 1]) : a_[operand_index(i, 1)];
    float b = b_scalar ? intBitsToFloat(p[kScalar + 2]) : b_[operand_index(i, 2)];
    precise float r;
    if (op == 0) {
      r = a + b;
    } else if (op == 1) {
      r = a - b;
    } else if (op == 2) {
      r = a * b;
#ifdef DITTO_FLOAT64
    } else if (op == 3) {
      r = div_exact(a, b);
#endif
    } else {
      // As the CPU: a if NaN, else b if NaN, else (a > b ? a : b) for
      // maximum, (a < b ? a : b) for minimum; decided on the bits.
      uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
      bool take_a = nan_bits(ua) ||
          (!nan_bits(ub) &&
           (op == 5 ? order_key(ua) > order_key(ub)
                    : order_key(ua) < order_key(ub)));
      r = uintBitsToFloat(take_a ? ua : ub);
    }
    out_[operand_index(i, 0)] = r;
  }
}
