#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// max_pool2d in float32 (nn/functional/pooling.cpp) on (planes, H, W)
// contiguous. Params: p[0] planes, p[1..4] h w oh ow, p[5..12] kh kw sh
// sw ph pw dh dw, p[13] the mode, p[14] the invocations' count:
//   0 forward (out, indices, x), one output each: the window's largest
//     value, a later NaN replacing the best (the CPU's `v > best ||
//     isnan(v)` from -inf), and its index in the plane (int64, two words);
//   1 backward (grad_in zeroed, indices, grad_out), one plane each: the
//     serial loop over the plane's outputs [p[15], p[16]) adding grad_out
//     into grad_in[index] in order: the CPU's deterministic variant
//     (Note [Plane scatters]), in dispatches of a part of the outputs each
//     (lavapipe stops a shader's loops after 65535 iterations in all);
//   2 the indices' check (bad, indices, -): the first position whose index
//     is outside [0, h w), by atomicMin into bad[0];
//   3 backward, fast (as 1), one output each: grad_out added into
//     grad_in[index] with a compare-and-swap loop, in whatever order the
//     invocations get there (differs from 1 only where windows overlap).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { uint out_[]; };
layout(set = 0, binding = 2) buffer Idx { uint idx_[]; };
layout(set = 0, binding = 3) readonly buffer In { uint in_[]; };

void main() {
  const int h = p[1], w = p[2], oh = p[3], ow = p[4], kh = p[5], kw = p[6],
            sh = p[7], sw = p[8], ph = p[9], pw = p[10], dh = p[11],
            dw = p[12], mode = p[13];
  const uint count = uint(p[14]);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e += stride) {
    if (mode == 0) {
      const int j = int(e % uint(ow)), i = int(e / uint(ow) % uint(oh));
      const uint plane = e / uint(ow * oh) * uint(h * w);
      int h0 = i * sh - ph;
      const int h1 = min(h0 + (kh - 1) * dh + 1, h);
      while (h0 < 0) {
        h0 += dh;
      }
      int w0 = j * sw - pw;
      const int w1 = min(w0 + (kw - 1) * dw + 1, w);
      while (w0 < 0) {
        w0 += dw;
      }
      int best_i = h0 * w + w0;
      uint best = 0xFF800000u; // -inf
      for (int hh = h0; hh < h1; hh += dh) {
        for (int ww = w0; ww < w1; ww += dw) {
          const uint v = in_[plane + uint(hh * w + ww)];
          const bool greater = !nan_bits(v) && !nan_bits(best) &&
              order_key(v) > order_key(best);
          if (greater || nan_bits(v)) {
            best = v;
            best_i = hh * w + ww;
          }
        }
      }
      out_[e] = best;
      idx_[2u * e] = uint(best_i);
      idx_[2u * e + 1u] = 0u;
    } else if (mode == 1) {
      const uint ohw = uint(oh * ow), hw = uint(h * w);
      for (uint k = e * ohw + uint(p[15]); k < e * ohw + uint(p[16]); ++k) {
        const uint at = e * hw + idx_[2u * k];
        precise float s = uintBitsToFloat(out_[at]) + uintBitsToFloat(in_[k]);
        out_[at] = floatBitsToUint(s);
      }
    } else if (mode == 2) {
      if (idx_[2u * e + 1u] != 0u || idx_[2u * e] >= uint(h * w)) {
        atomicMin(out_[0], e);
      }
    } else {
      const uint at = e / uint(oh * ow) * uint(h * w) + idx_[2u * e];
      const float v = uintBitsToFloat(in_[e]);
      uint old = out_[at];
      for (;;) {
        precise float sum = uintBitsToFloat(old) + v;
        const uint seen = atomicCompSwap(out_[at], old, floatBitsToUint(sum));
        if (seen == old) {
          break;
        }
        old = seen;
      }
    }
  }
}
