// conv3d's weight gradient (Note [conv3d's one chain] in conv3d.cpp): the
// chain over (sample, z, y, x) in order for each weight, split among
// threads by blocks of input channels.

#include <algorithm>
#include <cmath>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/detail/conv/geometry.h"
#include "ditto/ops/detail/conv/lowering.h"
#include "ditto/ops/detail/conv3d.h"
#include "ditto/ops/detail/op_util.h"

namespace ditto::detail::conv3d {
namespace {

using conv::gemm;
using conv::thread_buffer;

// ---- Weight gradient: tasks of (group, block of input channels), each
// running the whole chain of its weights (Note [conv3d's one chain]).

// Input channels per task: about 96 columns (taps) per GEMM, the channels
// shared out evenly.
int64_t channels_per_task(const Geom3& g) {
  const int64_t blocks =
      std::clamp<int64_t>((g.kk() + 95) / 96, 1, std::max<int64_t>(g.cg, 1));
  return (g.cg + blocks - 1) / blocks;
}

template <typename T>
void bww_columns(const Geom3& g, const T* go, const T* x, T* gw) {
  const int64_t kk = g.kk(), taps = g.taps(), od = g.out[0];
  const int64_t cb = channels_per_task(g);
  const int64_t blocks = (g.cg + cb - 1) / cb;
  const int64_t per = slab_planes(g, cb * taps);
  parallel_for(0, g.groups * blocks, 1, [&](int64_t b, int64_t e) {
    T* cols = thread_buffer<T>(size_t(cb * taps * per * g.oplane()));
    for (int64_t task = b; task < e; ++task) {
      const int64_t gi = task / blocks, c0 = (task % blocks) * cb;
      const int64_t c1 = std::min(g.cg, c0 + cb);
      bool first = true;
      for (int64_t ni = 0; ni < g.n; ++ni) {
        const T* xs = x + (ni * g.groups + gi) * g.cg * g.ivol();
        for (int64_t z0 = 0; z0 < od; z0 += per) {
          const int64_t z1 = std::min(od, z0 + per);
          const int64_t ld = (z1 - z0) * g.oplane();
          vol2col(g, xs, c0, c1, z0, z1, cols, ld);
          // gw [og, (c1 - c0) taps] += grad_out [og, ld] cols^T.
          gemm<T>(
              {.m = g.og,
               .n = (c1 - c0) * taps,
               .k = ld,
               .a = go + (ni * g.o + gi * g.og) * g.ovol() + z0 * g.oplane(),
               .a_rs = g.ovol(),
               .a_cs = 1,
               .b = cols,
               .b_rs = 1,
               .b_cs = ld,
               .c = gw + gi * g.og * kk + c0 * taps,
               .c_rs = kk,
               .c_cs = 1,
               .accumulate = !first});
          first = false;
        }
      }
    }
  });
}

// Note [Shifted volumes]
// With unit stride down the rows, the weight gradient's B [q = y ow + x]
// [(ci, kz, ky, kx)] for output plane z is the input at (z sd + kz dd - pd,
// y + ky dh - ph, x sw + kx dw - pw). Copy the volume once per kx, shifted
// by kx dw - pw along the rows, cut to ow columns (stride sw) and padded by
// pd planes and ph rows of zeros: [group][kw][cg][dp][hp][ow]. Column
// (ci, kz, ky, kx) of plane z's B is then the run of oh ow values from
// ((kx cg + ci) dp + z sd + kz dd) hp ow + ky dh ow, read through
// GemmArgs::b_col_offsets: kw copies of the volume instead of the
// kd kh kw of vol2col, and the same values in the same chain, so the same
// bits. (conv2d's Note [Shifted rows], one more dim.)
struct Shifted3 {
  int64_t dp, hp, size; // size: one group's copies
};

bool shifted_applies(const Geom3& g) {
  return g.s[1] == 1;
}

Shifted3 shifted_layout(const Geom3& g) {
  Shifted3 s;
  s.dp = g.in[0] + 2 * g.p[0];
  s.hp = g.in[1] + 2 * g.p[1];
  s.size = g.k[2] * g.cg * s.dp * s.hp * g.out[2];
  return s;
}

// Copy kx of channel ci of one sample's group (x) into dst (that copy's
// planes for the channel).
template <typename T>
void shift_channel(
    const Geom3& g,
    const Shifted3& s,
    const T* x,
    int64_t ci,
    int64_t kx,
    T* dst) {
  const int64_t d = g.in[0], h = g.in[1], w = g.in[2], ow = g.out[2];
  const int64_t off = kx * g.dl[2] - g.p[2];
  for (int64_t zz = 0; zz < s.dp; ++zz) {
    const int64_t iz = zz - g.p[0];
    for (int64_t yy = 0; yy < s.hp; ++yy, dst += ow) {
      const int64_t iy = yy - g.p[1];
      if (iz < 0 || iz >= d || iy < 0 || iy >= h) {
        std::fill(dst, dst + ow, T(0));
        continue;
      }
      const T* src = x + ((ci * d + iz) * h + iy) * w;
      for (int64_t xo = 0; xo < ow; ++xo) {
        const int64_t ix = xo * g.s[2] + off;
        dst[xo] = ix >= 0 && ix < w ? src[ix] : T(0);
      }
    }
  }
}

template <typename T>
void bww_shifted(const Geom3& g, const T* go, const T* x, T* gw) {
  const int64_t kk = g.kk(), taps = g.taps(), od = g.out[0];
  const int64_t cb = channels_per_task(g);
  const int64_t blocks = (g.cg + cb - 1) / cb;
  const Shifted3 sh = shifted_layout(g);
  const int64_t ow = g.out[2], plane = sh.hp * ow;
  std::vector<T> copies(size_t(g.groups * sh.size));
  for (int64_t ni = 0; ni < g.n; ++ni) {
    const int64_t items = g.groups * g.k[2] * g.cg;
    parallel_for(0, items, 1, [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t gi = it / (g.k[2] * g.cg);
        const int64_t kx = it / g.cg % g.k[2], ci = it % g.cg;
        shift_channel(
            g,
            sh,
            x + (ni * g.groups + gi) * g.cg * g.ivol(),
            ci,
            kx,
            copies.data() + gi * sh.size + (kx * g.cg + ci) * sh.dp * plane);
      }
    });
    parallel_for(0, g.groups * blocks, 1, [&](int64_t b, int64_t e) {
      std::vector<int64_t> offsets;
      for (int64_t task = b; task < e; ++task) {
        const int64_t gi = task / blocks, c0 = (task % blocks) * cb;
        const int64_t c1 = std::min(g.cg, c0 + cb);
        offsets.clear();
        for (int64_t ci = c0; ci < c1; ++ci) {
          for (int64_t kz = 0; kz < g.k[0]; ++kz) {
            for (int64_t ky = 0; ky < g.k[1]; ++ky) {
              for (int64_t kx = 0; kx < g.k[2]; ++kx) {
                offsets.push_back(
                    ((kx * g.cg + ci) * sh.dp + kz * g.dl[0]) * plane +
                    ky * g.dl[1] * ow);
              }
            }
          }
        }
        for (int64_t z = 0; z < od; ++z) {
          // gw [og, (c1 - c0) taps] += grad_out [og, plane z] B.
          gemm<T>(
              {.m = g.og,
               .n = (c1 - c0) * taps,
               .k = g.oplane(),
               .a = go + (ni * g.o + gi * g.og) * g.ovol() + z * g.oplane(),
               .a_rs = g.ovol(),
               .a_cs = 1,
               .b = copies.data() + gi * sh.size + z * g.s[0] * plane,
               .b_rs = 1,
               .b_col_offsets = offsets.data(),
               .c = gw + gi * g.og * kk + c0 * taps,
               .c_rs = kk,
               .c_cs = 1,
               .accumulate = ni > 0 || z > 0});
        }
      }
    });
  }
}

// Note [Direct weight gradient]
// float32 where the kernel table has direct tiles (Note [Direct convolution
// tiles]): the tiles' roles swapped. Their pixels are the weights (tap
// (ci, kz, ky, kx) at its offset in the padded volumes), their taps the
// output positions (n, z, y, x) at the window's origin, their packed
// weights grad_out transposed [q][o]: each weight's gradient is then the
// chain over the positions in order from 0, the chain of the GEMMs above,
// with no columns copied or packed. Positions are taken kDirectSteps at a
// time (grad_out's slice stays in the cache), each chain continued from
// the last (accumulate).
constexpr int64_t kDirectSteps = 2048;
// Weights per task (a multiple of every ISA's tile of pixels).
constexpr int64_t kDirectPixels = 48;

void bww_direct(
    const Geom3& g,
    const float* go,
    const float* x,
    float* gw,
    const kernels::KernelTable& t) {
  const int64_t ob = t.conv_oc_block, kk = g.kk();
  const int64_t blocks = (g.og + ob - 1) / ob;
  const int64_t dp = g.in[0] + 2 * g.p[0], hp = g.in[1] + 2 * g.p[1],
                wp = g.in[2] + 2 * g.p[2];
  const int64_t per = g.cg * dp * hp * wp; // one sample's padded group
  const int64_t steps = g.n * g.ovol();
  // Scratch tensors (large blocks come back from the storage's cache, not
  // fresh pages from the system).
  Tensor xbuf = detail::new_tensor({g.n * g.groups * per}, kFloat32);
  Tensor gbuf = detail::new_tensor({g.groups * blocks * steps * ob}, kFloat32);
  float* xp = xbuf.data_ptr<float>();
  float* gp = gbuf.data_ptr<float>();
  // Padded volumes [n][group][cg][dp][hp][wp], each value written once.
  parallel_for(0, g.n * g.groups * g.cg, 1, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      float* dst = xp + it * dp * hp * wp;
      const float* src = x + it * g.ivol();
      for (int64_t zz = 0; zz < dp; ++zz) {
        for (int64_t yy = 0; yy < hp; ++yy, dst += wp) {
          const int64_t z = zz - g.p[0], y = yy - g.p[1];
          if (z < 0 || z >= g.in[0] || y < 0 || y >= g.in[1]) {
            std::fill(dst, dst + wp, 0.0f);
            continue;
          }
          std::fill(dst, dst + g.p[2], 0.0f);
          std::copy_n(src + (z * g.in[1] + y) * g.in[2], g.in[2], dst + g.p[2]);
          std::fill(dst + g.p[2] + g.in[2], dst + wp, 0.0f);
        }
      }
    }
  });
  // grad_out transposed and packed: [group][block][q][o % ob], zeros past
  // the group's channels; a run of positions per task.
  constexpr int64_t kRun = 256;
  const int64_t runs = (g.ovol() + kRun - 1) / kRun;
  parallel_for(0, g.groups * blocks * g.n * runs, 1, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t q0 = it % runs * kRun, q1 = std::min(g.ovol(), q0 + kRun);
      const int64_t ni = it / runs % g.n, gb = it / runs / g.n;
      const int64_t gi = gb / blocks, o0 = gb % blocks * ob;
      const int64_t oc = std::min(ob, g.og - o0);
      const float* src = go + (ni * g.o + gi * g.og + o0) * g.ovol();
      float* dst = gp + (gb * steps + ni * g.ovol()) * ob;
      for (int64_t q = q0; q < q1; ++q) {
        for (int64_t j = 0; j < ob; ++j) {
          dst[q * ob + j] = j < oc ? src[j * g.ovol() + q] : 0.0f;
        }
      }
    }
  });
  // Each weight's offset, and each position's window origin (the samples'
  // groups are g.groups * per apart).
  std::vector<int64_t> pix, pos;
  pix.reserve(size_t(kk));
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t kz = 0; kz < g.k[0]; ++kz) {
      for (int64_t ky = 0; ky < g.k[1]; ++ky) {
        for (int64_t kx = 0; kx < g.k[2]; ++kx) {
          pix.push_back(
              ((ci * dp + kz * g.dl[0]) * hp + ky * g.dl[1]) * wp +
              kx * g.dl[2]);
        }
      }
    }
  }
  pos.reserve(size_t(steps));
  for (int64_t ni = 0; ni < g.n; ++ni) {
    for (int64_t z = 0; z < g.out[0]; ++z) {
      for (int64_t y = 0; y < g.out[1]; ++y) {
        for (int64_t xo = 0; xo < g.out[2]; ++xo) {
          pos.push_back(
              ni * g.groups * per + ((z * g.s[0]) * hp + y * g.s[1]) * wp +
              xo * g.s[2]);
        }
      }
    }
  }
  const int64_t chunks = (kk + kDirectPixels - 1) / kDirectPixels;
  for (int64_t q0 = 0; q0 < steps; q0 += kDirectSteps) {
    const int64_t q1 = std::min(steps, q0 + kDirectSteps);
    parallel_for(0, g.groups * blocks * chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        const int64_t gb = task / chunks, p0 = task % chunks * kDirectPixels;
        const int64_t gi = gb / blocks, o0 = gb % blocks * ob;
        t.conv_direct_f32(
            {.k = q1 - q0,
             .taps = pos.data() + q0,
             .x = xp + gi * per,
             .w = gp + (gb * steps + q0) * ob,
             .oc = std::min(ob, g.og - o0),
             .out = gw + (gi * g.og + o0) * kk + p0,
             .pixel_at = pix.data() + p0,
             .pixels = std::min(kDirectPixels, kk - p0),
             .out_rs = kk,
             .accumulate = q0 > 0});
      }
    });
  }
}

