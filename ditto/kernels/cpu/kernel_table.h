#pragma once

// Internal: the per-capability tables of kernel loops. Not installed.

#include <cstdint>

#include "ditto/core/cpu_capability.h"
#include "ditto/core/dtype.h"

namespace ditto::kernels {

// The binary kernels, declared with the ops (ditto/ops/*.ops.toml: a
// declaration's "kernel = binary Name", or a [[kernel]] entry); the loop of
// Name is the functor NameF in cpu_kernels.cpp.
enum class BinaryOp : int {
#define DITTO_BINARY_KERNEL(Name, name, result, code, f64, divisor) Name,
#include "ditto/kernels/cpu/binary_ops.inc" // generated
#undef DITTO_BINARY_KERNEL
  Count
};

// The unary kernels, declared with the ops (ditto/ops/*.ops.toml: a
// declaration's "kernel = unary Name", or a [[kernel]] entry); the loop of
// Name is the functor NameF in cpu_kernels.cpp.
enum class UnaryOp : int {
#define DITTO_UNARY_KERNEL(Name, name, floating, code, f64, bool_error) Name,
#include "ditto/kernels/cpu/unary_ops.inc" // generated
#undef DITTO_UNARY_KERNEL
  Count
};

// Fused arithmetic with a scalar s, one loop per op (floating types):
//   AddScaled  out = fma(s, b, a)            (add(a, b, alpha=s))
//   Addcmul    out = fma(s*b, c, a)          (s*b rounded, then fused)
//   Addcdiv    out = a + (s*b)/c             (each step rounded)
// the roundings of PyTorch's x86-64 (AVX2) kernels, in every capability.
enum class FusedOp : int { AddScaled, Addcmul, Addcdiv, Count };

// 1-D loops over n elements; strides are in elements and may be 0
// (broadcast). out may alias an input with the same stride.
using BinaryLoop = void (*)(
    int64_t n,
    char* out,
    const char* a,
    const char* b,
    int64_t so,
    int64_t sa,
    int64_t sb);
using UnaryLoop =
    void (*)(int64_t n, char* out, const char* a, int64_t so, int64_t sa);
// clamp: lo and hi point at one value of the dtype, or are null.
using ClampLoop = void (*)(
    int64_t n,
    char* out,
    const char* a,
    int64_t so,
    int64_t sa,
    const void* lo,
    const void* hi);
using WhereLoop = void (*)(
    int64_t n,
    char* out,
    const char* cond,
    const char* a,
    const char* b,
    const int64_t* strides); // out, cond, a, b
// strides: out, a, b, c (c unused by AddScaled); s converted to the dtype.
using FusedLoop = void (*)(
    int64_t n,
    char* out,
    const char* a,
    const char* b,
    const char* c,
    const int64_t* strides,
    double s);
// Reduces n contiguous elements in chunks of kReduceGrain (the last may be
// shorter), one value of the accumulation type per chunk (the dtype itself
// for floating types, int64 for the others) into out[0, ceil(n / grain)).
using ReduceLoop = void (*)(const char* x, int64_t n, void* out);
// Max or min with the index of its first occurrence; a NaN wins.
using ArgReduceLoop =
    void (*)(const char* x, int64_t n, void* value, int64_t* index);

// nblocks blocks of 16 floats: PyTorch's float32 Box-Muller transform.
using NormalBlocksF32 =
    void (*)(float* d, int64_t nblocks, float mean, float std);

// Philox4x32-10 words of blocks first_block .. first_block + nblocks - 1
// (4 words each) under key, into out.
using PhiloxBlocks = void (*)(
    uint32_t key0,
    uint32_t key1,
    uint64_t first_block,
    int64_t nblocks,
    uint32_t* out);

// C = A B for one output tile (gemm_kernels.cpp, Note [GEMM accumulation
// order]): strides in elements; accumulate continues each chain from C's
// value instead of 0.
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const void* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  // When set, row p of B starts at b + b_row_offsets[p] (b_rs unused): B
  // as shifted views of one buffer, e.g. the taps of a padded image
  // (implicit im2col).
  const int64_t* b_row_offsets = nullptr;
  // When set, column j of B starts at b + b_col_offsets[j] (b_cs unused).
  // Not together with b_row_offsets.
  const int64_t* b_col_offsets = nullptr;
  void* c = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  bool accumulate = false;
  // The cache blocking (kernels::Blocking, ditto/kernels/blocking.h): at most
  // kc values of k per packed panel, mc rows of A per packed block. Set by the
  // caller from gemm_blocking(); never part of the result.
  int64_t kc = 0, mc = 0;
};
// Computes rows [i0, i1) x columns [j0, j1) of C.
using GemmTile =
    void (*)(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1);
