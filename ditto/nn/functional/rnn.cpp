// The LSTM and GRU gate ops: one fused elementwise loop forward and one
// backward, with ditto's own sigmoid and tanh (kernels/cpu/math.h). Each
// element is computed alone, so any split gives the same bits.

#include "ditto/nn/functional/rnn.h"

#include <cstring>

#include "ditto/core/parallel.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/nn/detail/rnn_ops.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/shape_ops.h"

namespace ditto::nn::functional {
namespace {

// Rows of the batch per task: elementwise work, any split is exact.
constexpr int64_t kRowGrain = 16;

void check_rows(
    const Tensor& t,
    int64_t rows,
    int64_t cols,
    Dtype dtype,
    const char* op,
    const char* what) {
  DITTO_CHECK(t.defined(), ValueError, op, "undefined ", what);
  DITTO_CHECK(
      t.dim() == 2 && t.size(0) == rows && t.size(1) == cols,
      ValueError,
      op,
      what,
      " must have sizes (",
      rows,
      ", ",
      cols,
      "), got ",
      shape_str(t.sizes()));
  DITTO_CHECK(
      t.dtype() == dtype,
      TypeError,
      op,
      what,
      " has dtype ",
      dtype_name(t.dtype()),
      ", expected ",
      dtype_name(dtype));
}

// The active capability's sigmoid and tanh loops (kernel_table.h): ditto's
// own functions, vectorized, the same bits in every capability.
struct Act {
  kernels::UnaryLoop sig, th;
  explicit Act(Dtype d)
      : sig(kernels::kernel_table()
                .unary[int(kernels::UnaryOp::Sigmoid)][dtype_index(d)]),
        th(kernels::kernel_table()
               .unary[int(kernels::UnaryOp::Tanh)][dtype_index(d)]) {}
  template <typename T>
  void sigmoid(const T* in, T* out, int64_t n) const {
    sig(n,
        reinterpret_cast<char*>(out),
        reinterpret_cast<const char*>(in),
        1,
        1);
  }
  template <typename T>
  void tanh(const T* in, T* out, int64_t n) const {
    th(n,
       reinterpret_cast<char*>(out),
       reinterpret_cast<const char*>(in),
       1,
       1);
  }
};

} // namespace

std::tuple<Tensor, Tensor> lstm_cell_gates(
    const Tensor& gates,
    const Tensor& c) {
  const char* op = "lstm_cell_gates";
  detail::OpScope scope(op, {gates, c});
  detail::check_floating(gates, op);
  DITTO_CHECK(
      gates.dim() == 2 && gates.size(1) % 4 == 0,
      ValueError,
      op,
      "gates must be (B, 4H), got ",
      shape_str(gates.sizes()));
  const int64_t B = gates.size(0), H = gates.size(1) / 4;
  check_rows(c, B, H, gates.dtype(), op, "c");
  const Tensor g = gates.contiguous();
  const Tensor cc = c.contiguous();
  // act: the activated gates (i, f, g, o); tc: tanh(c').
  Tensor act = detail::new_tensor({B, 4 * H}, g.dtype());
  Tensor h = detail::new_tensor({B, H}, g.dtype());
  Tensor c2 = detail::new_tensor({B, H}, g.dtype());
  Tensor tc = detail::new_tensor({B, H}, g.dtype());
  dispatch_dtype(g.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* gp = g.data_ptr<T>();
      const T* cp = cc.data_ptr<T>();
      T* ap = act.data_ptr<T>();
      T* hp = h.data_ptr<T>();
      T* c2p = c2.data_ptr<T>();
      T* tcp = tc.data_ptr<T>();
      const Act act_fn(g.dtype());
      parallel_for(0, B, kRowGrain, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          const T* gr = gp + b * 4 * H;
          T* ar = ap + b * 4 * H;
          act_fn.sigmoid(gr, ar, 2 * H); // i, f
          act_fn.tanh(gr + 2 * H, ar + 2 * H, H); // g
          act_fn.sigmoid(gr + 3 * H, ar + 3 * H, H); // o
          T* cn = c2p + b * H;
          for (int64_t j = 0; j < H; ++j) {
            cn[j] = ar[H + j] * cp[b * H + j] + ar[j] * ar[2 * H + j];
          }
          T* t = tcp + b * H;
          act_fn.tanh(cn, t, H);
          for (int64_t j = 0; j < H; ++j) {
            hp[b * H + j] = ar[3 * H + j] * t[j];
          }
        }
      });
    }
  });
  scope.done(
      {h, c2},
      [B, H, sa = scope.save(act), sc = scope.save(cc), st = scope.save(tc)](
          const autograd::GradList& go) {
        const Tensor a = sa.unpack(), cc = sc.unpack(), tc = st.unpack();
        const Tensor dh = go[0].defined() ? go[0].contiguous() : Tensor();
        const Tensor dc2 = go[1].defined() ? go[1].contiguous() : Tensor();
        Tensor dg = detail::new_tensor({B, 4 * H}, a.dtype());
        Tensor dc = detail::new_tensor({B, H}, a.dtype());
        dispatch_dtype(
            a.dtype(), "lstm_cell_gates_backward", [&]<typename T>() {
              if constexpr (std::is_floating_point_v<T>) {
                const T* ap = a.data_ptr<T>();
                const T* cp = cc.data_ptr<T>();
                const T* tp = tc.data_ptr<T>();
                const T* dhp = dh.defined() ? dh.data_ptr<T>() : nullptr;
                const T* dcp2 = dc2.defined() ? dc2.data_ptr<T>() : nullptr;
                T* dgp = dg.data_ptr<T>();
                T* dcp = dc.data_ptr<T>();
                parallel_for(0, B, kRowGrain, [&](int64_t b0, int64_t b1) {
                  for (int64_t b = b0; b < b1; ++b) {
                    const T* ar = ap + b * 4 * H;
                    T* dr = dgp + b * 4 * H;
                    for (int64_t j = 0; j < H; ++j) {
                      const int64_t k = b * H + j;
                      const T i = ar[j], f = ar[H + j], g = ar[2 * H + j],
                              o = ar[3 * H + j];
                      const T t = tp[k];
                      const T gh = dhp ? dhp[k] : T(0);
                      const T dct =
                          (dcp2 ? dcp2[k] : T(0)) + gh * o * (T(1) - t * t);
                      dr[j] = dct * g * (i * (T(1) - i));
                      dr[H + j] = dct * cp[k] * (f * (T(1) - f));
                      dr[2 * H + j] = dct * i * (T(1) - g * g);
                      dr[3 * H + j] = gh * t * (o * (T(1) - o));
                      dcp[k] = dct * f;
                    }
                  }
                });
              }
            });
        return autograd::GradList{dg, dc};
      });
  return {h, c2};
}

