#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
// conv2d in float32, each output the CPU's chain (ditto/ops/conv/): one
// invocation per output element, contiguous operands.
// Params: p[0..3] n c h w, p[4..6] o kh kw, p[7..12] sh sw ph pw dh dw,
// p[13] groups, p[14] oh, p[15] ow, p[16] cg, p[17] og, p[18] the mode,
// p[19] samples per chunk (mode 3), p[20] outputs, p[21..24] (mode 3):
//   0 forward (a = x, b = w): y[n, o, y, x] = fma chain over (ci, ki, kj)
//     of w and x, zeros for the padding (Note [Direct and im2col agree]);
//   1 input gradient, direct (a = grad_out, b = w): chain over (oc, ki, kj)
//     with zeros for the taps that reach no output (bwi_direct);
//   2 input gradient, gemm_col2im (a = grad_out, b = w): the column
//     w^T grad_out of each tap reaching an output, a chain over oc, added
//     from 0 in tap order (ki, kj) as col2im adds them;
//   3 weight gradient, gemm_chunked (a = grad_out, b = x): per chunk of
//     `per` samples one chain over (sample, output position) of grad_out
//     times the tap's input (0 in the padding), the chunks' partials then
//     added in chunk order (bww_chunked). A dispatch runs the part
//     [p[22], p[23]) of the chunk starting at sample p[21] (flat index j =
//     (sample - p[21]) oh ow + position), the chain carried between
//     dispatches in chain[] (p[24] bit 0: the chunk's first part, from 0;
//     bit 1: its last, added into out; bit 2: the first chunk, stored), so
//     that no invocation loops more than lavapipe allows (65535 in all).
layout(local_size_x = 256) in;
layout(set = 0, binding = 1) buffer Out { float out_[]; };
layout(set = 0, binding = 2) readonly buffer A { float a_[]; };
layout(set = 0, binding = 3) readonly buffer B { float b_[]; };
layout(set = 0, binding = 4) buffer Chain { float chain_[]; };

void main() {
  const int n = p[0], c = p[1], h = p[2], w = p[3], o = p[4], kh = p[5],
            kw = p[6], sh = p[7], sw = p[8], ph = p[9], pw = p[10],
            dh = p[11], dw = p[12], oh = p[14], ow = p[15], cg = p[16],
            og = p[17], mode = p[18], per = p[19];
  const uint count = uint(p[20]);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e += stride) {
    if (mode == 0) {
      const int xo = int(e % uint(ow)), yo = int(e / uint(ow) % uint(oh));
      const int oc = int(e / uint(ow * oh) % uint(o)),
                ni = int(e / uint(ow * oh * o));
      const int gi = oc / og;
      precise float acc = 0.0;
      for (int ci = 0; ci < cg; ++ci) {
        const int plane = (ni * c + gi * cg + ci) * h;
        for (int ki = 0; ki < kh; ++ki) {
          const int iy = yo * sh - ph + ki * dh;
          for (int kj = 0; kj < kw; ++kj) {
            const int ix = xo * sw - pw + kj * dw;
            const float v = iy >= 0 && iy < h && ix >= 0 && ix < w
                ? a_[(plane + iy) * w + ix]
                : 0.0;
            acc = FMA(b_[((oc * cg + ci) * kh + ki) * kw + kj], v, acc);
          }
        }
      }
      out_[e] = acc;
    } else if (mode == 1 || mode == 2) {
      const int ix = int(e % uint(w)), iy = int(e / uint(w) % uint(h));
      const int cc = int(e / uint(w * h) % uint(c)), ni = int(e / uint(w * h * c));
      const int gi = cc / cg, ci = cc % cg;
      const int go_base = (ni * o + gi * og) * oh * ow;
      precise float acc = 0.0;
      if (mode == 1) {
        for (int oc = 0; oc < og; ++oc) {
          const int wo = ((gi * og + oc) * cg + ci) * kh * kw;
          for (int ki = 0; ki < kh; ++ki) {
            const int ny = iy + ph - ki * dh;
            const bool row = ny >= 0 && ny % sh == 0 && ny / sh < oh;
            for (int kj = 0; kj < kw; ++kj) {
              const int nx = ix + pw - kj * dw;
              const float v = row && nx >= 0 && nx % sw == 0 && nx / sw < ow
                  ? a_[go_base + oc * oh * ow + (ny / sh) * ow + nx / sw]
                  : 0.0;
              acc = FMA(b_[wo + ki * kw + kj], v, acc);
            }
          }
        }
      } else {
        const int kk = cg * kh * kw;
        for (int ki = 0; ki < kh; ++ki) {
          const int ny = iy + ph - ki * dh;
          if (ny < 0 || ny % sh != 0 || ny / sh >= oh) {
            continue;
          }
          for (int kj = 0; kj < kw; ++kj) {
            const int nx = ix + pw - kj * dw;
            if (nx < 0 || nx % sw != 0 || nx / sw >= ow) {
              continue;
            }
            const int q = (ny / sh) * ow + nx / sw;
            const int t = (ci * kh + ki) * kw + kj;
            precise float col = 0.0;
            for (int oc = 0; oc < og; ++oc) {
              col = FMA(
                  b_[(gi * og + oc) * kk + t], a_[go_base + oc * oh * ow + q],
                  col);
            }
            precise float s = acc + col;
            acc = s;
          }
        }
      }
      out_[e] = acc;
    } else {
      const int kk = cg * kh * kw;
      const int t = int(e % uint(kk)), oc = int(e / uint(kk));
      const int kj = t % kw, ki = t / kw % kh, ci = t / (kw * kh);
      const int gi = oc / og;
      const int n0 = p[21], j0 = p[22], j1 = p[23], flags = p[24];
      const int ohw = oh * ow;
      precise float acc = (flags & 1) != 0 ? 0.0 : chain_[e];
      for (int j = j0; j < j1; ++j) {
        const int ni = n0 + j / ohw, q = j % ohw;
        const int yo = q / ow, xo = q % ow;
        const int iy = yo * sh - ph + ki * dh, ix = xo * sw - pw + kj * dw;
        const float v = iy >= 0 && iy < h && ix >= 0 && ix < w
            ? b_[((ni * c + gi * cg + ci) * h + iy) * w + ix]
            : 0.0;
        acc = FMA(a_[(ni * o + oc) * ohw + q], v, acc);
      }
      if ((flags & 2) == 0) {
        chain_[e] = acc;
      } else if ((flags & 4) != 0) {
        out_[e] = acc;
      } else {
        precise float s = out_[e] + acc;
        out_[e] = s;
      }
    }
  }
}
