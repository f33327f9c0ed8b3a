#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
#ifdef DITTO_CAST_TO_BYTES
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#include "common.glsl"
// dst[i] = src[i] converted as the CPU's convert() (cpu_kernels.cpp):
// to bool v != 0; integers to floats and float64 to float32 rounded to
// nearest; floats to integers truncated through int64, NaN and values
// outside [-2^63, 2^63) giving the minimum (INT32_MIN when the int64 does
// not fit an int32); integers to narrower ones by two's complement. Dtype
// codes (p[kOp] = src, p[kOpScalar] = dst): 0 uint8, 1 int32, 2 int64,
// 3 float32, 4 float64, 5 bool. Elements are read from 32-bit words (a
// byte's word shifted); 1-byte destinations use the DITTO_CAST_TO_BYTES
// build, which writes bytes.
layout(local_size_x = 256) in;
#ifdef DITTO_CAST_TO_BYTES
layout(set = 0, binding = 1) buffer Dst { uint8_t dst8[]; };
#else
layout(set = 0, binding = 1) buffer Dst { uint dst[]; };
#endif
layout(set = 0, binding = 2) readonly buffer Src { uint src[]; };

const int kU8 = 0, kI32 = 1, kI64 = 2, kF32 = 3, kF64 = 4, kBool = 5;

void main() {
  uint n = uint(p[0]);
  int from = p[kOp], to = p[kOpScalar];
  for (uint i = gl_GlobalInvocationID.x; i < n;
       i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    int e = operand_index(i, 1);
    // The source value, as an integer or as a double (exact for every
    // source but int64, which integer destinations take as is).
    bool is_float = from == kF32 || from == kF64;
    int64_t iv = 0;
    double fv = 0.0;
    if (from == kU8 || from == kBool) {
      iv = int64_t((src[e >> 2] >> (8 * (e & 3))) & 0xFFu);
    } else if (from == kI32) {
      iv = int64_t(int(src[e]));
    } else if (from == kI64) {
      iv = int64_t(uint64_t(src[2 * e]) | (uint64_t(src[2 * e + 1]) << 32));
    } else if (from == kF32) {
      // From the bits where the float is denormal: a device that flushes
      // float32 denormals would make the conversion lose them.
      uint u = src[e];
      if ((u & 0x7F800000u) == 0u) {
        fv = double(u & 0x007FFFFFu) * 1.401298464324817070923729583289916e-45lf;
        fv = (u & 0x80000000u) != 0u ? -fv : fv;
      } else {
        fv = double(uintBitsToFloat(u));
      }
    } else {
      fv = packDouble2x32(uvec2(src[2 * e], src[2 * e + 1]));
    }
    uvec2 out_bits = uvec2(0u);
    if (to == kBool) {
      out_bits.x = (is_float ? fv != 0.0 : iv != 0) ? 1u : 0u;
    } else if (to == kF32 || to == kF64) {
      if (to == kF32) {
        // float64 to float32 and integers to float32, one rounding each.
        float f = from == kF32 ? uintBitsToFloat(src[e])
            : is_float         ? float(fv)
                               : float(iv);
        out_bits.x = floatBitsToUint(f);
      } else {
        double d = is_float ? fv : double(iv);
        out_bits = unpackDouble2x32(d);
      }
    } else {
      int64_t v = iv;
      if (is_float) {
        bool ok = fv >= -9223372036854775808.0 && fv < 9223372036854775808.0;
        v = ok ? int64_t(fv) : int64_t(0x8000000000000000ul);
        if (to == kI32) {
          bool fits = v >= -2147483648l && v <= 2147483647l;
          v = fits ? v : -2147483648l;
        }
      }
      uint64_t u = uint64_t(v);
      out_bits = uvec2(uint(u & 0xFFFFFFFFul), uint(u >> 32));
    }
#ifdef DITTO_CAST_TO_BYTES
    dst8[operand_index(i, 0)] = uint8_t(out_bits.x & 0xFFu);
#else
    int o = operand_index(i, 0);
    if (to == kI64 || to == kF64) {
      dst[2 * o] = out_bits.x;
      dst[2 * o + 1] = out_bits.y;
    } else {
      dst[o] = out_bits.x;
    }
#endif
  }
}
