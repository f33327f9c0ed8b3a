// The matrix multiply kernels, compiled once per CPU capability like
// cpu_kernels.cpp. See Note [GEMM accumulation order].
//
// Note [GEMM accumulation order]
// Every output element is one chain of fused multiply-adds over k in
// increasing order, starting from 0 (or from the value already in C when
// the caller continues a chain):
//   c = fma(a[i][0], b[0][j], 0); c = fma(a[i][1], b[1][j], c); ...
// Blocking (panels of KC values of k, register tiles of MR x NR outputs)
// only decides when the running value sits in a register and when in C:
// storing a float and loading it back is exact, so the chain, and its bits,
// are the same for any block sizes. The AVX-512, AVX2 and scalar variants
// differ in MR and NR and in how many chains advance at once, never in the
// operations of one chain (the scalar one calls std::fma, correctly rounded
// like the vector FMA instructions). Threads take whole output tiles, so the
// thread count does not enter either.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

// Vector register tiles: AVX2 and AVX-512 on x86-64, NEON on aarch64 (the
// neon unit defines DITTO_KERNEL_NEON; the scalar unit there has NEON too
// but stays the one-fma-at-a-time reference).
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#define DITTO_GEMM_SIMD 1
#elif defined(DITTO_KERNEL_NEON)
#include <arm_neon.h>
#define DITTO_GEMM_SIMD 1
#else
#define DITTO_GEMM_SIMD 0
#endif

#include "ditto/kernels/cpu/kernel_table.h"

#ifndef DITTO_KERNEL_NS
#error "DITTO_KERNEL_NS must name the capability this file is compiled for"
#endif

