// conv3d and its two backward ops: volumes [N, C, D, H, W], weights
// [O, C / groups, KD, KH, KW].
//
// Note [conv3d's one chain]
// Every algorithm here computes each output of a direction as one fma chain
// in a fixed order, so the algorithm (chosen from the shapes only) never
// changes the bits:
// - forward: output (o, z, y, x) is the chain over (ci, kz, ky, kx), from 0,
//   zeros for taps in the padding (as conv2d's, Note [Direct and im2col
//   agree]). With unit strides the GEMM reads the taps straight from a
//   padded copy of the volume (Note [Implicit im2col], one more dim: a
//   group of output planes is one "image" whose rows run on through the
//   planes' padding rows, the rows there thrown away), or the direct tiles
//   of the kernel table do for float32; otherwise the columns are copied
//   (vol2col), a slab of output planes at a time.
// - input gradient: with unit strides and padding at most the dilated
//   kernel's reach, it is the forward of grad_out with the kernel flipped
//   and transposed: the chain over (o, kz, ky, kx) of each input element.
//   Otherwise GEMM columns W^T grad_out, added back into the volume (col2vol)
//   row by row in order, for each fixed slab of output planes in order.
// - weight gradient: the chain over (sample, z, y, x) in order for each
//   weight, split among threads by blocks of input channels (no partial
//   sums): the same bits for any thread count.
// Hence no nondeterministic variant, and nothing for benchmark mode to
// choose (backends::conv applies to conv2d and conv1d).

#include <algorithm>
#include <cmath>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/ops/conv.h"
#include "ditto/ops/detail/conv/geometry.h"
#include "ditto/ops/detail/conv/lowering.h"
#include "ditto/ops/detail/conv3d.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/reduce.h"

namespace ditto::detail::conv3d {
namespace {

using conv::gemm;
using conv::thread_buffer;

} // namespace

Geom3 make_geom3(
    const Shape& input,
    const Shape& weight,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups,
    Dtype dtype,
    const char* op) {
  const conv::ConvArgs<3> a = conv::check_conv_args<3>(
      input, weight, stride, padding, dilation, groups, dtype, op);
  Geom3 g{};
  g.n = a.n;
  g.c = a.c;
  g.o = a.o;
  g.groups = groups;
  g.dtype = dtype;
  g.cg = a.cg;
  g.og = a.og;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = a.in[i];
    g.k[i] = a.k[i];
    g.s[i] = a.s[i];
    g.p[i] = a.p[i];
    g.dl[i] = a.d[i];
    g.out[i] = a.out[i];
  }
  // The padded volumes and the column slabs must be countable.
  checked_numel(
      {g.n,
       g.c,
       a.padded[0],
       a.padded[1],
       checked_add(a.padded[2], a.reach[2], op, "the padded input")},
      op);
  checked_mul(
      checked_numel({g.cg, g.k[0], g.k[1], g.k[2]}, op),
      checked_numel({g.out[1], g.out[2], a.padded[2]}, op),
      op,
      "the columns of one output plane");
  return g;
}

namespace {

// ---- The padded volume of the unit-stride algorithms (Note [Implicit
// im2col] with a depth): planes of hp rows of wp values, channel after
// channel; rows share their runs of zeros as in conv2d's layout.
struct Padded3 {
  int64_t dp, hp, wp, size;
  std::vector<int64_t> taps; // offset of tap (ci, kz, ky, kx)
  int64_t plane() const {
    return hp * wp;
  }
};

Padded3 padded3(const Geom3& g, bool flipped) {
  Padded3 p;
  p.dp = g.in[0] + 2 * g.p[0];
  p.hp = g.in[1] + 2 * g.p[1];
  p.wp = g.in[2] + std::max(g.p[2], 2 * g.p[2] - (g.k[2] - 1) * g.dl[2]);
  p.size = g.cg * p.dp * p.hp * p.wp + (g.k[2] - 1) * g.dl[2];
  p.taps.reserve(size_t(g.kk()));
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t kz = 0; kz < g.k[0]; ++kz) {
      for (int64_t ky = 0; ky < g.k[1]; ++ky) {
        for (int64_t kx = 0; kx < g.k[2]; ++kx) {
          // Flipped: tap (kz, ky, kx) reads the window's mirror position.
          const int64_t rz = flipped ? g.k[0] - 1 - kz : kz;
          const int64_t ry = flipped ? g.k[1] - 1 - ky : ky;
          const int64_t rx = flipped ? g.k[2] - 1 - kx : kx;
          p.taps.push_back(
              ((ci * p.dp + rz * g.dl[0]) * p.hp + ry * g.dl[1]) * p.wp +
              rx * g.dl[2]);
        }
      }
    }
  }
  return p;
}