template <typename T>
void backward_weight(const Geom3& g, const T* go, const T* x, T* gw) {
  if constexpr (std::is_same_v<T, float>) {
    const auto& t = kernels::kernel_table();
    if (t.conv_direct_f32 && g.n > 0 && g.ovol() > 0) {
      bww_direct(g, go, x, gw, t);
      return;
    }
  }
  if (g.n == 0 || g.ovol() == 0) {
    std::fill(gw, gw + g.o * g.kk(), T(0));
  } else if (shifted_applies(g)) {
    bww_shifted(g, go, x, gw);
  } else {
    bww_columns(g, go, x, gw);
  }
}

} // namespace
} // namespace ditto::detail::conv3d

namespace ditto {

namespace c3 = detail::conv3d;

Tensor conv3d_backward_weight(
    const Tensor& grad_out,
    const Tensor& input,
    const IntArg& weight_sizes,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const char* op_name = "conv3d_backward_weight";
  detail::OpScope op(op_name, {grad_out, input});
  const auto operands = detail::conv::conv_operands(
      grad_out, "grad_out", input, "input", op_name);
  Tensor go = operands.first, x = operands.second;
  const c3::Geom3 g = c3::make_geom3(
      x.sizes(),
      weight_sizes,
      stride,
      padding,
      dilation,
      groups,
      x.dtype(),
      op_name);
  c3::check_grad_out(go, g, op_name);
  Tensor out = detail::new_tensor(weight_sizes, g.dtype, go.device());
  c3::dispatch_floating(g, [&]<typename T>() {
    c3::backward_weight(
        g, go.data_ptr<T>(), x.data_ptr<T>(), out.data_ptr<T>());
  });
  return op.done(out);
}

} // namespace ditto