namespace ditto::kernels::DITTO_KERNEL_NS {
namespace {

// ---- register tiles: Micro<T, MR>::MR rows x Micro<T, MR>::NR columns of C.

// Where a register tile reads its NR values of B for step p: a packed
// sliver, or rows of a buffer at given offsets (GemmArgs::b_row_offsets,
// read in place).
template <typename T, int64_t NR>
struct PackedB {
  const T* b;
  const T* row(int64_t p) const {
    return b + p * NR;
  }
};
template <typename T>
struct OffsetB {
  const T* b;
  const int64_t* offsets;
  const T* row(int64_t p) const {
    return b + offsets[p];
  }
};

#if DITTO_GEMM_SIMD

// One SIMD register of T, per capability.
template <typename T>
struct Vec;

#if defined(__AVX512F__)
// Note [Butterfly transpose]
// A W x W block in W registers is transposed by log2(W) stages; the stage
// of half-width b swaps, inside every 2b x 2b block, the top-right b x b
// block with the bottom-left one: row i (i & b == 0) takes row i + b's
// lanes c - b in its lanes c with c & b, and row i + b takes row i's lanes
// c + b in its lanes c without. One two-source permute per row and stage.
// The permute indices of one stage: lanes of x are 0..W-1, of y W..2W-1.
template <int W, typename I>
struct ButterflyIndex {
  alignas(64) I lo[W], hi[W];
  constexpr explicit ButterflyIndex(int b) : lo{}, hi{} {
    for (int c = 0; c < W; ++c) {
      lo[c] = I((c & b) ? W + c - b : c);
      hi[c] = I((c & b) ? W + c : c + b);
    }
  }
};

template <int W, int B, typename V, typename Permute>
[[gnu::always_inline]] inline void butterfly_stage(V* r, Permute permute) {
  using I = std::conditional_t<W == 16, int32_t, int64_t>;
  static constexpr ButterflyIndex<W, I> kIdx(B);
  const __m512i il = _mm512_load_si512(kIdx.lo);
  const __m512i ih = _mm512_load_si512(kIdx.hi);
#pragma GCC unroll 16
  for (int i = 0; i < W; ++i) {
    if ((i & B) == 0) {
      const V x = r[i], y = r[i + B];
      r[i] = permute(x, il, y);
      r[i + B] = permute(x, ih, y);
    }
  }
}

template <int W, typename V, typename Permute>
[[gnu::always_inline]] inline void butterfly(V* r, Permute permute) {
  if constexpr (W == 16) {
    butterfly_stage<W, 8>(r, permute);
  }
  butterfly_stage<W, 4>(r, permute);
  butterfly_stage<W, 2>(r, permute);
  butterfly_stage<W, 1>(r, permute);
}

template <>
struct Vec<float> {
  using V = __m512;
  static constexpr int64_t W = 16;
  static V zero() {
    return _mm512_setzero_ps();
  }
  static V load(const float* p) {
    return _mm512_loadu_ps(p);
  }
  static void store(float* p, V v) {
    _mm512_storeu_ps(p, v);
  }
  static V broadcast(const float* p) {
    return _mm512_set1_ps(*p);
  }
  static V fma(V a, V b, V c) {
    return _mm512_fmadd_ps(a, b, c);
  }
  static void store_first(float* p, V v, int64_t n) {
    _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1), v);
  }
  // Transposes the 16 x 16 block r[row][lane] in place (Note [Butterfly
  // transpose]).
  static constexpr bool kTranspose = true;
  [[gnu::always_inline]] static void transpose(V* r) {
    butterfly<16>(
        r, [](V x, __m512i i, V y) { return _mm512_permutex2var_ps(x, i, y); });
  }
};
template <>
struct Vec<double> {
  using V = __m512d;
  static constexpr int64_t W = 8;
  static V zero() {
    return _mm512_setzero_pd();
  }
  static V load(const double* p) {
    return _mm512_loadu_pd(p);
  }
  static void store(double* p, V v) {
    _mm512_storeu_pd(p, v);
  }
  static V broadcast(const double* p) {
    return _mm512_set1_pd(*p);
  }
  static V fma(V a, V b, V c) {
    return _mm512_fmadd_pd(a, b, c);
  }
  static void store_first(double* p, V v, int64_t n) {
    _mm512_mask_storeu_pd(p, __mmask8((1u << n) - 1), v);
  }
  static constexpr bool kTranspose = true;
  [[gnu::always_inline]] static void transpose(V* r) {
    butterfly<8>(
        r, [](V x, __m512i i, V y) { return _mm512_permutex2var_pd(x, i, y); });
  }
};
// Register tiles: 12 x 32 float32 (24 accumulators), 8 x 16 float64; the
// shorter ones (8 and 4 rows) for row counts the long ones would pad.
constexpr int64_t kRowsF32 = 12, kRowsF64 = 8;
constexpr int64_t kShortRowsF32 = 8, kShortRowsF64 = 4;
#elif defined(__AVX2__)
template <>
struct Vec<float> {
  using V = __m256;
  static constexpr int64_t W = 8;
  static V zero() {
    return _mm256_setzero_ps();
  }
  static V load(const float* p) {
    return _mm256_loadu_ps(p);
  }
  static void store(float* p, V v) {
    _mm256_storeu_ps(p, v);
  }
  static V broadcast(const float* p) {
    return _mm256_broadcast_ss(p);
  }
  static V fma(V a, V b, V c) {
    return _mm256_fmadd_ps(a, b, c);
  }
  // Stores lanes below n < 8: plain 16-, 8- and 4-byte stores (a masked
  // store, vmaskmovps, is slow on AMD CPUs).
  static void store_first(float* p, V v, int64_t n) {
    __m128 part = _mm256_castps256_ps128(v);
    if (n >= 4) {
      _mm_storeu_ps(p, part);
      part = _mm256_extractf128_ps(v, 1);
      p += 4;
      n -= 4;
    }
    if (n >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
      part = _mm_movehl_ps(part, part);
      p += 2;
      n -= 2;
    }
    if (n >= 1) {
      _mm_store_ss(p, part);
    }
  }
  // Transposes the 8 x 8 block r[row][lane] in place: pairs of rows
  // interleaved, then pairs of pairs, then the 128-bit halves swapped.
  static constexpr bool kTranspose = true;
  [[gnu::always_inline]] static void transpose(V* r) {
    V t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
      u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
      u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
      u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
      r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
      r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
  }
};
template <>
struct Vec<double> {
  using V = __m256d;
  static constexpr int64_t W = 4;
  static V zero() {
    return _mm256_setzero_pd();
  }
  static V load(const double* p) {
    return _mm256_loadu_pd(p);
  }
  static void store(double* p, V v) {
    _mm256_storeu_pd(p, v);
  }
  static V broadcast(const double* p) {
    return _mm256_broadcast_sd(p);
  }
  static V fma(V a, V b, V c) {
    return _mm256_fmadd_pd(a, b, c);
  }
  static void store_first(double* p, V v, int64_t n) { // n < 4
    __m128d part = _mm256_castpd256_pd128(v);
    if (n >= 2) {
      _mm_storeu_pd(p, part);
      part = _mm256_extractf128_pd(v, 1);
      p += 2;
      n -= 2;
    }
    if (n >= 1) {
      _mm_store_sd(p, part);
    }
  }
  // Transposes the 4 x 4 block: pairs of rows interleaved, then the
  // 128-bit halves swapped.
  static constexpr bool kTranspose = true;
  [[gnu::always_inline]] static void transpose(V* r) {
    const V t0 = _mm256_unpacklo_pd(r[0], r[1]);
    const V t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const V t2 = _mm256_unpacklo_pd(r[2], r[3]);
    const V t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
  }
};
// Register tiles: 6 x 16 float32, 6 x 8 float64 (12 accumulators), and
// 4-row ones.
constexpr int64_t kRowsF32 = 6, kRowsF64 = 6;
constexpr int64_t kShortRowsF32 = 4, kShortRowsF64 = 4;
#else
// NEON: 128-bit registers; vfmaq is the fused multiply-add of the chain.
template <>
struct Vec<float> {
  using V = float32x4_t;
  static constexpr int64_t W = 4;
  static V zero() {
    return vdupq_n_f32(0.0f);
  }
  static V load(const float* p) {
    return vld1q_f32(p);
  }
  static void store(float* p, V v) {
    vst1q_f32(p, v);
  }
  static V broadcast(const float* p) {
    return vld1q_dup_f32(p);
  }
  static V fma(V a, V b, V c) {
    return vfmaq_f32(c, a, b);
  }
  static constexpr bool kTranspose = false;
  static void store_first(float*, V, int64_t) {}
  static void transpose(V*) {}
};
template <>
struct Vec<double> {
  using V = float64x2_t;
  static constexpr int64_t W = 2;
  static V zero() {
    return vdupq_n_f64(0.0);
  }
  static V load(const double* p) {
    return vld1q_f64(p);
  }
  static void store(double* p, V v) {
    vst1q_f64(p, v);
  }
  static V broadcast(const double* p) {
    return vld1q_dup_f64(p);
  }
  static V fma(V a, V b, V c) {
    return vfmaq_f64(c, a, b);
  }
  static constexpr bool kTranspose = false;
  static void store_first(double*, V, int64_t) {}
  static void transpose(V*) {}
};
// Register tiles: 8 x 8 float32, 8 x 4 float64 (16 of the 32 registers
// accumulate), and 4-row ones.
constexpr int64_t kRowsF32 = 8, kRowsF64 = 8;
constexpr int64_t kShortRowsF32 = 4, kShortRowsF64 = 4;
#endif

