#include "ditto/nn/init.h"

#include <cmath>
#include <vector>

#include "ditto/autograd/graph.h"
#include "ditto/core/error.h"
#include "ditto/determinism/context.h"
#include "ditto/ops/decomp.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto::nn::init {
namespace {

bool has_zero_size(const Tensor& t) {
  return t.numel() == 0;
}

void check_tensor(const Tensor& t, const char* op) {
  DITTO_CHECK(t.defined(), ValueError, op, "undefined tensor");
}

double fan(const Tensor& t, FanMode mode) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return double(mode == FanMode::FanIn ? in : out);
}

// The fills of every initializer: in place, not recorded.
template <typename F>
Tensor fill(const Tensor& t, const char* op, F f) {
  check_tensor(t, op);
  autograd::NoGradGuard no_grad;
  Tensor h = t;
  f(h);
  return t;
}

} // namespace

double calculate_gain(Nonlinearity nl, std::optional<double> param) {
  switch (nl) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv1d:
    case Nonlinearity::Conv2d:
    case Nonlinearity::Conv3d:
    case Nonlinearity::ConvTranspose1d:
    case Nonlinearity::ConvTranspose2d:
    case Nonlinearity::ConvTranspose3d:
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: {
      const double slope = param.value_or(0.01);
      return std::sqrt(2.0 / (1 + slope * slope));
    }
    case Nonlinearity::SELU:
      return 3.0 / 4;
  }
  return 1.0;
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  check_tensor(t, "calculate_fan_in_and_fan_out");
  DITTO_CHECK(
      t.dim() >= 2,
      ValueError,
      "calculate_fan_in_and_fan_out",
      "Fan in and fan out can not be computed for tensor with fewer than 2 "
      "dimensions");
  int64_t rf = 1;
  for (int64_t d = 2; d < t.dim(); ++d) {
    rf *= t.size(d);
  }
  return {t.size(1) * rf, t.size(0) * rf};
}

Tensor uniform_(const Tensor& t, double a, double b, const OptGen& gen) {
  return fill(t, "uniform_", [&](Tensor& h) { h.uniform_(a, b, gen); });
}

Tensor normal_(const Tensor& t, double mean, double std, const OptGen& gen) {
  return fill(t, "normal_", [&](Tensor& h) { h.normal_(mean, std, gen); });
}

Tensor constant_(const Tensor& t, double value) {
  return fill(t, "constant_", [&](Tensor& h) { h.fill_(value); });
}

Tensor zeros_(const Tensor& t) {
  return fill(t, "zeros_", [](Tensor& h) { h.zero_(); });
}

Tensor ones_(const Tensor& t) {
  return fill(t, "ones_", [](Tensor& h) { h.fill_(1.0); });
}

Tensor eye_(const Tensor& t) {
  check_tensor(t, "eye_");
  DITTO_CHECK(
      t.dim() == 2,
      ValueError,
      "eye_",
      "Only tensors with 2 dimensions are supported, got ",
      t.dim());
  return fill(t, "eye_", [](Tensor& h) {
    h.zero_();
    for (int64_t i = 0; i < std::min(h.size(0), h.size(1)); ++i) {
      h.select(0, i).select(0, i).fill_(1.0);
    }
  });
}

Tensor kaiming_uniform_(
    const Tensor& t,
    double a,
    FanMode mode,
    Nonlinearity nl,
    const OptGen& gen) {
  check_tensor(t, "kaiming_uniform_");
  if (has_zero_size(t)) {
    determinism::warn(
        "kaiming_uniform_", "Initializing zero-element tensors is a no-op");
    return t;
  }
  // In this order, in double, as torch.nn.init.
  const double gain = calculate_gain(nl, a);
  const double std = gain / std::sqrt(fan(t, mode));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound, gen);
}

Tensor kaiming_normal_(
    const Tensor& t,
    double a,
    FanMode mode,
    Nonlinearity nl,
    const OptGen& gen) {
  check_tensor(t, "kaiming_normal_");
  if (has_zero_size(t)) {
    determinism::warn(
        "kaiming_normal_", "Initializing zero-element tensors is a no-op");
    return t;
  }
  const double gain = calculate_gain(nl, a);
  const double std = gain / std::sqrt(fan(t, mode));
  return normal_(t, 0.0, std, gen);
}

Tensor xavier_uniform_(const Tensor& t, double gain, const OptGen& gen) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  const double std = gain * std::sqrt(2.0 / double(in + out));
  const double a = std::sqrt(3.0) * std;
  return uniform_(t, -a, a, gen);
}

Tensor xavier_normal_(const Tensor& t, double gain, const OptGen& gen) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  const double std = gain * std::sqrt(2.0 / double(in + out));
  return normal_(t, 0.0, std, gen);
}

Tensor trunc_normal_(
    const Tensor& t,
    double mean,
    double std,
    double a,
    double b,
    const OptGen& gen) {
  check_tensor(t, "trunc_normal_");
  DITTO_CHECK(
      a < b && std > 0,
      ValueError,
      "trunc_normal_",
      "expected a < b and std > 0, got a=",
      a,
      ", b=",
      b,
      ", std=",
      std);
  if (mean < a - 2 * std || mean > b + 2 * std) {
    determinism::warn(
        "trunc_normal_",
        "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
        "distribution of values may be incorrect.");
  }
  // In this order, in double, as torch.nn.init._no_grad_trunc_normal_.
  auto cdf = [](double x) { return (1. + std::erf(x / std::sqrt(2.))) / 2.; };
  const double l = cdf((a - mean) / std);
  const double u = cdf((b - mean) / std);
  return fill(t, "trunc_normal_", [&](Tensor& h) {
    h.uniform_(2 * l - 1, 2 * u - 1, gen);
    h.copy_(erfinv(h));
    h.mul_(std * std::sqrt(2.));
    h.add_(mean);
    h.clamp_(a, b);
  });
}

Tensor orthogonal_(const Tensor& t, double gain, const OptGen& gen) {
  check_tensor(t, "orthogonal_");
  DITTO_CHECK(
      t.dim() >= 2,
      ValueError,
      "orthogonal_",
      "Only tensors with 2 or more dimensions are supported");
  if (t.numel() == 0) {
    return t;
  }
  const int64_t rows = t.size(0);
  const int64_t cols = t.numel() / rows;
  return fill(t, "orthogonal_", [&](Tensor& h) {
    Tensor f = empty({rows, cols}, h.dtype());
    f.normal_(0.0, 1.0, gen);
    if (rows < cols) {
      f = f.t().contiguous();
    }
    auto qr = linalg::qr(f);
    Tensor q = qr.first;
    const Tensor& r = qr.second;
    // q *= sign(diag(r)), column by column (a zero diagonal gives 0).
    const int64_t k = std::min(r.size(0), r.size(1));
    std::vector<double> signs(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
      const double v = r.select(0, i).select(0, i).item_scalar().to<double>();
      signs[size_t(i)] = v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
    }
    q = mul(q, tensor(signs).to(q.dtype()));
    if (rows < cols) {
      q = q.t();
    }
    h.copy_(q.reshape(h.sizes()));
    h.mul_(gain);
  });
}

} // namespace ditto::nn::init