// One sample's group of channels (cg volumes at src) into dst, padded
// (each value written once).
template <typename T>
void pad_volume(const Geom3& g, const Padded3& p, const T* src, T* dst) {
  const int64_t d = g.in[0], h = g.in[1], w = g.in[2];
  T* row = dst;
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t zz = 0; zz < p.dp; ++zz) {
      for (int64_t yy = 0; yy < p.hp; ++yy, row += p.wp) {
        const int64_t z = zz - g.p[0], y = yy - g.p[1];
        if (z < 0 || z >= d || y < 0 || y >= h) {
          std::fill(row, row + p.wp, T(0));
          continue;
        }
        std::fill(row, row + g.p[2], T(0));
        std::copy_n(src + ((ci * d + z) * h + y) * w, w, row + g.p[2]);
        std::fill(row + g.p[2] + w, row + p.wp, T(0));
      }
    }
  }
  std::fill(row, dst + p.size, T(0)); // the slack
}

// Output planes per task of the unit-stride forward: about 1024 computed
// columns (rows of wp, through the planes' padding rows), from the shapes.
int64_t planes_per_task(const Geom3& g, const Padded3& p) {
  return std::clamp<int64_t>(
      1024 / std::max<int64_t>(p.plane(), 1),
      1,
      std::max<int64_t>(g.out[0], 1));
}

// The unit-stride forward: out [n, o, od, oh, ow] from x [n, c, d, h, w] and
// weights a [o, cg * taps], the taps flipped or not (Note [conv3d's one
// chain]).
template <typename T>
void fwd_unit_stride(
    const Geom3& g,
    const T* x,
    const T* a,
    T* out,
    bool flipped) {
  const Padded3 p = padded3(g, flipped);
  const int64_t kk = g.kk();
  const int64_t oh = g.out[1], ow = g.out[2], od = g.out[0];
  // Every sample's padded groups first (the tasks below share them), in a
  // scratch tensor (large blocks come back from the storage's cache, not
  // as fresh pages).
  Tensor scratch = detail::new_tensor({g.n * g.groups * p.size}, dtype_of<T>);
  T* xp = scratch.data_ptr<T>();
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      pad_volume(g, p, x + t * g.cg * g.ivol(), xp + t * p.size);
    }
  });
  const auto* table = &kernels::kernel_table();
  bool direct = false;
  int64_t ob = 1;
  std::vector<float> wpack;
  if constexpr (std::is_same_v<T, float>) {
    ob = table->conv_oc_block;
    direct =
        table->conv_direct_f32 != nullptr && g.og >= ob && g.oplane() >= 16;
    if (direct) {
      // [group][block][tap][o % ob], zeros past og.
      const int64_t blocks = (g.og + ob - 1) / ob;
      wpack.assign(size_t(g.groups * blocks * kk * ob), 0.0f);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        for (int64_t oc = 0; oc < g.og; ++oc) {
          const float* src = a + (gi * g.og + oc) * kk;
          float* dst =
              wpack.data() + ((gi * blocks + oc / ob) * kk) * ob + oc % ob;
          for (int64_t q = 0; q < kk; ++q) {
            dst[q * ob] = src[q];
          }
        }
      }
    }
  }
  const int64_t per = planes_per_task(g, p);
  const int64_t slabs = (od + per - 1) / per;
  parallel_for(0, g.n * g.groups * slabs, 1, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t ng = task / slabs, z0 = (task % slabs) * per;
      const int64_t nz = std::min(per, od - z0);
      const int64_t gi = ng % g.groups, ni = ng / g.groups;
      const T* src = xp + ng * p.size + z0 * p.plane();
      // Rows of the slab: each plane's hp rows, the last plane's oh.
      const int64_t rows = (nz - 1) * p.hp + oh;
      T* dst = out + (ni * g.o + gi * g.og) * g.ovol() + z0 * g.oplane();
      if constexpr (std::is_same_v<T, float>) {
        if (direct) {
          const int64_t blocks = (g.og + ob - 1) / ob;
          float* tmp = thread_buffer<float>(size_t(g.og * rows * ow));
          table->conv_direct_f32(
              {.k = kk,
               .taps = p.taps.data(),
               .x = src,
               .oh = rows,
               .ow = ow,
               .wp = p.wp,
               .w = wpack.data() + gi * blocks * kk * ob,
               .oc = g.og,
               .out = tmp});
          for (int64_t oc = 0; oc < g.og; ++oc) {
            for (int64_t z = 0; z < nz; ++z) {
              std::copy_n(
                  tmp + (oc * rows + z * p.hp) * ow,
                  oh * ow,
                  dst + oc * g.ovol() + z * g.oplane());
            }
          }
          continue;
        }
      }
      const int64_t cols = rows * p.wp;
      T* tmp = thread_buffer<T>(size_t(g.og * cols));
      gemm<T>(
          {.m = g.og,
           .n = cols,
           .k = kk,
           .a = a + gi * g.og * kk,
           .a_rs = kk,
           .a_cs = 1,
           .b = src,
           .b_cs = 1,
           .b_row_offsets = p.taps.data(),
           .c = tmp,
           .c_rs = cols,
           .c_cs = 1});
      for (int64_t oc = 0; oc < g.og; ++oc) {
        for (int64_t z = 0; z < nz; ++z) {
          for (int64_t y = 0; y < oh; ++y) {
            std::copy_n(
                tmp + oc * cols + (z * p.hp + y) * p.wp,
                ow,
                dst + oc * g.ovol() + z * g.oplane() + y * ow);
          }
        }
      }
    }
  });
}