template <typename T>
constexpr int64_t kRows = std::is_same_v<T, float> ? kRowsF32 : kRowsF64;
template <typename T>
constexpr int64_t kShortRows =
    std::is_same_v<T, float> ? kShortRowsF32 : kShortRowsF64;

// Note [Fetching the next tile of C]
// A register tile starts its chains from C (every panel of k after the
// first), and C does not stay in cache between panels (2048^2 float32 is
// 16 MiB): the tile's first fmas wait for its rows. So while one tile
// computes, it prefetches the rows of the tile its caller runs next (the
// one below, or the first of the next sliver), a row per step of k, with
// write intent (the tile is stored at the end). Loads and stores of C are
// what they were: no bit changes. Measured on Zen 5, mm 2048 float32, 1
// thread, AVX-512, five alternating rounds: 2% faster (best 89.9 against
// 92.4 ms); 1024: within the noise.

// MR rows x two registers of columns of C (row stride ldc), advanced by kc
// steps of packed a (MR per step) and of b (NR per step, from its source):
// one fma per output and step, the chains of Note [GEMM accumulation order].
template <typename T, int64_t Rows = kRows<T>>
struct Micro {
  using X = Vec<T>;
  static constexpr int64_t MR = Rows;
  static constexpr int64_t NR = 2 * X::W;
  // Half: only the first NR / 2 columns (a narrow last sliver). Used: only
  // the first Used rows of the MR-row packed sliver (a short last one).
  // next: the C tile the caller runs after this one (same ldc), fetched
  // into the cache a row per step while this one computes (Note [Fetching
  // the next tile of C]); nullptr for none.
  template <bool Half = false, int64_t Used = MR, typename B>
  static void run(
      int64_t kc,
      const T* a,
      B b,
      T* c,
      int64_t ldc,
      bool first,
      const T* next = nullptr) {
    constexpr int64_t kCols = Half ? X::W : 2 * X::W;
    typename X::V acc[Used][2];
    for (int64_t r = 0; r < Used; ++r) {
      acc[r][0] = first ? X::zero() : X::load(c + r * ldc);
      if constexpr (!Half) {
        acc[r][1] = first ? X::zero() : X::load(c + r * ldc + X::W);
      }
    }
    for (int64_t p = 0; p < kc; ++p) {
      if (next != nullptr && p < Used) {
        __builtin_prefetch(next + p * ldc, 1, 3);
        __builtin_prefetch(next + p * ldc + kCols - 1, 1, 3);
      }
      const T* bp = b.row(p);
      const typename X::V b0 = X::load(bp);
      const T* ap = a + p * MR;
      if constexpr (Half) {
        for (int64_t r = 0; r < Used; ++r) {
          acc[r][0] = X::fma(X::broadcast(ap + r), b0, acc[r][0]);
        }
      } else {
        const typename X::V b1 = X::load(bp + X::W);
        for (int64_t r = 0; r < Used; ++r) {
          const typename X::V av = X::broadcast(ap + r);
          acc[r][0] = X::fma(av, b0, acc[r][0]);
          acc[r][1] = X::fma(av, b1, acc[r][1]);
        }
      }
    }
    for (int64_t r = 0; r < Used; ++r) {
      X::store(c + r * ldc, acc[r][0]);
      if constexpr (!Half) {
        X::store(c + r * ldc + X::W, acc[r][1]);
      }
    }
  }
};

#else

// The scalar reference: the same chains, one std::fma at a time.
template <typename T>
constexpr int64_t kRows = 4;
template <typename T>
constexpr int64_t kShortRows = 4;

