// Normalization ops: batch_norm with PyTorch's CPU arithmetic and its
// backward, layer_norm, group_norm and normalize composed of recorded ops.

#include "ditto/nn/functional/normalization.h"

#include <cmath>

#include "ditto/nn/detail/nn_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/reduce.h"

namespace ditto::nn::functional {
namespace {

// x as (N, C, S), contiguous.
struct NormGeom {
  int64_t n, c, s;
};

thread_local RunningStatsRecorder* tls_recorder = nullptr;

template <typename T>
struct ChannelStats {
  T mean, invstd;
};

} // namespace

RunningStatsRecorder::RunningStatsRecorder() : previous_(tls_recorder) {
  tls_recorder = this;
}

RunningStatsRecorder::~RunningStatsRecorder() {
  tls_recorder = previous_;
}

std::vector<RunningStatsRecorder::Entry> RunningStatsRecorder::take() {
  return std::exchange(entries_, {});
}

RunningStatsRecorder* RunningStatsRecorder::current() {
  return tls_recorder;
}

void RunningStatsRecorder::record(Entry e) {
  entries_.push_back(std::move(e));
}

Tensor batch_norm(
    const Tensor& input,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& weight,
    const Tensor& bias,
    bool training,
    double momentum,
    double eps) {
  const char* op = "batch_norm";
  if (detail::is_storage(input) && is_floating(input.dtype())) {
    // Note [Storage dtypes]: in float32, rounded once; running statistics
    // of a storage dtype are updated through a float32 copy.
    Tensor rm = detail::upcast(running_mean), rv = detail::upcast(running_var);
    Tensor y = batch_norm(
                   detail::upcast(input),
                   rm,
                   rv,
                   detail::upcast(weight),
                   detail::upcast(bias),
                   training,
                   momentum,
                   eps)
                   .to(input.dtype());
    if (training && detail::is_storage(running_mean)) {
      autograd::NoGradGuard no_grad;
      const_cast<Tensor&>(running_mean).copy_(rm);
      const_cast<Tensor&>(running_var).copy_(rv);
    }
    return y;
  }
  detail::OpScope scope(op, {input, weight, bias});
  DITTO_CHECK(input.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      is_floating(input.dtype()),
      TypeError,
      op,
      "expected a floating input, got ",
      input.dtype());
  DITTO_CHECK(
      input.dim() >= 2,
      ValueError,
      op,
      "expected an input with at least 2 dims (N, C, ...), got sizes ",
      shape_str(input.sizes()));
  NormGeom g{input.size(0), input.size(1), 1};
  for (int64_t d = 2; d < input.dim(); ++d) {
    g.s *= input.size(d);
  }
  for (const Tensor* t : {&running_mean, &running_var, &weight, &bias}) {
    DITTO_CHECK(
        !t->defined() || (t->dim() == 1 && t->size(0) == g.c),
        ValueError,
        op,
        "expected running statistics, weight and bias of size {",
        g.c,
        "}, got ",
        shape_str(t->sizes()));
  }
  for (const Tensor* t : {&running_mean, &running_var}) {
    DITTO_CHECK(
        !t->defined() || t->dtype() == input.dtype(),
        TypeError,
        op,
        "running statistics of dtype ",
        t->dtype(),
        " for an input of dtype ",
        input.dtype());
  }
  DITTO_CHECK(
      running_mean.defined() == running_var.defined(),
      ValueError,
      op,
      "running_mean and running_var must both be given or both be absent");
  const bool use_batch = training || !running_mean.defined();
  const int64_t m = g.n * g.s;
  DITTO_CHECK(
      !(training && m <= 1),
      ValueError,
      op,
      "Expected more than 1 value per channel when training, got input size ",
      shape_str(input.sizes()));
  const Tensor x = input.contiguous();
  Tensor y = detail::new_tensor(input.sizes(), input.dtype());
  Tensor save_mean = detail::new_tensor({g.c}, input.dtype());
  Tensor save_invstd = detail::new_tensor({g.c}, input.dtype());
  // Deferred running statistics (RunningStatsRecorder): the batch's are
  // recorded, the buffers left alone.
  RunningStatsRecorder* recorder = training && running_mean.defined()
      ? RunningStatsRecorder::current()
      : nullptr;
  Tensor rec_var =
      recorder ? detail::new_tensor({g.c}, input.dtype()) : Tensor();
  dispatch_dtype(input.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* xp = x.data_ptr<T>();
      T* yp = y.data_ptr<T>();
      Tensor w =
          weight.defined() ? weight.to(input.dtype()).contiguous() : Tensor();
      Tensor b =
          bias.defined() ? bias.to(input.dtype()).contiguous() : Tensor();
      const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
      const T* bp = b.defined() ? b.data_ptr<T>() : nullptr;
      Tensor rm = running_mean.defined() ? running_mean.contiguous() : Tensor();
      Tensor rv = running_var.defined() ? running_var.contiguous() : Tensor();
      T* rmp = rm.defined() ? rm.data_ptr<T>() : nullptr;
      T* rvp = rv.defined() ? rv.data_ptr<T>() : nullptr;
      T* recvp = recorder ? rec_var.data_ptr<T>() : nullptr;
      T* smp = save_mean.data_ptr<T>();
      T* sip = save_invstd.data_ptr<T>();
      parallel_for(0, g.c, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          T mean, invstd;
          if (use_batch) {
            double sum = 0;
            for (int64_t n = 0; n < g.n; ++n) {
              const T* row = xp + (n * g.c + c) * g.s;
              for (int64_t i = 0; i < g.s; ++i) {
                sum += double(row[i]);
              }
            }
            mean = T(sum / double(m));
            double var_acc = 0;
            for (int64_t n = 0; n < g.n; ++n) {
              const T* row = xp + (n * g.c + c) * g.s;
              for (int64_t i = 0; i < g.s; ++i) {
                const T d = row[i] - mean;
                var_acc += double(T(d * d));
              }
            }
            const T var_sum = T(var_acc);
            invstd = T(1.0 / std::sqrt(double(T(var_sum / T(m))) + eps));
            if (training && rmp) {
              const T unbiased = T(var_sum / T(m - 1));
              if (recvp) {
                recvp[c] = unbiased;
              } else {
                rmp[c] = updated_running_mean(rmp[c], mean, momentum);
                rvp[c] = updated_running_var(rvp[c], unbiased, momentum);
              }
            }
          } else {
            mean = rmp[c];
            invstd = T(1.0 / std::sqrt(double(rvp[c]) + eps));
          }
          smp[c] = mean;
          sip[c] = invstd;
          const T a = T(invstd * (wp ? wp[c] : T(1)));
          const T shift = std::fma(-mean, a, bp ? bp[c] : T(0));
          for (int64_t n = 0; n < g.n; ++n) {
            const int64_t base = (n * g.c + c) * g.s;
            for (int64_t i = 0; i < g.s; ++i) {
              yp[base + i] = std::fma(xp[base + i], a, shift);
            }
          }
        }
      });
      // Written back only now, after everything that can fail.
      if (rm.defined() && training && !recorder) {
        if (!rm.is_same(running_mean)) {
          Tensor(running_mean).copy_(rm);
        }
        if (!rv.is_same(running_var)) {
          Tensor(running_var).copy_(rv);
        }
      }
    }
  });
  if (recorder) {
    recorder->record(
        {running_mean, running_var, save_mean.clone(), rec_var, momentum});
  } else if (training && running_mean.defined()) {
    running_mean.impl()->storage()->bump_version();
    running_var.impl()->storage()->bump_version();
  }
  return scope.done(
      y,
      [g,
       use_batch,
       sx = scope.save(input),
       sw = scope.save(weight),
       smean = save_mean,
       sinv = save_invstd,
       has_w = weight.defined(),
       has_b = bias.defined()](const autograd::GradList& grads) {
        // xhat = (x - mean) * invstd; dw = sum(g xhat), db = sum(g);
        // batch statistics: dx = a/M (M g - sum g - xhat sum(g xhat)),
        // running statistics: dx = a g; with a = invstd * w.
        Tensor xv = sx.unpack().contiguous();
        Tensor go = grads[0].contiguous();
        Tensor wv = has_w ? sw.unpack().contiguous() : Tensor();
        Tensor gx = detail::new_tensor(xv.sizes(), xv.dtype());
        Tensor gw = detail::new_tensor({g.c}, xv.dtype());
        Tensor gb = detail::new_tensor({g.c}, xv.dtype());
        dispatch_dtype(xv.dtype(), "batch_norm_backward", [&]<typename T>() {
          if constexpr (std::is_floating_point_v<T>) {
            const T* xp = xv.data_ptr<T>();
            const T* gp = go.data_ptr<T>();
            const T* wp = wv.defined() ? wv.data_ptr<T>() : nullptr;
            const T* mp = smean.data_ptr<T>();
            const T* ip = sinv.data_ptr<T>();
            T* gxp = gx.data_ptr<T>();
            T* gwp = gw.data_ptr<T>();
            T* gbp = gb.data_ptr<T>();
            const double m = double(g.n * g.s);
            parallel_for(0, g.c, 1, [&](int64_t c0, int64_t c1) {
              for (int64_t c = c0; c < c1; ++c) {
                double sum_g = 0, sum_gx = 0;
                for (int64_t n = 0; n < g.n; ++n) {
                  const int64_t base = (n * g.c + c) * g.s;
                  for (int64_t i = 0; i < g.s; ++i) {
                    const double xhat =
                        (double(xp[base + i]) - double(mp[c])) * double(ip[c]);
                    sum_g += double(gp[base + i]);
                    sum_gx += double(gp[base + i]) * xhat;
                  }
                }
                gwp[c] = T(sum_gx);
                gbp[c] = T(sum_g);
                const double a = double(ip[c]) * (wp ? double(wp[c]) : 1.0);
                for (int64_t n = 0; n < g.n; ++n) {
                  const int64_t base = (n * g.c + c) * g.s;
                  for (int64_t i = 0; i < g.s; ++i) {
                    const double gv = double(gp[base + i]);
                    if (use_batch) {
                      const double xhat =
                          (double(xp[base + i]) - double(mp[c])) *
                          double(ip[c]);
                      gxp[base + i] =
                          T(a / m * (m * gv - sum_g - xhat * sum_gx));
                    } else {
                      gxp[base + i] = T(a * gv);
                    }
                  }
                }
              }
            });
          }
        });
        return autograd::GradList{
            gx, has_w ? gw : Tensor(), has_b ? gb : Tensor()};
      });
}