Tensor gru_cell_gates(const Tensor& gi, const Tensor& gh, const Tensor& h) {
  const char* op = "gru_cell_gates";
  detail::OpScope scope(op, {gi, gh, h});
  detail::check_floating(gi, op);
  DITTO_CHECK(
      gi.dim() == 2 && gi.size(1) % 3 == 0,
      ValueError,
      op,
      "gi must be (B, 3H), got ",
      shape_str(gi.sizes()));
  const int64_t B = gi.size(0), H = gi.size(1) / 3;
  check_rows(gh, B, 3 * H, gi.dtype(), op, "gh");
  check_rows(h, B, H, gi.dtype(), op, "h");
  const Tensor a = gi.contiguous(), b_ = gh.contiguous(), hc = h.contiguous();
  // act: r, z, n, and gh's n part (W_hn h + b_hn) for the backward.
  Tensor act = detail::new_tensor({B, 4 * H}, a.dtype());
  Tensor out = detail::new_tensor({B, H}, a.dtype());
  dispatch_dtype(a.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = a.data_ptr<T>();
      const T* hp_ = b_.data_ptr<T>();
      const T* hv = hc.data_ptr<T>();
      T* ap = act.data_ptr<T>();
      T* op_ = out.data_ptr<T>();
      const Act act_fn(a.dtype());
      parallel_for(0, B, kRowGrain, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          const T* ir = ip + b * 3 * H;
          const T* hr = hp_ + b * 3 * H;
          T* ar = ap + b * 4 * H;
          for (int64_t j = 0; j < 2 * H; ++j) {
            ar[j] = ir[j] + hr[j];
          }
          act_fn.sigmoid(ar, ar, 2 * H); // r, z
          for (int64_t j = 0; j < H; ++j) {
            const T hn = hr[2 * H + j];
            ar[3 * H + j] = hn;
            ar[2 * H + j] = ir[2 * H + j] + ar[j] * hn;
          }
          act_fn.tanh(ar + 2 * H, ar + 2 * H, H); // n
          for (int64_t j = 0; j < H; ++j) {
            const T z = ar[H + j], n = ar[2 * H + j];
            op_[b * H + j] = (T(1) - z) * n + z * hv[b * H + j];
          }
        }
      });
    }
  });
  return scope.done(
      out,
      [B, H, sa = scope.save(act), sh = scope.save(hc)](
          const autograd::GradList& go) {
        const Tensor a = sa.unpack(), hc = sh.unpack();
        const Tensor g = go[0].contiguous();
        Tensor dgi = detail::new_tensor({B, 3 * H}, a.dtype());
        Tensor dgh = detail::new_tensor({B, 3 * H}, a.dtype());
        Tensor dh = detail::new_tensor({B, H}, a.dtype());
        dispatch_dtype(a.dtype(), "gru_cell_gates_backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* ap = a.data_ptr<T>();
            const T* hv = hc.data_ptr<T>();
            const T* gp = g.data_ptr<T>();
            T* dip = dgi.data_ptr<T>();
            T* dhp = dgh.data_ptr<T>();
            T* dp = dh.data_ptr<T>();
            parallel_for(0, B, kRowGrain, [&](int64_t b0, int64_t b1) {
              for (int64_t b = b0; b < b1; ++b) {
                const T* ar = ap + b * 4 * H;
                T* di = dip + b * 3 * H;
                T* dhh = dhp + b * 3 * H;
                for (int64_t j = 0; j < H; ++j) {
                  const int64_t k = b * H + j;
                  const T r = ar[j], z = ar[H + j], n = ar[2 * H + j],
                          hn = ar[3 * H + j];
                  const T gk = gp[k];
                  const T dn = gk * (T(1) - z) * (T(1) - n * n);
                  const T dz = gk * (hv[k] - n) * (z * (T(1) - z));
                  const T dr = dn * hn * (r * (T(1) - r));
                  di[j] = dr;
                  di[H + j] = dz;
                  di[2 * H + j] = dn;
                  dhh[j] = dr;
                  dhh[H + j] = dz;
                  dhh[2 * H + j] = dn * r;
                  dp[k] = gk * z;
                }
              }
            });
          }
        });
        return autograd::GradList{dgi, dgh, dh};
      });
}

