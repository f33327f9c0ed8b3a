// Shared by ditto's compute shaders (Note [The Vulkan device]).
// Every shader asks for float32 denormals to be kept where the device
// offers it (the build makes a second SPIR-V with DITTO_DENORM_PRESERVE).
#extension GL_EXT_spirv_intrinsics : require
#if defined(DITTO_FMA_EMULATED) || defined(DITTO_FLOAT64)
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
#endif
#ifdef DITTO_DENORM_PRESERVE
spirv_execution_mode(capabilities = [4464], 4459, 32);
#endif

// Binding 0: the params, int32 words. For the strided loops:
//   p[0] n, p[1] ndim (<= 8), p[2..9] sizes, then per operand k (0..3)
//   p[10 + 9k] its element offset and p[11 + 9k ..] its strides;
//   p[46] the op, p[47] flags (bit 0: every operand contiguous; bit 1 + k:
//   operand k is the scalar whose bits are p[48 + k]); p[52] a float
//   scalar of the op (fused ops' s).
layout(set = 0, binding = 0) readonly buffer Params { int p[]; };

const int kOp = 46;
const int kFlags = 47;
const int kScalar = 48;
const int kOpScalar = 52;

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

// The chains' fused multiply-add. Shaders that use FMA are built twice: as
// is, for devices whose fma() rounds once, and with DITTO_FMA_EMULATED for
// those whose fma() rounds twice (lavapipe lowers it to a multiply and an
// add), where fma_exact computes it from float64 operations (Note [The
// device's arithmetic]).
#ifdef DITTO_FMA_EMULATED
// The float product is exact in float64; p + c rounded to odd in float64
// (53 bits, more than 2 x 24 + 1), then rounded to float32, is p + c
// rounded once (Boldo and Melquiond's round-to-odd).
float fma_exact(float a, float b, float c) {
  precise double p = double(a) * double(b);
  precise double dc = double(c);
  precise double s = p + dc;
  // TwoSum: the exact error of s.
  precise double bb = s - p;
  precise double err = (p - (s - bb)) + (dc - bb);
  if (err != 0.0 && !isinf(s)) {
    uvec2 w = unpackDouble2x32(s);
    if ((w.x & 1u) == 0u) {
      // Move s one unit toward the exact sum: its magnitude grows when err
      // has s's sign.
      const bool grow = (err > 0.0) == (s > 0.0);
      uint lo = grow ? w.x + 1u : w.x - 1u;
      uint hi = w.y;
      if (grow && lo == 0u) {
        hi += 1u;
      } else if (!grow && w.x == 0u) {
        hi -= 1u;
      }
      s = packDouble2x32(uvec2(lo, hi));
    }
  }
  return float(s);
}
#define FMA fma_exact
#else
#define FMA fma
#endif

#ifdef DITTO_FLOAT64
// The float32 with bits u as a double, exactly, denormals included (a
// device that flushes float32 denormals would lose them in a conversion).
double exact_double(uint u) {
  if ((u & 0x7F800000u) != 0u) {
    return double(uintBitsToFloat(u));
  }
  double d = double(u & 0x007FFFFFu) * 1.401298464324817070923729583289916e-45lf;
  return (u & 0x80000000u) != 0u ? -d : d;
}

// a / b rounded once to float32, as IEEE division (Vulkan allows 2.5 ulp
// for a float32 division): the quotient of two floats is at least about
// 2^-48 (relative) away from any float32 rounding boundary unless it lies
// on one, so float64's quotient, within a few float64 ulps, rounds to the
// correctly rounded float32. Zeros, infinities and NaN, where Vulkan
// promises nothing, are taken apart on the bits first.
float div_exact(float a, float b) {
  uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
  uint sign = (ua ^ ub) & 0x80000000u;
  uint ma = ua & 0x7FFFFFFFu, mb = ub & 0x7FFFFFFFu;
  if (ma > 0x7F800000u || mb > 0x7F800000u) {
    return uintBitsToFloat(0x7FC00000u); // NaN
  }
  if (mb == 0u) { // x / 0
    return uintBitsToFloat(ma == 0u ? 0x7FC00000u : (sign | 0x7F800000u));
  }
  if (ma == 0x7F800000u) { // inf / y
    return uintBitsToFloat(mb == 0x7F800000u ? 0x7FC00000u
                                             : (sign | 0x7F800000u));
  }
  if (mb == 0x7F800000u || ma == 0u) { // finite / inf, 0 / y
    return uintBitsToFloat(sign);
  }
  precise double q = exact_double(ua) / exact_double(ub);
  return float(q);
}

// The float32 square root rounded once, as IEEE sqrt (Vulkan allows an
// error in sqrt): float64's root rounded to float32, then moved by an ulp
// while x lies beyond the square of the midpoint to its neighbour (squares
// of 25-bit midpoints are exact in float64; a root is never a midpoint).
// Negative and NaN give NaN, +-0 and +inf themselves.
uint sqrt_exact(uint u) {
  if (nan_bits(u) || u > 0x80000000u) {
    return 0xFFC00000u; // the CPU's default NaN
  }
  if ((u & 0x7FFFFFFFu) == 0u || u == 0x7F800000u) {
    return u;
  }
  precise double x = exact_double(u);
  uint r = floatBitsToUint(float(sqrt(x)));
  for (int step = 0; step < 4; ++step) {
    precise double rd = double(uintBitsToFloat(r));
    precise double up = (rd + double(uintBitsToFloat(r + 1u))) * 0.5;
    precise double down = (rd + double(uintBitsToFloat(r - 1u))) * 0.5;
    precise double up2 = up * up;
    precise double down2 = down * down;
    if (x > up2) {
      r += 1u;
    } else if (x < down2) {
      r -= 1u;
    } else {
      break;
    }
  }
  return r;
}
#endif