Tensor layer_norm(
    const Tensor& x,
    const Shape& normalized_shape,
    const Tensor& weight,
    const Tensor& bias,
    double eps) {
  const char* op = "layer_norm";
  if (detail::is_storage(x) && is_floating(x.dtype())) {
    return layer_norm(
               detail::upcast(x),
               normalized_shape,
               detail::upcast(weight),
               detail::upcast(bias),
               eps)
        .to(x.dtype());
  }
  detail::OpScope scope(op, {x, weight, bias}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  detail::check_normalized_shape(x, normalized_shape, op);
  const int64_t k = int64_t(normalized_shape.size());
  for (const Tensor* t : {&weight, &bias}) {
    DITTO_CHECK(
        !t->defined() || t->sizes() == normalized_shape,
        ValueError,
        op,
        "weight and bias must have the normalized shape ",
        shape_str(normalized_shape),
        ", got ",
        shape_str(t->sizes()));
  }
  IntList dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) {
    dims.push_back(d);
  }
  Tensor centered = sub(x, mean(x, dims, true));
  Tensor var = mean(mul(centered, centered), dims, true);
  Tensor y = div(centered, sqrt(add(var, eps)));
  if (weight.defined()) {
    y = mul(y, weight);
  }
  if (bias.defined()) {
    y = add(y, bias);
  }
  return scope.done(y);
}