// The panels of k a product runs in: equal ones of at most kc values (a
// chain continues across panels, so they never change bits).
inline int64_t gemm_panel_depth(int64_t k, int64_t kc) {
  const int64_t most = kc > 0 ? kc : 256;
  const int64_t panels = (k + most - 1) / most;
  return panels > 0 ? (k + panels - 1) / panels : 1;
}
// A stride-1 convolution of one padded image (Note [Direct convolution
// tiles] in gemm_kernels.cpp): out[o][y * ow + x] is the chain over p of
// w(o, p) * x[taps[p] + y * wp + x], the chain of the implicit GEMM
// (Note [Implicit im2col]). The weights come packed in blocks of
// conv_oc_block output channels, [block][p][o % conv_oc_block], zeros past
// oc.
struct ConvDirectArgs {
  int64_t k = 0; // taps
  const int64_t* taps = nullptr;
  const float* x = nullptr; // padded planes
  int64_t oh = 0, ow = 0, wp = 0;
  const float* w = nullptr; // packed weights
  int64_t oc = 0;
  float* out = nullptr; // [oc][oh * ow]
  // When set, the pixels are `pixels` positions at x + pixel_at[i] instead
  // of the oh x ow grid, and out's channel rows are out_rs apart (conv3d's
  // weight gradient: pixels are the weights, taps the output positions).
  const int64_t* pixel_at = nullptr;
  int64_t pixels = 0, out_rs = 0;
  // Continue each chain from out's value instead of 0.
  bool accumulate = false;
};
using ConvDirectF32 = void (*)(const ConvDirectArgs& a);

// A separable resampling (interp_kernels.cpp, Note [PyTorch's
// interpolation bits] in ditto/nn/functional/upsample.cpp): along dim d
// of (D, H, W), output index o reads count[o] cells idx[o * k + j] with
// weights w[o * k + j] (float or double, the call's dtype). A sum starts
// with fma(t0, w0, t1 * w1), or with t0 * w0 where chain is set, and adds
// one fma per further cell; sums nest from D (outer) to W.
struct InterpDim {
  int64_t in = 1, out = 1, k = 1;
  const int64_t* idx = nullptr;
  const void* w = nullptr;
  const int64_t* count = nullptr;
  bool chain = false;
};
struct InterpPlan {
  InterpDim dim[3];
};
// Planes [p0, p1) of in (contiguous planes of in sizes) into out.
using InterpForward = void (*)(
    const InterpPlan& p,
    const void* in,
    void* out,
    int64_t p0,
    int64_t p1);
// The linear backward of one plane: for output positions [k0, k1) (row
// major), each cell of the output's taps gets fma(wd * wh * ww, grad,
// cell), atomically when atomic.
using InterpBackward = void (*)(
    const InterpPlan& p,
    const void* grad_out,
    void* grad_in,
    int64_t k0,
    int64_t k1,
    bool atomic);

struct KernelTable {
  BinaryLoop binary[int(BinaryOp::Count)][kNumAllDtypes] = {};
  UnaryLoop unary[int(UnaryOp::Count)][kNumAllDtypes] = {};
  FusedLoop fused[int(FusedOp::Count)][kNumAllDtypes] = {};
  UnaryLoop cast[kNumAllDtypes][kNumAllDtypes] = {}; // [to][from]
  ClampLoop clamp[kNumAllDtypes] = {};
  WhereLoop where[kNumAllDtypes] = {};
  ReduceLoop sum[kNumAllDtypes] = {};
  ReduceLoop prod[kNumAllDtypes] = {};
  ArgReduceLoop max[kNumAllDtypes] = {};
  ArgReduceLoop min[kNumAllDtypes] = {};
  NormalBlocksF32 normal_blocks_f32 = nullptr;
  PhiloxBlocks philox_blocks = nullptr;
  GemmTile gemm_f32 = nullptr;
  GemmTile gemm_f64 = nullptr;
  // The register tiles' rows and columns (the long tile's), float32 and
  // float64.
  int64_t gemm_mr[2] = {}, gemm_nr[2] = {};
  // Absent (nullptr) where the implicit GEMM is as fast.
  ConvDirectF32 conv_direct_f32 = nullptr;
  int64_t conv_oc_block = 0;
  InterpForward interp_forward[2] = {}; // float32, float64
  InterpBackward interp_backward[2] = {};
};

// The table of the capability in force.
const KernelTable& kernel_table();
const KernelTable& kernel_table(CpuCapability c);

// Number of elements each reduction chunk covers. Part of the definition of
// every reduction's result: changing it changes bits. See Note [Fixed chunks].
inline constexpr int64_t kReduceGrain = 16384;
// Full chunks a reduction kernel advances together (Note [Interleaved
// chunks] in cpu_kernels.cpp); each chunk's result does not depend on it.
inline constexpr int64_t kReduceGroup = 4;
// Smallest chunk of an elementwise loop (chunking does not affect results);
// see elementwise_grain in ditto/ops/detail/op_util.h.
inline constexpr int64_t kElementwiseGrain = 32768;

} // namespace ditto::kernels
