// Shared by ditto's compute shaders (Note [The Vulkan device]).
// Every shader asks for float32 denormals to be kept where the device
// offers it (the build makes a second SPIR-V with DITTO_DENORM_PRESERVE).
#extension GL_EXT_spirv_intrinsics : require
#ifdef DITTO_DENORM_PRESERVE
spirv_execution_mode(capabilities = [4464], 4459, 32);
#endif

// Binding 0: the params, int32 words. For the strided loops:
//   p[0] n, p[1] ndim (<= 8), p[2..9] sizes, then per operand k (0..2)
//   p[10 + 9k] its element offset and p[11 + 9k ..] its strides;
//   p[37] the op, p[38] flags (bit 0: every operand contiguous; bit 1 + k:
//   operand k is the scalar whose bits are p[39 + k]).
layout(set = 0, binding = 0) readonly buffer Params { int p[]; };

const int kOp = 37;
const int kFlags = 38;
const int kScalar = 39;

int operand_index(uint i, int k) {
  int idx = p[10 + 9 * k];
  if ((p[kFlags] & 1) != 0) {
    return idx + int(i);
  }
  uint rem = i;
  for (int d = p[1] - 1; d >= 0; --d) {
    uint s = uint(p[2 + d]);
    idx += int(rem % s) * p[11 + 9 * k + d];
    rem /= s;
  }
  return idx;
}

// Comparisons and selections on float32 bits, in integers: a driver may
// compile a float select such as `x < 0.0 ? 0.0 : x` to a min/max
// instruction that drops NaN and the sign of zero (NVIDIA's does, without
// SignedZeroInfNanPreserve), where the CPU kernels keep both.
bool nan_bits(uint u) {
  return (u & 0x7FFFFFFFu) > 0x7F800000u;
}
// Orders non-NaN floats as `<` does, with -0 equal to +0.
int order_key(uint u) {
  return (u & 0x80000000u) != 0u ? -int(u & 0x7FFFFFFFu) : int(u);
}
// x < 0.0 for the float with bits u (false for NaN and -0).
bool negative_bits(uint u) {
  return u > 0x80000000u && u <= 0xFF800000u;
}
