#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// nll_loss in float32 (loss.cpp), input as (N, C, S) and target as (N, S),
// both contiguous, the target int64 read as two words (low first).
// Params: p[0] count = N S, p[1] C, p[2] S, p[3], p[4] ignore_index (low,
// high word), p[5] 1 with class weights, p[6] mode:
//   0: reduction none, out[i] = -(x[n, t_i, s] w[t_i]) (0 where ignored);
//   1: the sum, one invocation: sum[0] = the float64 sum of those terms in
//      order (the CPU's accumulator; the host divides for the mean), terms
//      [p[9], p[10]) per dispatch, carried on in sum[0] from the second
//      (lavapipe stops a shader's loops after 65535 iterations in all);
//   2: the backward, grad_in[n, t_i, s] = -(w[t_i] g) where g is go[i]
//      (reduction none, p[7] 1) or the float32 with bits p[8].
// The weights' product is skipped without weights (x * 1 is x).
#ifdef DITTO_NLL_SUM
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
#endif
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { float out_[]; };
layout(set = 0, binding = 2) readonly buffer X { float x_[]; };
layout(set = 0, binding = 3) readonly buffer T { uint t_[]; };
layout(set = 0, binding = 4) readonly buffer W { float w_[]; };
#ifdef DITTO_NLL_SUM
layout(set = 0, binding = 5) buffer Sum { double sum_[]; };
#endif

bool ignored(uint i) {
  return t_[2u * i] == uint(p[3]) && t_[2u * i + 1u] == uint(p[4]);
}

// The term of element i (its class is in range: the op checked).
float term(uint i) {
  const uint c = t_[2u * i], s = i % uint(p[2]), n = i / uint(p[2]);
  const float x = x_[(n * uint(p[1]) + c) * uint(p[2]) + s];
  if (p[5] == 0) {
    return -x;
  }
  precise float v = x * w_[c];
  return -v;
}

void main() {
  const uint count = uint(p[0]);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef DITTO_NLL_SUM
  if (gl_GlobalInvocationID.x == 0u) {
    precise double acc = p[9] == 0 ? 0.0 : sum_[0];
    for (uint i = uint(p[9]); i < uint(p[10]); ++i) {
      if (!ignored(i)) {
        precise double v = acc + double(term(i));
        acc = v;
      }
    }
    sum_[0] = acc;
  }
#else
  for (uint i = gl_GlobalInvocationID.x; i < count; i += stride) {
    if (p[6] == 0) {
      out_[i] = ignored(i) ? 0.0 : term(i);
    } else if (!ignored(i)) {
      const uint c = t_[2u * i], s = i % uint(p[2]), n = i / uint(p[2]);
      // Reduction none: the grad_out element rides in x_'s binding.
      const float g = p[7] != 0 ? x_[i] : uintBitsToFloat(uint(p[8]));
      float v = g;
      if (p[5] != 0) {
        precise float wv = w_[c] * g;
        v = wv;
      }
      out_[(n * uint(p[1]) + c) * uint(p[2]) + s] = -v;
    }
  }
#endif
}
