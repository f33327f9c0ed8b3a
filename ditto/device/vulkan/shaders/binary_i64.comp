#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"
// out = a op b on int64, as the CPU's kernels: add, subtract and multiply
// wrap in two's complement, maximum and minimum compare signed. Ops as
// kernels::BinaryOp: 0 add, 1 sub, 2 mul, 5 maximum, 6 minimum. Elements
// are pairs of 32-bit words (low first); a scalar operand k's low word is
// p[kScalar + k], its high word p[kOpScalar].
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { uint out_[]; };
layout(set = 0, binding = 2) readonly buffer A { uint a_[]; };
layout(set = 0, binding = 3) readonly buffer B { uint b_[]; };

int64_t scalar_value(int k) {
  return int64_t(uint64_t(uint(p[kScalar + k])) |
                 (uint64_t(uint(p[kOpScalar])) << 32));
}

void main() {
  uint n = uint(p[0]);
  int op = p[kOp];
  bool a_scalar = (p[kFlags] & 4) != 0;
  bool b_scalar = (p[kFlags] & 8) != 0;
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    int ea = 2 * operand_index(i, 1);
    int eb = 2 * operand_index(i, 2);
    int64_t a = a_scalar
        ? scalar_value(1)
        : int64_t(uint64_t(a_[ea]) | (uint64_t(a_[ea + 1]) << 32));
    int64_t b = b_scalar
        ? scalar_value(2)
        : int64_t(uint64_t(b_[eb]) | (uint64_t(b_[eb + 1]) << 32));
    uint64_t r;
    if (op == 0) {
      r = uint64_t(a) + uint64_t(b);
    } else if (op == 1) {
      r = uint64_t(a) - uint64_t(b);
    } else if (op == 2) {
      r = uint64_t(a) * uint64_t(b);
    } else if (op == 5) {
      r = uint64_t(a > b ? a : b);
    } else {
      r = uint64_t(a < b ? a : b);
    }
    int e = 2 * operand_index(i, 0);
    out_[e] = uint(r & 0xFFFFFFFFul);
    out_[e + 1] = uint(r >> 32);
  }
}