// Half and Used are ignored: the 4 x 4 tile computes all of the packed
// sliver (the caller stores only what it needs).
template <typename T, int64_t Rows = 4>
struct Micro {
  static constexpr int64_t MR = Rows, NR = 4;
  template <bool Half = false, int64_t Used = MR, typename B>
  static void run(
      int64_t kc,
      const T* a,
      B b,
      T* c,
      int64_t ldc,
      bool first,
      const T* = nullptr) {
    T acc[MR][NR];
    for (int r = 0; r < MR; ++r) {
      for (int j = 0; j < NR; ++j) {
        acc[r][j] = first ? T(0) : c[r * ldc + j];
      }
    }
    for (int64_t p = 0; p < kc; ++p) {
      for (int r = 0; r < MR; ++r) {
        for (int j = 0; j < NR; ++j) {
          acc[r][j] = std::fma(a[p * MR + r], b.row(p)[j], acc[r][j]);
        }
      }
    }
    for (int r = 0; r < MR; ++r) {
      for (int j = 0; j < NR; ++j) {
        c[r * ldc + j] = acc[r][j];
      }
    }
  }
};

#endif

// ---- transposing copies, for the operands whose packed order runs across
// their contiguous direction (a row-major A, a column-major B).

#if DITTO_GEMM_SIMD
template <typename T>
constexpr bool kTransposes = Vec<T>::kTranspose;
template <typename T>
constexpr int64_t kTW = Vec<T>::W;

// dst[p * ld + j] = src(j)[p] for p < W and j < rows, zeros for
// rows <= j < width (width <= W).
template <typename T, typename Src>
[[gnu::always_inline]] inline void transpose_block(
    Src src,
    int64_t rows,
    T* dst,
    int64_t ld,
    int64_t width) {
  using X = Vec<T>;
  typename X::V r[X::W];
  for (int64_t j = 0; j < X::W; ++j) {
    r[j] = j < rows ? X::load(src(j)) : X::zero();
  }
  X::transpose(r);
  for (int64_t p = 0; p < X::W; ++p) {
    if (width == X::W) {
      X::store(dst + p * ld, r[p]);
    } else {
      X::store_first(dst + p * ld, r[p], width);
    }
  }
}
#else
template <typename T>
constexpr bool kTransposes = false;
template <typename T>
constexpr int64_t kTW = 1;
template <typename T, typename Src>
void transpose_block(Src, int64_t, T*, int64_t, int64_t) {}
#endif

// Packs rows [i0, i0 + mc) x k [p0, p0 + kc) of A into MR-row slivers,
// k-major inside a sliver; rows past the end are zeros.
template <typename T, int64_t MR>
void pack_a(
    const GemmArgs& g,
    int64_t i0,
    int64_t mc,
    int64_t p0,
    int64_t kc,
    T* to) {
  constexpr int64_t W = kTW<T>;
  const T* a = static_cast<const T*>(g.a);
  for (int64_t s = 0; s < mc; s += MR) {
    const int64_t rows = std::min(MR, mc - s);
    int64_t p = 0;
    if constexpr (kTransposes<T>) {
      if (g.a_cs == 1) { // row-major: W values of k per row at a time
        for (; p + W <= kc; p += W) {
          if constexpr (MR <= W) {
            // A full sliver in one block, its row count a constant (the
            // transpose's loads then need no test per row).
            if (rows == MR) {
              const T* src = a + (p0 + p) + (i0 + s) * g.a_rs;
              transpose_block(
                  [&](int64_t r) { return src + r * g.a_rs; },
                  MR,
                  to + p * MR,
                  MR,
                  MR);
              continue;
            }
          }
          // W rows at a time (MR = 6 with W = 4: rows 0-3, then 4-5).
          for (int64_t h = 0; h < MR; h += W) {
            const T* src = a + (p0 + p) + (i0 + s + h) * g.a_rs;
            transpose_block(
                [&](int64_t r) { return src + r * g.a_rs; },
                std::clamp<int64_t>(rows - h, 0, W),
                to + p * MR + h,
                MR,
                std::min(W, MR - h));
          }
        }
      }
    }
    for (; p < kc; ++p) {
      const T* col = a + (p0 + p) * g.a_cs + (i0 + s) * g.a_rs;
      int64_t r = 0;
      for (; r < rows; ++r) {
        to[p * MR + r] = col[r * g.a_rs];
      }
      for (; r < MR; ++r) {
        to[p * MR + r] = T(0);
      }
    }
    to += kc * MR;
  }
}

// Asks for the cache lines of n values from p on (a hint: no fault, no
// effect on results).
template <typename T>
void prefetch_span(const T* p, int64_t n) {
  const char* c = reinterpret_cast<const char*>(p);
  for (int64_t at = 0; at < n * int64_t(sizeof(T)); at += 64) {
    __builtin_prefetch(c + at);
  }
}

