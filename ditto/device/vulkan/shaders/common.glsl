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