// ---- Explicit columns (any stride).

template <typename T>
void fwd_columns(const Geom3& g, const T* x, const T* a, T* out) {
  const int64_t kk = g.kk(), od = g.out[0];
  const int64_t per = slab_planes(g, kk);
  const int64_t slabs = (od + per - 1) / per;
  parallel_for(0, g.n * g.groups * slabs, 1, [&](int64_t b, int64_t e) {
    T* cols = thread_buffer<T>(size_t(kk * per * g.oplane()));
    for (int64_t task = b; task < e; ++task) {
      const int64_t ng = task / slabs, z0 = (task % slabs) * per;
      const int64_t z1 = std::min(od, z0 + per);
      const int64_t gi = ng % g.groups, ni = ng / g.groups;
      const int64_t ld = (z1 - z0) * g.oplane();
      vol2col(g, x + ng * g.cg * g.ivol(), 0, g.cg, z0, z1, cols, ld);
      gemm<T>(
          {.m = g.og,
           .n = ld,
           .k = kk,
           .a = a + gi * g.og * kk,
           .a_rs = kk,
           .a_cs = 1,
           .b = cols,
           .b_rs = ld,
           .b_cs = 1,
           .c = out + (ni * g.o + gi * g.og) * g.ovol() + z0 * g.oplane(),
           .c_rs = g.ovol(),
           .c_cs = 1});
    }
  });
}

template <typename T>
void forward(const Geom3& g, const T* x, const T* w, T* out) {
  if (g.unit_stride()) {
    fwd_unit_stride(g, x, w, out, false);
  } else {
    fwd_columns(g, x, w, out);
  }
}

// ---- Input gradient.

// The input gradient as a forward (Note [conv3d's one chain]): grad_out is
// the input, the weights transposed per group, the padding the kernel's
// reach less the forward's.
bool transposed_applies(const Geom3& g) {
  if (!g.unit_stride()) {
    return false;
  }
  for (int i = 0; i < 3; ++i) {
    if (g.p[i] > (g.k[i] - 1) * g.dl[i]) {
      return false;
    }
  }
  return true;
}