// Packs k [p0, p0 + kc) x columns [j0, j0 + nc) of B into NR-column
// slivers, k-major inside a sliver; columns past the end are zeros.
template <typename T>
void pack_b(
    const GemmArgs& g,
    int64_t p0,
    int64_t kc,
    int64_t j0,
    int64_t nc,
    T* to) {
  constexpr int64_t NR = Micro<T>::NR;
  constexpr int64_t W = kTW<T>;
  const T* b = static_cast<const T*>(g.b);
  const int64_t* coff = g.b_col_offsets;
  // Where row p0 + p starts (column 0); rows only (no column offsets).
  auto row_at = [&](int64_t p) {
    return b + (g.b_row_offsets ? g.b_row_offsets[p0 + p] : (p0 + p) * g.b_rs);
  };
  if (g.b_cs == 1 && !coff) {
    // Rows with unit column stride: row by row, each read front to back
    // once and cut into the slivers (sliver by sliver, every row start
    // was a cache miss the prefetchers could not see coming: 26% of a
    // 2048^3 product on AVX2).
    const int64_t whole = nc / NR * NR;
    // Rows far apart in memory each start in a page of their own, where
    // the prefetchers have no history: fetch kAhead rows ahead.
    constexpr int64_t kAhead = 4;
    for (int64_t p = 0; p < std::min(kAhead, kc); ++p) {
      prefetch_span(row_at(p) + j0, nc);
    }
    // Four rows at a time, each sliver's four rows written together: one
    // row at a time wrote a line to every sliver in turn, kc x NR values
    // apart (32 KiB on AVX2 at k = 512: the same L1 set for all of them).
    // 512^3 at one thread: AVX2 float32 6% faster, AVX-512 float64 3-5%;
    // 1024^3 1.5%; 2048^3 within the noise.
    constexpr int64_t kRowsAtOnce = 4;
    int64_t p = 0;
    for (; p + kRowsAtOnce <= kc; p += kRowsAtOnce) {
      for (int64_t q = 0; q < kRowsAtOnce; ++q) {
        if (p + q + kAhead < kc) {
          prefetch_span(row_at(p + q + kAhead) + j0, nc);
        }
      }
      const T* rows[kRowsAtOnce];
      for (int64_t q = 0; q < kRowsAtOnce; ++q) {
        rows[q] = row_at(p + q) + j0;
      }
      T* dst = to + p * NR;
      for (int64_t j = 0; j < whole; j += NR, dst += kc * NR) {
        for (int64_t q = 0; q < kRowsAtOnce; ++q) {
          std::memcpy(dst + q * NR, rows[q] + j, NR * sizeof(T));
        }
      }
      if (whole < nc) {
        for (int64_t q = 0; q < kRowsAtOnce; ++q) {
          int64_t c = 0;
          for (; whole + c < nc; ++c) {
            dst[q * NR + c] = rows[q][whole + c];
          }
          for (; c < NR; ++c) {
            dst[q * NR + c] = T(0);
          }
        }
      }
    }
    for (; p < kc; ++p) {
      const T* row = row_at(p) + j0;
      if (p + kAhead < kc) {
        prefetch_span(row_at(p + kAhead) + j0, nc);
      }
      T* dst = to + p * NR;
      int64_t j = 0;
      for (; j < whole; j += NR, dst += kc * NR) {
        std::memcpy(dst, row + j, NR * sizeof(T));
      }
      if (j < nc) {
        int64_t q = 0;
        for (; j + q < nc; ++q) {
          dst[q] = row[j + q];
        }
        for (; q < NR; ++q) {
          dst[q] = T(0);
        }
      }
    }
    return;
  }
  // Where column j starts (row 0).
  auto column = [&](int64_t j) { return coff ? coff[j] : j * g.b_cs; };
  for (int64_t s = 0; s < nc; s += NR) {
    const int64_t cols = std::min(NR, nc - s);
    int64_t p = 0;
    if constexpr (kTransposes<T> && NR % W == 0) {
      if (g.b_rs == 1 && (g.b_cs != 1 || coff) && !g.b_row_offsets) {
        // column-major: W values of k at once
        for (; p + W <= kc; p += W) {
          for (int64_t h = 0; h < NR; h += W) {
            transpose_block(
                [&](int64_t j) {
                  return b + (p0 + p) + column(j0 + s + h + j);
                },
                std::clamp<int64_t>(cols - h, 0, W),
                to + p * NR + h,
                NR,
                W);
          }
        }
      }
    }
    for (; p < kc; ++p) {
      T* dst = to + p * NR;
      int64_t j = 0;
      if (coff) {
        for (; j < cols; ++j) {
          dst[j] = b[(p0 + p) * g.b_rs + coff[j0 + s + j]];
        }
        for (; j < NR; ++j) {
          dst[j] = T(0);
        }
        continue;
      }
      const T* row = row_at(p) + (j0 + s) * g.b_cs;
      for (; j < cols; ++j) {
        dst[j] = row[j * g.b_cs];
      }
      for (; j < NR; ++j) {
        dst[j] = T(0);
      }
    }
    to += kc * NR;
  }
}

// A per-thread packing buffer, grown on demand (zeroed when it grows), on a
// cache line's boundary. A std::vector's is 16-byte aligned (glibc maps the
// large ones at 16 bytes past a page), so every other vector load of packed
// B straddled two lines: about 1% of 512^3 on AVX2 (2.65 against 2.62 ms,
// packed buffers 16 bytes off their boundary or on it).
template <typename T>
class Scratch {
 public:
  T* get(size_t n) {
    if (n > size_) {
      data_.reset(static_cast<T*>(
          ::operator new(n * sizeof(T), std::align_val_t(kLineBytes))));
      std::memset(static_cast<void*>(data_.get()), 0, n * sizeof(T));
      size_ = n;
    }
    return data_.get();
  }

