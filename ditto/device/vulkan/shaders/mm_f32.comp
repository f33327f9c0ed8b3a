#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// C (M x N) = A (M x K) B (K x N) in float32, every output the CPU's one
// chain of fused multiply-adds over k in increasing order from 0 (Note
// [GEMM accumulation order] in ditto/kernels/cpu/gemm_kernels.cpp). A
// workgroup of 16 x 16 threads computes a tile of C, each thread T x T
// outputs (rows ty + 16i, columns tx + 16j: neighbouring threads read
// neighbouring shared words); A and B pass through shared memory BK values
// of k at a time. Tiling decides only where a running sum waits, never its
// operations, so both builds give the same bits: T = 4 (64 x 64 tiles), and
// with DITTO_MM_BIG T = 8 (128 x 128 tiles, for large products).
// Params: M N K, then offset and the two strides of A, of B, of C.
//
// FMA: see common.glsl (built twice, the second with DITTO_FMA_EMULATED).
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 1) buffer C { float c_[]; };
layout(set = 0, binding = 2) readonly buffer A { float a_[]; };
layout(set = 0, binding = 3) readonly buffer B { float b_[]; };

#ifdef DITTO_MM_BIG
const int T = 8;
#else
const int T = 4;
#endif
const int BM = 16 * T;
const int BN = 16 * T;
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
  // Loads walk A along k when its rows are contiguous (sAk == 1), along m
  // otherwise, so neighbouring threads read neighbouring addresses.
  const bool a_rows = sAk == 1;
  precise float acc[T][T];
  for (int i = 0; i < T; ++i) {
    for (int j = 0; j < T; ++j) {
      acc[i][j] = 0.0;
    }
  }
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = tid; e < BM * BK; e += 256) {
      int kk = a_rows ? e % BK : e / BM;
      int mm = a_rows ? e / BK : e % BM;
      int m = m0 + mm, k = k0 + kk;
      As[kk][mm] = (m < M && k < K) ? a_[offA + m * sAm + k * sAk] : 0.0;
      int kb = e / BN, nn = e % BN;
      int n = n0 + nn;
      k = k0 + kb;
      Bs[kb][nn] = (n < N && k < K) ? b_[offB + k * sBk + n * sBn] : 0.0;
    }
    barrier();
    const int kn = min(BK, K - k0);
    for (int kk = 0; kk < kn; ++kk) {
      float av[T], bv[T];
      for (int i = 0; i < T; ++i) {
        av[i] = As[kk][ty + 16 * i];
        bv[i] = Bs[kk][tx + 16 * i];
      }
      for (int i = 0; i < T; ++i) {
        for (int j = 0; j < T; ++j) {
          acc[i][j] = FMA(av[i], bv[j], acc[i][j]);
        }
      }
    }
    barrier();
  }
  for (int i = 0; i < T; ++i) {
    int m = m0 + ty + 16 * i;
    for (int j = 0; j < T; ++j) {
      int n = n0 + tx + 16 * j;
      if (m < M && n < N) {
        c_[offC + m * sCm + n * sCn] = acc[i][j];
      }
    }
  }
}