template <typename T>
void bwi_transposed(const Geom3& g, const T* go, const T* w, T* gi_out) {
  Geom3 t = g;
  t.c = g.o;
  t.o = g.c;
  t.cg = g.og;
  t.og = g.cg;
  for (int i = 0; i < 3; ++i) {
    t.in[i] = g.out[i];
    t.out[i] = g.in[i];
    t.p[i] = (g.k[i] - 1) * g.dl[i] - g.p[i];
  }
  // wt [group][ci][(oc, tap)] = w [group][oc][(ci, tap)].
  const int64_t taps = g.taps();
  std::vector<T> wt(size_t(g.o * g.kk()));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int64_t oc = 0; oc < g.og; ++oc) {
      for (int64_t ci = 0; ci < g.cg; ++ci) {
        std::copy_n(
            w + ((grp * g.og + oc) * g.cg + ci) * taps,
            taps,
            wt.data() + ((grp * g.cg + ci) * g.og + oc) * taps);
      }
    }
  }
  fwd_unit_stride(t, go, wt.data(), gi_out, true);
}

// cols of a slab added into one sample's group of channels (x), row by row.
template <typename T>
void col2vol(const Geom3& g, const T* cols, int64_t z0, int64_t z1, T* x) {
  const int64_t d = g.in[0], h = g.in[1], w = g.in[2];
  const int64_t oh = g.out[1], ow = g.out[2];
  const T* row = cols;
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    for (int64_t kz = 0; kz < g.k[0]; ++kz) {
      for (int64_t ky = 0; ky < g.k[1]; ++ky) {
        for (int64_t kx = 0; kx < g.k[2]; ++kx) {
          const T* src = row;
          row += (z1 - z0) * g.oplane();
          for (int64_t z = z0; z < z1; ++z) {
            const int64_t iz = z * g.s[0] - g.p[0] + kz * g.dl[0];
            for (int64_t y = 0; y < oh; ++y, src += ow) {
              const int64_t iy = y * g.s[1] - g.p[1] + ky * g.dl[1];
              if (iz < 0 || iz >= d || iy < 0 || iy >= h) {
                continue;
              }
              T* dst = x + ((ci * d + iz) * h + iy) * w;
              for (int64_t xo = 0; xo < ow; ++xo) {
                const int64_t ix = xo * g.s[2] - g.p[2] + kx * g.dl[2];
                if (ix >= 0 && ix < w) {
                  dst[ix] = T(dst[ix] + src[xo]);
                }
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
void bwi_columns(const Geom3& g, const T* go, const T* w, T* gx) {
  const int64_t kk = g.kk(), od = g.out[0];
  const int64_t per = slab_planes(g, kk);
  parallel_for(0, g.n * g.groups, 1, [&](int64_t b, int64_t e) {
    T* cols = thread_buffer<T>(size_t(kk * per * g.oplane()));
    for (int64_t ng = b; ng < e; ++ng) {
      const int64_t gi = ng % g.groups, ni = ng / g.groups;
      T* xs = gx + ng * g.cg * g.ivol();
      std::fill(xs, xs + g.cg * g.ivol(), T(0));
      for (int64_t z0 = 0; z0 < od; z0 += per) {
        const int64_t z1 = std::min(od, z0 + per);
        const int64_t ld = (z1 - z0) * g.oplane();
        // cols [kk, ld] = W_g^T [kk, og] grad_out [og, ld].
        gemm<T>(
            {.m = kk,
             .n = ld,
             .k = g.og,
             .a = w + gi * g.og * kk,
             .a_rs = 1,
             .a_cs = kk,
             .b = go + (ni * g.o + gi * g.og) * g.ovol() + z0 * g.oplane(),
             .b_rs = g.ovol(),
             .b_cs = 1,
             .c = cols,
             .c_rs = ld,
             .c_cs = 1});
        col2vol(g, cols, z0, z1, xs);
      }
    }
  });
}

template <typename T>
void backward_input(const Geom3& g, const T* go, const T* w, T* gx) {
  if (transposed_applies(g)) {
    bwi_transposed(g, go, w, gx);
  } else {
    bwi_columns(g, go, w, gx);
  }
}

} // namespace

void check_grad_out(const Tensor& go, const Geom3& g, const char* op) {
  const Shape want{g.n, g.o, g.out[0], g.out[1], g.out[2]};
  DITTO_CHECK(
      go.sizes() == want,
      ValueError,
      op,
      "grad_out ",
      shape_str(go.sizes()),
      " is not the output shape ",
      shape_str(want));
}

} // namespace ditto::detail::conv3d

namespace ditto {

namespace c3 = detail::conv3d;

Tensor conv3d(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& bias_arg,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const Tensor bias = bias_arg.value_or(Tensor());
  const char* op_name = "conv3d";
  if (detail::is_storage(input) && detail::is_storage(weight) &&
      is_floating(input.dtype())) {
    // Note [Storage dtypes]: in float32, rounded once.
    return conv3d(
               detail::upcast(input),
               detail::upcast(weight),
               detail::upcast(bias),
               stride,
               padding,
               dilation,
               groups)
        .to(input.dtype());
  }
  detail::OpScope op(op_name, {input, weight, bias});
  const auto operands =
      detail::conv::conv_operands(input, "input", weight, "weight", op_name);
  Tensor x = operands.first, w = operands.second;
  const c3::Geom3 g = c3::make_geom3(
      x.sizes(),
      w.sizes(),
      stride,
      padding,
      dilation,
      groups,
      x.dtype(),
      op_name);
  if (bias.defined()) {
    DITTO_CHECK(
        bias.dtype() == g.dtype && bias.dim() == 1 && bias.size(0) == g.o,
        ValueError,
        op_name,
        "bias must be [",
        g.o,
        "] of dtype ",
        g.dtype,
        ", got ",
        shape_str(bias.sizes()),
        " ",
        bias.dtype());
  }
  Tensor out = detail::new_tensor(
      {g.n, g.o, g.out[0], g.out[1], g.out[2]}, g.dtype, x.device());
  if (out.numel() > 0) {
    Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
    c3::dispatch_floating(g, [&]<typename T>() {
      T* o = out.data_ptr<T>();
      c3::forward(g, x.data_ptr<T>(), w.data_ptr<T>(), o);
      if (bc.defined()) {
        // One add per element, after the chain.
        const T* bp = bc.data_ptr<T>();
        const int64_t vol = g.ovol();
        parallel_for(0, g.n * g.o, 4, [&](int64_t b, int64_t e) {
          for (int64_t q = b; q < e; ++q) {
            const T v = bp[q % g.o];
            for (int64_t k = 0; k < vol; ++k) {
              o[q * vol + k] = T(o[q * vol + k] + v);
            }
          }
        });
      }
    });
  }
  return op.done(
      out,
      [sx = op.save(x),
       sw = op.save(w),
       has_bias = bias.defined(),
       stride,
       padding,
       dilation,
       groups](const autograd::GradList& grads) {
        Tensor x = sx.unpack(), w = sw.unpack();
        Tensor go = grads[0];
        return autograd::GradList{
            conv3d_backward_input(
                go, w, x.sizes(), stride, padding, dilation, groups),
            conv3d_backward_weight(
                go, x, w.sizes(), stride, padding, dilation, groups),
            has_bias ? sum(go, {0, 2, 3, 4}) : Tensor()};
      });
}

Tensor conv3d_backward_input(
    const Tensor& grad_out,
    const Tensor& weight,
    const IntArg& input_sizes,
    const IntArg& stride,
    const IntArg& padding,
    const IntArg& dilation,
    int64_t groups) {
  const char* op_name = "conv3d_backward_input";
  detail::OpScope op(op_name, {grad_out, weight});
  const auto operands = detail::conv::conv_operands(
      grad_out, "grad_out", weight, "weight", op_name);
  Tensor go = operands.first, w = operands.second;
  const c3::Geom3 g = c3::make_geom3(
      input_sizes,
      w.sizes(),
      stride,
      padding,
      dilation,
      groups,
      go.dtype(),
      op_name);
  c3::check_grad_out(go, g, op_name);
  Tensor out = detail::new_tensor(input_sizes, g.dtype, go.device());
  if (out.numel() > 0) {
    c3::dispatch_floating(g, [&]<typename T>() {
      if (go.numel() == 0) {
        std::fill_n(out.data_ptr<T>(), out.numel(), T(0));
        return;
      }
      c3::backward_input(
          g, go.data_ptr<T>(), w.data_ptr<T>(), out.data_ptr<T>());
    });
  }
  return op.done(out);
}

} // namespace ditto