 private:
  static constexpr size_t kLineBytes = 64;
  struct Free {
    void operator()(T* p) const {
      ::operator delete(p, std::align_val_t(kLineBytes));
    }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

// Row tiles up to which a sliver of B given by row offsets (the implicit
// convolutions) is read in place rather than packed. Packing pays only when
// enough tiles reuse the sliver: with AVX-512, conv backward input (4 tiles)
// was 6% faster in place and the forward (8 tiles) 12% slower; with AVX2 the
// 6-row tiles run longer per sliver, and in place was faster up to 11 tiles
// (Zen 4, 64 samples of 14 x 14: backward input 32 x 576, 8 tiles, 3.3 to
// 3.0 ms; forward 64 x 288, 11 tiles, 4% faster).
#if defined(__AVX2__) && !defined(__AVX512F__)
constexpr int64_t kInPlaceTiles = 12;
#else
constexpr int64_t kInPlaceTiles = 4;
#endif

// Adds the panel of k [p0, p0 + kc) of the product to C[i0:i1, j0:j1] (or
// starts C with it: first) with register tiles of MR rows, in blocks of g.mc
// rows of A packed into pa. B's slivers: read in place for the first `full`
// columns (GemmArgs::b_row_offsets), packed at pb for the rest.
template <typename T, int64_t MR>
void gemm_panel_rows(
    const GemmArgs& g,
    const T* pb,
    int64_t full,
    int64_t p0,
    int64_t kc,
    int64_t i0,
    int64_t i1,
    int64_t j0,
    int64_t j1,
    T* pa) {
  using K = Micro<T, MR>;
  constexpr int64_t NR = K::NR;
  // Shorter register tiles for a last row tile: a quarter and a half of MR
  // (12 and 8 rows), 2 and 4 of 6 rows (AVX2: 64 rows are 10 x 6 + 4, and
  // the 4 rows ran as 6 through the edge buffer, 9% of a forward
  // convolution's time).
  constexpr int64_t U1 = MR % 4 == 0 && MR > 4 ? MR / 4 : MR == 6 ? 2 : MR;
  constexpr int64_t U2 = MR % 4 == 0 && MR > 4 ? MR / 2 : MR == 6 ? 4 : MR;
  T* c = static_cast<T*>(g.c);
  const int64_t nc = j1 - j0;
  const int64_t block = std::max(MR, g.mc / MR * MR);
  const bool first = p0 == 0 && !g.accumulate;
  // Edge tiles (and a C that is not row-major with unit column stride) go
  // through a local MR x NR tile.
  T edge[MR * NR];
  const T* b = static_cast<const T*>(g.b);
  for (int64_t ib = i0; ib < i1; ib += block) {
    const int64_t mb = std::min(block, i1 - ib);
    pack_a<T, MR>(g, ib, mb, p0, kc, pa);
    for (int64_t js = 0; js < nc; js += NR) {
      const int64_t cols = std::min(NR, nc - js);
      const T* bs = pb + ((js - full) / NR) * kc * NR;
      for (int64_t is = 0; is < mb; is += MR) {
        const int64_t rows = std::min(MR, mb - is);
        const T* as = pa + (is / MR) * kc * MR;
        T* ct = c + (ib + is) * g.c_rs + (j0 + js) * g.c_cs;
        auto tile = [&](auto bsrc) {
          if (cols == NR && g.c_cs == 1) {
            if (rows == MR) {
              // The next full tile: below in this sliver, or the first of
              // the next sliver.
              const T* next = nullptr;
              if (is + 2 * MR <= mb) {
                next = ct + MR * g.c_rs;
              } else if (js + 2 * NR <= nc && mb >= MR) {
                next = c + ib * g.c_rs + (j0 + js + NR) * g.c_cs;
              }
              K::run(kc, as, bsrc, ct, g.c_rs, first, next);
              return;
            }
            // A last row tile of exactly U1 or U2 rows, straight into C
            // (the scalar tile always computes all of its rows).
            if (DITTO_GEMM_SIMD && rows == U2) {
              K::template run<false, U2>(kc, as, bsrc, ct, g.c_rs, first);
              return;
            }
            if (DITTO_GEMM_SIMD && rows == U1) {
              K::template run<false, U1>(kc, as, bsrc, ct, g.c_rs, first);
              return;
            }
          }
          if (!first) {
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t j = 0; j < cols; ++j) {
                edge[r * NR + j] = ct[r * g.c_rs + j * g.c_cs];
              }
            }
          }
          // The narrowest register tile that covers the edge.
          auto run = [&]<bool Half>() {
            if (rows <= U1) {
              K::template run<Half, U1>(kc, as, bsrc, edge, NR, first);
            } else if (rows <= U2) {
              K::template run<Half, U2>(kc, as, bsrc, edge, NR, first);
            } else {
              K::template run<Half>(kc, as, bsrc, edge, NR, first);
            }
          };
          if (2 * cols <= NR) {
            run.template operator()<true>();
          } else {
            run.template operator()<false>();
          }
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < cols; ++j) {
              ct[r * g.c_rs + j * g.c_cs] = edge[r * NR + j];
            }
          }
        };
        if (js < full) {
          tile(OffsetB<T>{b + j0 + js, g.b_row_offsets + p0});
        } else {
          tile(PackedB<T, NR>{bs});
        }
      }
    }
  }
}