Tensor instance_norm(
    const Tensor& x,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& weight,
    const Tensor& bias,
    bool use_input_stats,
    double momentum,
    double eps) {
  const char* op = "instance_norm";
  detail::OpScope scope(
      op,
      {x, running_mean, running_var, weight, bias},
      detail::OpScope::kComposite);
  DITTO_CHECK(
      x.defined() && x.dim() >= 2,
      ValueError,
      op,
      "expected an input of at least 2 dims (N, C, ...), got ",
      x.defined() ? shape_str(x.sizes()) : std::string("an undefined tensor"));
  DITTO_CHECK(
      use_input_stats || (running_mean.defined() && running_var.defined()),
      ValueError,
      op,
      "Expected running_mean and running_var to be defined when "
      "use_input_stats is false");
  const int64_t b = x.size(0), c = x.size(1);
  int64_t spatial = 1;
  for (int64_t d = 2; d < x.dim(); ++d) {
    spatial *= x.size(d);
  }
  DITTO_CHECK(
      !use_input_stats || spatial > 1,
      ValueError,
      op,
      "Expected more than 1 spatial element when training, got input size ",
      shape_str(x.sizes()));
  for (const Tensor* t : {&running_mean, &running_var, &weight, &bias}) {
    DITTO_CHECK(
        !t->defined() || (t->dim() == 1 && t->size(0) == c),
        ValueError,
        op,
        "weight, bias and the running statistics must have ",
        c,
        " elements (the input's channels), got sizes ",
        shape_str(t->sizes()));
  }
  // Each per-channel tensor repeated for every sample: (N * C).
  auto repeated = [b, c](const Tensor& t) {
    return t.defined() ? t.view({1, c}).expand({b, c}).reshape({b * c})
                       : Tensor();
  };
  Tensor rm;
  Tensor rv;
  {
    autograd::NoGradGuard no_grad;
    if (running_mean.defined()) {
      rm = repeated(running_mean).clone();
    }
    if (running_var.defined()) {
      rv = repeated(running_var).clone();
    }
  }
  Shape shape = x.sizes();
  shape[0] = 1;
  shape[1] = b * c;
  Tensor out = batch_norm(
      x.contiguous().view(shape),
      rm,
      rv,
      repeated(weight),
      repeated(bias),
      use_input_stats,
      momentum,
      eps);
  if (running_mean.defined() && running_var.defined()) {
    // PyTorch writes back the mean over the samples of the copies, updated
    // or not (in eval mode that mean can round the statistics: kept).
    autograd::NoGradGuard no_grad;
    Tensor(running_mean).copy_(mean(rm.view({b, c}), {0})); // a handle
    Tensor(running_var).copy_(mean(rv.view({b, c}), {0}));
  }
  return scope.done(out.view(x.sizes()));
}

