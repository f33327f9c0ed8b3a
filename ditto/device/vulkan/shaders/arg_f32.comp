#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// max/min/argmax/argmin of float32 rows (reduce.cpp's arg_impl), with the
// CPU's chunks: rows of `inner` elements (operand 0's strided loop over
// the permuted view, linear index r * inner + i) cut into chunks of 16384.
// Pass 1 (p[51] = 0), one invocation per (row, chunk): the chunk's first
// NaN, else the first element equal to its extremum, with its index in the
// row, into values[g] and indices[g], g = r * chunks + c. Pass 2 (p[51] =
// 1), one invocation per row: the chunks combined left to right, a later
// one winning only when strictly better (comparisons on the bits,
// common.glsl). Chunks keep every invocation's loops short (lavapipe stops
// a shader's loops after 65535 iterations in all).
// Params: the strided loop of operand 0, p[46] 1 for max, p[48] rows,
// p[49] inner, p[50] chunks per row, p[51] the pass. Indices are int64 as
// two words, low first.
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Values { uint values_[]; };
layout(set = 0, binding = 2) buffer Indices { uint indices_[]; };
// Pass 1: the input. Pass 2: the chunks' values and indices.
layout(set = 0, binding = 3) readonly buffer X { uint x_[]; };
layout(set = 0, binding = 4) readonly buffer PartIdx { uint part_idx_[]; };

const int kChunk = 16384;

bool better(uint cand, uint best, bool is_max) {
  if (nan_bits(best)) {
    return false;
  }
  if (nan_bits(cand)) {
    return true;
  }
  const int kc = order_key(cand), kb = order_key(best);
  return is_max ? kc > kb : kc < kb;
}

void main() {
  const int rows = p[48], inner = p[49], chunks = p[50];
  const bool is_max = p[kOp] != 0;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (p[51] == 0) {
    for (uint g = gl_GlobalInvocationID.x; g < uint(rows * chunks);
         g += stride) {
      const int r = int(g) / chunks, c = int(g) % chunks;
      const int b = c * kChunk, n = min(kChunk, inner - b);
      const uint first = uint(r) * uint(inner) + uint(b);
      uint best = x_[operand_index(first, 0)];
      int best_i = 0;
      for (int i = 1; i < n; ++i) {
        const uint cand = x_[operand_index(first + uint(i), 0)];
        if (better(cand, best, is_max)) {
          best = cand;
          best_i = i;
        }
      }
      values_[g] = best;
      indices_[2u * g] = uint(b + best_i);
      indices_[2u * g + 1u] = 0u;
    }
  } else {
    for (uint r = gl_GlobalInvocationID.x; r < uint(rows); r += stride) {
      const uint base = r * uint(chunks);
      uint best = x_[base];
      uint best_i = part_idx_[2u * base];
      for (uint c = 1u; c < uint(chunks); ++c) {
        if (better(x_[base + c], best, is_max)) {
          best = x_[base + c];
          best_i = part_idx_[2u * (base + c)];
        }
      }
      values_[r] = best;
      indices_[2u * r] = best_i;
      indices_[2u * r + 1u] = 0u;
    }
  }
}