// Zeros C[i0:i1, j0:j1] (an empty k starts every chain at 0), unless the
// chains continue from C.
template <typename T>
void gemm_empty_k(
    const GemmArgs& g,
    int64_t i0,
    int64_t i1,
    int64_t j0,
    int64_t j1) {
  T* c = static_cast<T*>(g.c);
  if (!g.accumulate) {
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = j0; j < j1; ++j) {
        c[i * g.c_rs + j * g.c_cs] = T(0);
      }
    }
  }
}

// C[i0:i1, j0:j1] over all of k (see Note [GEMM accumulation order]) with
// register tiles of MR rows. Per panel of k, B is packed once for all the
// rows (a tile of several row blocks reuses it), then each row block of A.
template <typename T, int64_t MR>
void gemm_tile_rows(
    const GemmArgs& g,
    int64_t i0,
    int64_t i1,
    int64_t j0,
    int64_t j1) {
  constexpr int64_t NR = Micro<T, MR>::NR;
  const int64_t mc = i1 - i0, nc = j1 - j0;
  if (mc <= 0 || nc <= 0) {
    return;
  }
  if (g.k == 0) {
    gemm_empty_k<T>(g, i0, i1, j0, j1);
    return;
  }
  thread_local Scratch<T> abuf, bbuf;
  const int64_t block = std::max(MR, g.mc / MR * MR);
  const int64_t mpad = (std::min(mc, block) + MR - 1) / MR * MR;
  const int64_t npad = (nc + NR - 1) / NR * NR;
  const int64_t depth = gemm_panel_depth(g.k, g.kc);
  T* pa = abuf.get(size_t(mpad * depth));
  T* pb = bbuf.get(size_t(npad * depth));
  // B rows at offsets with unit column stride are read in place when few
  // row tiles share each sliver (kInPlaceTiles), except for a last partial
  // sliver (whose row ends the buffer may not have).
  const bool in_place =
      g.b_row_offsets && g.b_cs == 1 && mc <= kInPlaceTiles * MR;
  const int64_t full = in_place ? nc / NR * NR : 0;
  for (int64_t p0 = 0; p0 < g.k; p0 += depth) {
    const int64_t kc = std::min(depth, g.k - p0);
    if (full < nc) {
      pack_b(g, p0, kc, j0 + full, nc - full, pb);
    }
    gemm_panel_rows<T, MR>(g, pb, full, p0, kc, i0, i1, j0, j1, pa);
  }
}

// Calls f with the register tile's rows: the short tile when the long one
// would pad more than 1/16 of the rows (64 rows: 8 x 8 instead of 6 x 12
// with 8 rows of padding). From g.m alone, so every part of one product
// uses the same tile.
template <typename T, typename F>
void with_tile_rows(const GemmArgs& g, F f) {
  constexpr int64_t R = kRows<T>, S = kShortRows<T>;
  const int64_t pad_long = (g.m + R - 1) / R * R - g.m;
  const int64_t pad_short = (g.m + S - 1) / S * S - g.m;
  if constexpr (S != R) {
    if (pad_short < pad_long && pad_long * 16 > g.m) {
      f(std::integral_constant<int64_t, S>());
      return;
    }
  }
  f(std::integral_constant<int64_t, R>());
}

template <typename T>
void gemm_tile(
    const GemmArgs& g,
    int64_t i0,
    int64_t i1,
    int64_t j0,
    int64_t j1) {
  with_tile_rows<T>(g, [&](auto rows) {
    gemm_tile_rows<T, decltype(rows)::value>(g, i0, i1, j0, j1);
  });
}

// Note [Direct convolution tiles]
// The implicit GEMM (Note [Implicit im2col]) runs its vectors along output
// columns, so each output row of ow values costs wp - ow thrown-away columns
// and the last sliver of an image is partial (3 x 3 on 14 x 14: 216 columns
// computed for 196). Here the vectors run along output channels instead: a
// register tile is kPixels output positions by two vectors of channels,
// each step broadcasts one value of the padded image per position (at the
// position's own offset, so a tile may span rows) and loads two vectors of
// packed weights. Every output is the same chain as in the implicit GEMM,
// fma over the taps in order from 0, with the same zeros for the padding:
// the same bits, without computing a column that is thrown away. The tile is
// transposed in registers and stored as channel rows. AVX2 and AVX-512 only
// (the scalar and NEON tables keep the implicit GEMM); on Zen 4, 3 x 3 on
// 14 x 14, 32 to 64 channels and back: 15 to 25% faster than the implicit
// GEMM with either, and a full block of channels is needed (see
// direct_applies in ditto/ops/detail/conv/implicit.h).
#if DITTO_GEMM_SIMD && defined(__x86_64__)
#if defined(__AVX512F__)
constexpr int64_t kPixels = 12;
#else
constexpr int64_t kPixels = 6;
#endif

