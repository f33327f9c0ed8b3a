// CTC loss as PyTorch 1.13's CPU implementation (aten/src/ATen/native/
// LossCTC.cpp): the alpha recursion forward, the beta recursion and its
// gradient formula backward, in log space, with ditto's own exp and log.
// One task per sample, each sample's recursion serial: the same bits for
// any thread count.

#include "ditto/nn/functional/loss.h"

#include <algorithm>
#include <limits>

#include "ditto/core/parallel.h"
#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/kernels/cpu/math.h"
#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto::nn::functional {
namespace {

namespace km = kernels::scalar::math;

const char* const kOp = "ctc_loss";

// Where each sample's target starts in targets and the step between labels.
struct CtcGeom {
  int64_t T = 0, N = 0, C = 0, max_target = 0, target_stride = 1;
  std::vector<int64_t> offsets;
};

CtcGeom ctc_geom(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& il,
    const std::vector<int64_t>& tl,
    int64_t blank) {
  detail::check_floating(log_probs, kOp);
  DITTO_CHECK(
      log_probs.dim() == 3,
      ValueError,
      kOp,
      "log_probs must be (T, N, C), got sizes ",
      shape_str(log_probs.sizes()));
  DITTO_CHECK(targets.defined(), ValueError, kOp, "undefined targets");
  DITTO_CHECK(
      targets.dtype() == kInt64 || targets.dtype() == kInt32,
      TypeError,
      kOp,
      "targets must be int64 or int32, got ",
      dtype_name(targets.dtype()));
  CtcGeom g;
  g.T = log_probs.size(0);
  g.N = log_probs.size(1);
  g.C = log_probs.size(2);
  DITTO_CHECK(
      blank < g.C && blank >= 0,
      ValueError,
      kOp,
      "blank must be in label range");
  DITTO_CHECK(
      int64_t(il.size()) == g.N,
      ValueError,
      kOp,
      "input_lengths must be of size batch_size");
  DITTO_CHECK(
      int64_t(tl.size()) == g.N,
      ValueError,
      kOp,
      "target_lengths must be of size batch_size");
  for (int64_t b = 0; b < g.N; ++b) {
    DITTO_CHECK(
        tl[b] >= 0,
        ValueError,
        kOp,
        "target_lengths must be non-negative, got ",
        tl[b],
        " for sample ",
        b);
    DITTO_CHECK(
        il[b] >= 0,
        ValueError,
        kOp,
        "input_lengths must be non-negative, got ",
        il[b],
        " for sample ",
        b);
  }
  g.offsets.resize(size_t(g.N));
  if (targets.dim() == 1) {
    int64_t pos = 0;
    for (int64_t b = 0; b < g.N; ++b) {
      g.offsets[b] = pos;
      pos += tl[b];
      g.max_target = std::max(g.max_target, tl[b]);
    }
    DITTO_CHECK(
        targets.size(0) == pos,
        ValueError,
        kOp,
        "Expected tensor to have size ",
        pos,
        " at dimension 0, but got size ",
        targets.size(0),
        " for argument #2 'targets' (while checking arguments for "
        "ctc_loss_cpu)");
  } else {
    DITTO_CHECK(
        targets.dim() == 2,
        ValueError,
        kOp,
        "targets must be (N, S) or 1-D, got sizes ",
        shape_str(targets.sizes()));
    for (int64_t b = 0; b < g.N; ++b) {
      g.offsets[b] = b * targets.size(1);
      g.max_target = std::max(g.max_target, tl[b]);
    }
    DITTO_CHECK(
        targets.size(0) == g.N,
        ValueError,
        kOp,
        "Expected tensor to have size ",
        g.N,
        " at dimension 0, but got size ",
        targets.size(0),
        " for argument #2 'targets' (while checking arguments for "
        "ctc_loss_cpu)");
    DITTO_CHECK(
        targets.size(1) >= g.max_target,
        ValueError,
        kOp,
        "Expected tensor to have size at least ",
        g.max_target,
        " at dimension 1, but got size ",
        targets.size(1),
        " for argument #2 'targets' (while checking arguments for "
        "ctc_loss_cpu)");
  }
  for (int64_t b = 0; b < g.N; ++b) {
    DITTO_CHECK(
        il[b] <= g.T,
        ValueError,
        kOp,
        "Expected input_lengths to have value at most ",
        g.T,
        ", but got value ",
        il[b],
        " (while checking arguments for ctc_loss_cpu)");
  }
  return g;
}

// The blank-extended target of one sample: l'[s] = blank for even s,
// target[(s - 1) / 2] for odd s.
struct Extended {
  const int64_t* tgt;
  int64_t blank;
  int64_t operator()(int64_t s) const {
    return s % 2 == 0 ? blank : tgt[s / 2];
  }
};

// The active capability's exp and log loops (kernel_table.h): ditto's own
// functions, vectorized, the same bits in every capability.
struct MathLoops {
  kernels::UnaryLoop exp, log;
  explicit MathLoops(Dtype d)
      : exp(kernels::kernel_table()
                .unary[int(kernels::UnaryOp::Exp)][dtype_index(d)]),
        log(kernels::kernel_table()
                .unary[int(kernels::UnaryOp::Log)][dtype_index(d)]) {}
  template <typename T>
  void exp_(T* x, int64_t n) const {
    exp(n, reinterpret_cast<char*>(x), reinterpret_cast<const char*>(x), 1, 1);
  }
  template <typename T>
  void log_(T* x, int64_t n) const {
    log(n, reinterpret_cast<char*>(x), reinterpret_cast<const char*>(x), 1, 1);
  }
};

// The step of both recursions over a row of n states: out[s] =
// log(exp(v1 - m) + exp(v2 - m) + exp(v3 - m)) + m + lp[s], m the largest
// of the three (0 if all are -inf): PyTorch's formula, with the exps and
// the logs of a row in one vector loop each. buf holds 4n values.
template <typename T>
void lse_row(
    int64_t n,
    const T* v1,
    const T* v2,
    const T* v3,
    const T* lp,
    T* out,
    T* buf,
    const MathLoops& math) {
  const T ninf = -std::numeric_limits<T>::infinity();
  T* m = buf;
  T* d = buf + n;
  for (int64_t s = 0; s < n; ++s) {
    T ms = std::max(std::max(v1[s], v2[s]), v3[s]);
    ms = ms == ninf ? T(0) : ms;
    m[s] = ms;
    d[s] = std::max(v1[s] - ms, T(-1000));
    d[n + s] = std::max(v2[s] - ms, T(-1000));
    d[2 * n + s] = std::max(v3[s] - ms, T(-1000));
  }
  math.exp_(d, 3 * n);
  for (int64_t s = 0; s < n; ++s) {
    d[s] = d[s] + d[n + s] + d[2 * n + s];
  }
  math.log_(d, n);
  for (int64_t s = 0; s < n; ++s) {
    out[s] = d[s] + m[s] + lp[s];
  }
}

// Per-sample rows: lp of the extended target's labels at one frame, the
// two shifted copies of the previous (or next) row, and the skip rule.
template <typename T>
struct Rows {
  std::vector<T> lpe, v2, v3, buf;
  std::vector<char> skip; // skip[s]: s - 2 -> s allowed (s >= 2)
  void init(int64_t n, const Extended& ext) {
    lpe.assign(size_t(n), T(0));
    v2.assign(size_t(n), T(0));
    v3.assign(size_t(n), T(0));
    buf.assign(size_t(4 * n), T(0));
    skip.assign(size_t(n) + 2, 0);
    for (int64_t s = 2; s < n; ++s) {
      skip[s] = ext(s) != ext(s - 2);
    }
  }
  void gather(int64_t n, const Extended& ext, const T* lpt) {
    for (int64_t s = 0; s < n; ++s) {
      lpe[s] = lpt[ext(s)];
    }
  }
};

// PyTorch's _ctc_loss: each sample's negative log-likelihood (no
// reduction); its frame has no record of its own, as ctc_loss calls it.
Tensor ctc_loss_nll(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths,
    int64_t blank,
    bool zero_infinity) {
  detail::OpScope scope("_ctc_loss", {log_probs});
  const CtcGeom g =
      ctc_geom(log_probs, targets, input_lengths, target_lengths, blank);
  const Tensor lp = log_probs.contiguous();
  const Tensor tg = targets.to(kInt64).contiguous();
  // A target longer than its input has no alignment: PyTorch returns an
  // infinite loss (NaN gradients) for it. An error names it instead,
  // unless zero_infinity asks for such samples to count zero, as in
  // PyTorch.
  for (int64_t b = 0; b < g.N && !zero_infinity; ++b) {
    DITTO_CHECK(
        target_lengths[b] <= input_lengths[b],
        ValueError,
        kOp,
        "target ",
        b,
        " has ",
        target_lengths[b],
        " labels but its input only ",
        input_lengths[b],
        " frames: no alignment exists (the loss would be inf; pass "
        "zero_infinity=true to count such samples as zero)");
  }
  {
    // Every label in range before anything is computed.
    const int64_t* tp = tg.data_ptr<int64_t>();
    for (int64_t b = 0; b < g.N; ++b) {
      for (int64_t k = 0; k < target_lengths[b]; ++k) {
        const int64_t v = tp[g.offsets[b] + k];
        DITTO_CHECK(
            v >= 0 && v < g.C,
            IndexError,
            kOp,
            "target ",
            v,
            " of sample ",
            b,
            " is out of range for ",
            g.C,
            " classes");
      }
    }
  }
  const int64_t S = 2 * g.max_target + 1;
  Tensor alpha = detail::new_tensor({g.N, g.T, S}, lp.dtype());
  Tensor nll = detail::new_tensor({g.N}, lp.dtype());
  dispatch_dtype(lp.dtype(), kOp, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T ninf = -std::numeric_limits<T>::infinity();
      const T* lpp = lp.data_ptr<T>();
      const int64_t* tp = tg.data_ptr<int64_t>();
      T* ap = alpha.data_ptr<T>();
      T* np = nll.data_ptr<T>();
      const int64_t lp_t = g.N * g.C; // stride of t in log_probs
      const MathLoops math(lp.dtype());
      parallel_for(0, g.N, 1, [&](int64_t b0, int64_t b1) {
        Rows<T> rows;
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t il = input_lengths[b], tl = target_lengths[b];
          const Extended ext{tp + g.offsets[b], blank};
          T* la = ap + b * g.T * S;
          std::fill(la, la + g.T * S, ninf);
          const T* lpb = lpp + b * g.C;
          if (il == 0) {
            np[b] = tl == 0 ? T(0) : -ninf;
            continue;
          }
          la[0] = lpb[blank];
          if (tl > 0) {
            la[1] = lpb[ext(1)];
          }
          const int64_t n = 2 * tl + 1;
          rows.init(n, ext);
          for (int64_t t = 1; t < il; ++t) {
            const T* prev = la + (t - 1) * S;
            rows.gather(n, ext, lpb + t * lp_t);
            for (int64_t s = 0; s < n; ++s) {
              rows.v2[s] = s > 0 ? prev[s - 1] : ninf;
              rows.v3[s] = rows.skip[s] ? prev[s - 2] : ninf;
            }
            lse_row(
                n,
                prev,
                rows.v2.data(),
                rows.v3.data(),
                rows.lpe.data(),
                la + t * S,
                rows.buf.data(),
                math);
          }
          const T* last = la + (il - 1) * S;
          if (tl == 0) {
            np[b] = -last[0];
          } else {
            const T l1 = last[2 * tl], l2 = last[2 * tl - 1];
            T m = std::max(l1, l2);
            m = m == ninf ? T(0) : m;
            np[b] = -(km::log(km::exp(l1 - m) + km::exp(l2 - m)) + m);
          }
        }
      });
    }
  });
  return scope.done(
      nll,
      [g,
       blank,
       zero_infinity,
       input_lengths,
       target_lengths,
       S,
       slp = scope.save(lp),
       sal = scope.save(alpha),
       snll = scope.save(nll),
       tg](const autograd::GradList& go) {
        const Tensor lp = slp.unpack(), alpha = sal.unpack(),
                     nll = snll.unpack();
        const Tensor gout = go[0].contiguous();
        Tensor grad = zeros({g.T, g.N, g.C}, lp.dtype());
        dispatch_dtype(lp.dtype(), "ctc_loss_backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T ninf = -std::numeric_limits<T>::infinity();
            const T* lpp = lp.data_ptr<T>();
            const T* ap = alpha.data_ptr<T>();
            const T* np = nll.data_ptr<T>();
            const T* gp = gout.data_ptr<T>();
            const int64_t* tp = tg.data_ptr<int64_t>();
            T* gr = grad.data_ptr<T>();
            const int64_t lp_t = g.N * g.C;
            const MathLoops math(lp.dtype());
            parallel_for(0, g.N, 1, [&](int64_t b0, int64_t b1) {
              std::vector<T> beta, lcab, mc, sc, ms, ex2;
              Rows<T> rows;
              for (int64_t b = b0; b < b1; ++b) {
                const int64_t il = input_lengths[b], tl = target_lengths[b];
                const T nl = np[b];
                // Frames t >= il, zero-length inputs and (with
                // zero_infinity) impossible targets keep a zero gradient.
                if (il == 0 || (zero_infinity && nl == -ninf)) {
                  continue;
                }
                const Extended ext{tp + g.offsets[b], blank};
                const T* la = ap + b * g.T * S;
                const T* lpb = lpp + b * g.C;
                T* gb = gr + b * g.C;
                const int64_t e = 2 * tl, n = e + 1;
                beta.assign(size_t(il * n), ninf);
                lcab.assign(size_t(n), ninf);
                ms.assign(size_t(n), T(0));
                rows.init(n, ext);
                T* lb = beta.data();
                {
                  const int64_t t = il - 1;
                  lb[t * n + e] = lpb[t * lp_t + blank];
                  if (tl > 0) {
                    lb[t * n + e - 1] = lpb[t * lp_t + ext(e - 1)];
                  }
                }
                for (int64_t t = il - 1; t >= 0; --t) {
                  T* cur = lb + t * n;
                  if (t < il - 1) {
                    const T* next = cur + n;
                    rows.gather(n, ext, lpb + t * lp_t);
                    for (int64_t s = 0; s < n; ++s) {
                      rows.v2[s] = s < e ? next[s + 1] : ninf;
                      rows.v3[s] =
                          s + 2 <= e && rows.skip[s + 2] ? next[s + 2] : ninf;
                    }
                    lse_row(
                        n,
                        next,
                        rows.v2.data(),
                        rows.v3.data(),
                        rows.lpe.data(),
                        cur,
                        rows.buf.data(),
                        math);
                  }
                  // log(sum of alpha beta over the states of each label):
                  // per label its largest term m, then one log of the sum
                  // of exp(term - m) in s order (a fixed order).
                  const T* lat = la + t * S;
                  mc.assign(size_t(g.C), ninf);
                  for (int64_t s = 0; s < n; ++s) {
                    lcab[s] = lat[s] + cur[s];
                    T& m = mc[size_t(ext(s))];
                    m = std::max(m, lcab[s]);
                  }
                  for (int64_t s = 0; s < n; ++s) {
                    ms[s] = mc[size_t(ext(s))];
                  }
                  for (int64_t s = 0; s < n; ++s) {
                    lcab[s] = std::max(lcab[s] - ms[s], T(-1000));
                  }
                  math.exp_(lcab.data(), n);
                  sc.assign(size_t(g.C), T(0));
                  for (int64_t s = 0; s < n; ++s) {
                    sc[size_t(ext(s))] += lcab[s];
                  }
                  T* row = gb + t * lp_t;
                  const T* lpt = lpb + t * lp_t;
                  const T gv = gp[b];
                  // sc[c] = log of the sum where a state has label c.
                  math.log_(sc.data(), g.C);
                  ex2.resize(size_t(2 * g.C));
                  for (int64_t c = 0; c < g.C; ++c) {
                    const T acc = mc[c] == ninf ? ninf : sc[c] + mc[c];
                    // NaN stays NaN (std::max returns its first argument).
                    ex2[c] = lpt[c];
                    ex2[g.C + c] = std::max(acc + nl - lpt[c], T(-1000));
                  }
                  math.exp_(ex2.data(), 2 * g.C);
                  for (int64_t c = 0; c < g.C; ++c) {
                    row[c] = (ex2[c] - ex2[g.C + c]) * gv;
                  }
                }
              }
            });
          }
        });
        return autograd::GradList{grad};
      });
}

} // namespace

Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const std::vector<int64_t>& input_lengths,
    const std::vector<int64_t>& target_lengths,
    int64_t blank,
    Reduction reduction,
    bool zero_infinity) {
  detail::OpScope op("ctc_loss", {log_probs}, detail::OpScope::kComposite);
  // PyTorch's composite: _ctc_loss, then zero_infinity, then the reduction.
  Tensor res = ctc_loss_nll(
      log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
  if (zero_infinity) {
    res = where(eq(res, std::numeric_limits<double>::infinity()), 0.0, res);
  }
  if (reduction == Reduction::Mean) {
    std::vector<double> tl;
    for (int64_t v : target_lengths) {
      tl.push_back(double(std::max<int64_t>(v, 1)));
    }
    return op.done(mean(div(res, tensor(tl).to(res.dtype()))));
  }
  if (reduction == Reduction::Sum) {
    return op.done(sum(res));
  }
  return op.done(res);
}

Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const Tensor& input_lengths,
    const Tensor& target_lengths,
    int64_t blank,
    Reduction reduction,
    bool zero_infinity) {
  return ctc_loss(
      log_probs,
      targets,
      detail::int_values(input_lengths, "ctc_loss", "input_lengths"),
      detail::int_values(target_lengths, "ctc_loss", "target_lengths"),
      blank,
      reduction,
      zero_infinity);
}

} // namespace ditto::nn::functional

namespace ditto {

// ---- the ATen forms (ditto/ops/composite/loss.ops.toml)

Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const Tensor& input_lengths,
    const Tensor& target_lengths,
    int64_t blank,
    int64_t reduction,
    bool zero_infinity) {
  return nn::functional::ctc_loss(
      log_probs,
      targets,
      input_lengths,
      target_lengths,
      blank,
      detail::reduction_of(reduction, "ctc_loss"),
      zero_infinity);
}

Tensor ctc_loss(
    const Tensor& log_probs,
    const Tensor& targets,
    const IntArg& input_lengths,
    const IntArg& target_lengths,
    int64_t blank,
    int64_t reduction,
    bool zero_infinity) {
  return nn::functional::ctc_loss(
      log_probs,
      targets,
      std::vector<int64_t>(input_lengths.begin(), input_lengths.end()),
      std::vector<int64_t>(target_lengths.begin(), target_lengths.end()),
      blank,
      detail::reduction_of(reduction, "ctc_loss"),
      zero_infinity);
}

} // namespace ditto