Tensor group_norm(
    const Tensor& x,
    int64_t num_groups,
    const Tensor& weight,
    const Tensor& bias,
    double eps) {
  const char* op = "group_norm";
  detail::OpScope scope(op, {x, weight, bias}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, op, "undefined input");
  DITTO_CHECK(
      x.dim() >= 2,
      ValueError,
      op,
      "Expected at least 2 dimensions for input tensor but received ",
      x.dim());
  const int64_t c = x.size(1);
  DITTO_CHECK(
      num_groups > 0 && c % num_groups == 0,
      ValueError,
      op,
      "Expected number of channels in input to be divisible by num_groups, "
      "but got input of shape ",
      shape_str(x.sizes()),
      " and num_groups=",
      num_groups);
  // The group size spelled out: -1 cannot be inferred for an empty batch.
  int64_t per_group = c / num_groups;
  for (int64_t d = 2; d < x.dim(); ++d) {
    per_group *= x.size(d);
  }
  Tensor grouped = x.reshape({x.size(0), num_groups, per_group});
  Tensor centered = sub(grouped, mean(grouped, {2}, true));
  Tensor var = mean(mul(centered, centered), {2}, true);
  Tensor y = div(centered, sqrt(add(var, eps))).reshape(x.sizes());
  Shape affine(size_t(x.dim()), 1);
  affine[1] = c;
  if (weight.defined()) {
    y = mul(y, weight.reshape(affine));
  }
  if (bias.defined()) {
    y = add(y, bias.reshape(affine));
  }
  return scope.done(y);
}

