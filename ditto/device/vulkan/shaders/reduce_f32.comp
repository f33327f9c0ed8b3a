#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// sum and mean in float32 with the CPU's arithmetic (reduce.cpp,
// Note [Fixed chunks] and lane_reduce in cpu_kernels.cpp): the input is
// rows of `inner` elements (operand 0's strided loop over the permuted
// view, linear index r * inner + i); each row is cut into chunks of 16384;
// in a chunk, lane j (of 16) adds elements j, j + 16, ... of each block of
// 256 in that order from 0, adds its block sums in a pairwise tree
// (Note [Blocked sums]), and the lanes combine in the tree 8, 4, 2, 1. Built twice:
// pass 1 (one workgroup of 16 per chunk) writes each chunk's partial; with
// DITTO_REDUCE_COMBINE, pass 2 (one invocation per row) adds a row's
// partials in reduce.cpp's tree_combine order and, for mean, divides by
// inner with div_exact.
// Params: the strided loop of operand 0, then p[48] rows, p[49] inner,
// p[50] chunks per row, p[51] 1 for mean.
#ifdef DITTO_REDUCE_COMBINE
layout(local_size_x = 256) in;
#else
layout(local_size_x = 16) in;
shared float lanes[16];
#endif
#ifdef DITTO_REDUCE_COMBINE
layout(set = 0, binding = 1) buffer Out { float out_[]; };
layout(set = 0, binding = 2) buffer Partials { float partial[]; };
#else
layout(set = 0, binding = 1) buffer Partials { float partial[]; };
layout(set = 0, binding = 2) readonly buffer X { float x_[]; };
#endif

const int kChunk = 16384;

void main() {
  const int rows = p[48], inner = p[49], chunks = p[50];
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef DITTO_REDUCE_COMBINE
  for (uint r = gl_GlobalInvocationID.x; r < uint(rows); r += stride) {
    const int base = int(r) * chunks;
    precise float total = 0.0;
    if (chunks > 0) {
      for (int s = 1; s < chunks; s *= 2) {
        for (int i = 0; i + s < chunks; i += 2 * s) {
          precise float v = partial[base + i] + partial[base + i + s];
          partial[base + i] = v;
        }
      }
      total = partial[base];
    }
    out_[r] = p[51] != 0 ? div_exact(total, float(inner)) : total;
  }
#else
  // One workgroup of 16 per chunk, invocation j its lane j (scalar chains:
  // no lane array indexed at run time), the lanes combined through shared
  // memory by invocation 0.
  const uint j = gl_LocalInvocationID.x;
  for (uint g = gl_WorkGroupID.x; g < uint(rows * chunks);
       g += gl_NumWorkGroups.x) {
    const int r = int(g) / chunks, c = int(g) % chunks;
    const int b = c * kChunk;
    const int n = min(kChunk, inner - b);
    const uint first = uint(r) * uint(inner) + uint(b);
    // Note [Blocked sums]: the lane's 16 elements of each block of 256
    // summed from 0, the block sums added in a pairwise tree.
    float blk[64];
    const int nb = (n + 255) / 256;
    for (int b = 0; b < nb; ++b) {
      precise float acc = 0.0;
      const int end = min(n, (b + 1) * 256);
      for (int t = b * 256 + int(j); t < end; t += 16) {
        precise float v = acc + x_[operand_index(first + uint(t), 0)];
        acc = v;
      }
      blk[b] = acc;
    }
    for (int s = 1; s < nb; s *= 2) {
      for (int b = 0; b + s < nb; b += 2 * s) {
        precise float v = blk[b] + blk[b + s];
        blk[b] = v;
      }
    }
    lanes[j] = blk[0];
    barrier();
    if (j == 0u) {
      float l[16];
      for (int i = 0; i < 16; ++i) {
        l[i] = lanes[i];
      }
      for (int w = 8; w >= 1; w /= 2) {
        for (int i = 0; i < w; ++i) {
          precise float v = l[i] + l[i + w];
          l[i] = v;
        }
      }
      partial[g] = l[0];
    }
    barrier();
  }
#endif
}
