#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// C (M x N) = A (M x K) B (K x N) in float32, every output the CPU's one
// chain of fused multiply-adds over k in increasing order from 0 (Note
// [GEMM accumulation order] in ditto/kernels/cpu/gemm_kernels.cpp). A
// workgroup computes a 64 x 64 tile of C, each of its 256 threads a 4 x 4
// block; A and B pass through shared memory 16 values of k at a time.
// Tiling decides only where a running sum waits, never its operations.
// Params: M N K, then offset and the two strides of A, of B, of C.
//
// FMA: see common.glsl (built twice, the second with DITTO_FMA_EMULATED).
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 1) buffer C { float c_[]; };
layout(set = 0, binding = 2) readonly buffer A { float a_[]; };
layout(set = 0, binding = 3) readonly buffer B { float b_[]; };

const int BM = 64;
const int BN = 64;
const int BK = 16;
shared float As[BK][BM];
shared float Bs[BK][BN];

void main() {
  const int M = p[0], N = p[1], K = p[2];
  const int offA = p[3], sAm = p[4], sAk = p[5];
  const int offB = p[6], sBk = p[7], sBn = p[8];
  const int offC = p[9], sCm = p[10], sCn = p[11];
  const int tx = int(gl_LocalInvocationID.x); // along n
  const int ty = int(gl_LocalInvocationID.y); // along m
  const int tid = ty * 16 + tx;
  const int m0 = int(gl_WorkGroupID.y) * BM;
  const int n0 = int(gl_WorkGroupID.x) * BN;
  precise float acc[4][4];
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      acc[i][j] = 0.0;
    }
  }
  for (int k0 = 0; k0 < K; k0 += BK) {
    // 1024 values of each tile, 4 per thread.
    for (int e = tid; e < BM * BK; e += 256) {
      int kk = e / BM, mm = e % BM;
      int m = m0 + mm, k = k0 + kk;
      As[kk][mm] = (m < M && k < K) ? a_[offA + m * sAm + k * sAk] : 0.0;
      int nn = e % BN;
      int n = n0 + nn;
      Bs[kk][nn] = (n < N && k < K) ? b_[offB + k * sBk + n * sBn] : 0.0;
    }
    barrier();
    const int kn = min(BK, K - k0);
    for (int kk = 0; kk < kn; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) {
        av[i] = As[kk][ty * 4 + i];
        bv[i] = Bs[kk][tx * 4 + i];
      }
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          acc[i][j] = FMA(av[i], bv[j], acc[i][j]);
        }
      }
    }
    barrier();
  }
  for (int i = 0; i < 4; ++i) {
    int m = m0 + ty * 4 + i;
    for (int j = 0; j < 4; ++j) {
      int n = n0 + tx * 4 + j;
      if (m < M && n < N) {
        c_[offC + m * sCm + n * sCn] = acc[i][j];
      }
    }
  }
}