Tensor normalize(const Tensor& x, int64_t dim, double eps) {
  detail::OpScope op("normalize", {x}, detail::OpScope::kComposite);
  DITTO_CHECK(x.defined(), ValueError, "normalize", "undefined input");
  // An all-zero slice: its norm is 0 and sqrt's gradient there 0 / 0, a NaN
  // that clamp's zero gradient would not stop. sqrt sees 1 there instead
  // and the norm is put back to 0 (both `where`s pass every other slice's
  // values and gradients unchanged), so the slice's gradient is 1 / eps, as
  // torch's.
  Tensor squares = mul(x, x).sum({dim}, true);
  Tensor zero = eq(squares, 0.0);
  Tensor norm = where(zero, 0.0, sqrt(where(zero, 1.0, squares)));
  return op.done(div(x, clamp(norm, eps, std::nullopt)));
}

Tensor normalize(const Tensor& self, double p, int64_t dim, double eps) {
  return normalize(self, NormalizeFuncOptions().p(p).dim(dim).eps(eps));
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& o) {
  Tensor result;
  if (o.p() == 2.0) {
    result = normalize(input, o.dim(), o.eps());
  } else {
    detail::OpScope op("normalize", {input}, detail::OpScope::kComposite);
    DITTO_CHECK(input.defined(), ValueError, "normalize", "undefined input");
    Tensor denom =
        clamp(input.norm(o.p(), IntArg{o.dim()}, true), o.eps(), std::nullopt);
    result = op.done(div(input, denom.expand_as(input)));
  }
  if (!o.out()) {
    return result;
  }
  Tensor out = *o.out();
  DITTO_CHECK(out.defined(), ValueError, "normalize", "undefined out");
  out.resize_(result.sizes());
  out.copy_(result);
  return out;
}

} // namespace ditto::nn::functional

namespace ditto {

// ---- the ATen forms (ditto/ops/composite/normalization.ops.toml)

Tensor batch_norm(
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var,
    bool training,
    double momentum,
    double eps,
    bool /*cudnn_enabled*/) {
  return nn::functional::batch_norm(
      input,
      running_mean.value_or(Tensor()),
      running_var.value_or(Tensor()),
      weight.value_or(Tensor()),
      bias.value_or(Tensor()),
      training,
      momentum,
      eps);
}

Tensor instance_norm(
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var,
    bool use_input_stats,
    double momentum,
    double eps,
    bool /*cudnn_enabled*/) {
  return nn::functional::instance_norm(
      input,
      running_mean.value_or(Tensor()),
      running_var.value_or(Tensor()),
      weight.value_or(Tensor()),
      bias.value_or(Tensor()),
      use_input_stats,
      momentum,
      eps);
}

Tensor layer_norm(
    const Tensor& input,
    const IntArg& normalized_shape,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    double eps,
    bool /*cudnn_enable*/) {
  return nn::functional::layer_norm(
      input,
      normalized_shape,
      weight.value_or(Tensor()),
      bias.value_or(Tensor()),
      eps);
}

Tensor group_norm(
    const Tensor& input,
    int64_t num_groups,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    double eps,
    bool /*cudnn_enabled*/) {
  return nn::functional::group_norm(
      input,
      num_groups,
      weight.value_or(Tensor()),
      bias.value_or(Tensor()),
      eps);
}

} // namespace ditto