// The first `used` of kPixels positions by two vectors of channels from w
// (packed, OB per step), transposed into channel rows of out (row stride
// pixels, `channels` of them).
[[gnu::always_inline]] inline void conv_direct_tile(
    int64_t k,
    const int64_t* taps,
    const float* const* at,
    const float* w,
    float* out,
    int64_t pixels,
    int64_t used,
    int64_t channels,
    bool accumulate) {
  using X = Vec<float>;
  constexpr int64_t W = X::W, OB = 2 * W;
  const int64_t nlo = std::min(W, channels), nhi = std::min(W, channels - W);
  const float* q[kPixels];
  typename X::V lo[W], hi[W];
#pragma GCC unroll 16
  for (int64_t r = 0; r < W; ++r) {
    lo[r] = X::zero();
    hi[r] = X::zero();
    if (r < kPixels) {
      q[r] = at[r];
    }
  }
  if (accumulate) {
    // The channel rows' values, transposed into the pixels' vectors.
    for (int64_t j = 0; j < W; ++j) {
      float lrow[W] = {}, hrow[W] = {};
      for (int64_t r = 0; r < used; ++r) {
        lrow[r] = j < nlo ? out[j * pixels + r] : 0.0f;
        hrow[r] = j < nhi ? out[(W + j) * pixels + r] : 0.0f;
      }
      lo[j] = X::load(lrow);
      hi[j] = X::load(hrow);
    }
    X::transpose(lo);
    X::transpose(hi);
  }
  for (int64_t p = 0; p < k; ++p) {
    const int64_t t = taps[p];
    const typename X::V w0 = X::load(w + p * OB);
    const typename X::V w1 = X::load(w + p * OB + W);
#pragma GCC unroll 16
    for (int64_t r = 0; r < kPixels; ++r) {
      const typename X::V v = X::broadcast(q[r] + t);
      lo[r] = X::fma(w0, v, lo[r]);
      hi[r] = X::fma(w1, v, hi[r]);
    }
  }
  X::transpose(lo);
  X::transpose(hi);
  for (int64_t j = 0; j < nlo; ++j) {
    X::store_first(out + j * pixels, lo[j], used);
  }
  for (int64_t j = 0; j < nhi; ++j) {
    X::store_first(out + (W + j) * pixels, hi[j], used);
  }
}

void conv_direct_f32(const ConvDirectArgs& a) {
  constexpr int64_t OB = 2 * Vec<float>::W;
  static_assert(kPixels <= Vec<float>::W);
  if (a.pixel_at) {
    for (int64_t o0 = 0; o0 < a.oc; o0 += OB) {
      const float* w = a.w + (o0 / OB) * a.k * OB;
      const int64_t channels = std::min(OB, a.oc - o0);
      for (int64_t i0 = 0; i0 < a.pixels; i0 += kPixels) {
        const int64_t used = std::min(kPixels, a.pixels - i0);
        const float* at[kPixels];
        for (int64_t r = 0; r < kPixels; ++r) {
          at[r] = a.x + a.pixel_at[i0 + std::min(r, used - 1)];
        }
        conv_direct_tile(
            a.k,
            a.taps,
            at,
            w,
            a.out + o0 * a.out_rs + i0,
            a.out_rs,
            used,
            channels,
            a.accumulate);
      }
    }
    return;
  }
  const int64_t pixels = a.oh * a.ow;
  for (int64_t o0 = 0; o0 < a.oc; o0 += OB) {
    const float* w = a.w + (o0 / OB) * a.k * OB;
    const int64_t channels = std::min(OB, a.oc - o0);
    // Position (y, x) of the next pixel, advanced without division.
    int64_t y = 0, x = 0;
    for (int64_t i0 = 0; i0 < pixels; i0 += kPixels) {
      const int64_t used = std::min(kPixels, pixels - i0);
      // Positions past the image repeat the last one (computed, not stored).
      const float* at[kPixels];
      for (int64_t r = 0; r < kPixels; ++r) {
        at[r] = r < used ? a.x + y * a.wp + x : at[used - 1];
        if (++x == a.ow) {
          x = 0;
          ++y;
        }
      }
      conv_direct_tile(
          a.k,
          a.taps,
          at,
          w,
          a.out + o0 * pixels + i0,
          pixels,
          used,
          channels,
          a.accumulate);
    }
  }
}
#endif

} // namespace

void fill_gemm_table(KernelTable& t) {
  t.gemm_f32 = gemm_tile<float>;
  t.gemm_f64 = gemm_tile<double>;
  t.gemm_mr[0] = kRows<float>;
  t.gemm_mr[1] = kRows<double>;
  t.gemm_nr[0] = Micro<float>::NR;
  t.gemm_nr[1] = Micro<double>::NR;
#if DITTO_GEMM_SIMD && defined(__x86_64__)
  t.conv_direct_f32 = conv_direct_f32;
  t.conv_oc_block = 2 * Vec<float>::W;
#endif
}

} // namespace ditto::kernels::DITTO_KERNEL_NS