std::vector<Tensor> split_rows(const Tensor& x, const IntArg& rows) {
  const char* op = "split_rows";
  detail::OpScope scope(op, {x});
  DITTO_CHECK(x.defined() && x.dim() >= 1, ValueError, op, "x needs a dim 0");
  int64_t total = 0;
  for (int64_t r : rows) {
    DITTO_CHECK(r >= 0, ValueError, op, "negative block size ", r);
    total += r;
  }
  DITTO_CHECK(
      total == x.size(0),
      ValueError,
      op,
      "block sizes sum to ",
      total,
      " but x has ",
      x.size(0),
      " rows");
  const Tensor c = x.contiguous();
  const int64_t row_bytes =
      x.size(0) == 0 ? 0 : c.numel() / x.size(0) * c.element_size();
  std::vector<Tensor> outs;
  outs.reserve(rows.size());
  const char* src = static_cast<const char*>(c.raw_data());
  for (int64_t r : rows) {
    Shape s = x.sizes();
    s[0] = r;
    Tensor o = detail::new_tensor(s, x.dtype());
    if (r > 0) {
      std::memcpy(o.raw_data(), src, size_t(r * row_bytes));
    }
    src += r * row_bytes;
    outs.push_back(o);
  }
  scope.done(
      outs,
      [rows, sizes = x.sizes(), dt = x.dtype()](const autograd::GradList& g) {
        std::vector<Tensor> parts;
        for (size_t i = 0; i < rows.size(); ++i) {
          Shape s = sizes;
          s[0] = rows[i];
          parts.push_back(g[i].defined() ? g[i] : zeros(s, dt));
        }
        return autograd::GradList{cat(parts, 0)};
      });
  return outs;
}

} // namespace ditto::nn::functional

namespace ditto::detail {

Tensor recurrent_weight_carrier(
    const Tensor& base,
    const Tensor& weight,
    std::shared_ptr<Tensor> rows) {
  OpScope scope("recurrent_weight_carrier", {base, weight});
  Tensor out = base.contiguous().clone();
  return scope.done(out, [rows](const autograd::GradList& g) {
    if (!g[0].defined()) {
      return autograd::GradList{Tensor(), Tensor()};
    }
    // rows is left empty when weight needs no gradient (frozen W_hh).
    return autograd::GradList{
        g[0], rows->defined() ? mm(g[0].t(), *rows) : Tensor()};
  });
}

Tensor recurrent_step(const Tensor& input, const Tensor& h, const Tensor& w_t) {
  OpScope scope("recurrent_step", {input, h});
  Tensor out = addmm(input, h, w_t);
  return scope.done(out, [w_t](const autograd::GradList& g) {
    return autograd::GradList{g[0], mm(g[0], w_t.t())};
  });
}

} // namespace ditto::detail
