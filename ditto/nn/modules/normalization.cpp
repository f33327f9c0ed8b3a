#include "ditto/nn/modules/normalization.h"

#include "ditto/autograd/graph.h"
#include "ditto/core/deferred.h"
#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional/normalization.h"

namespace ditto::nn {

BatchNormImplBase::BatchNormImplBase(
    const char* name,
    const BatchNormOptions& o,
    IntList ranks)
    : Module(name), options(o), ranks_(std::move(ranks)) {
  check_positive(o.num_features(), name, "num_features");
  const int64_t c = o.num_features();
  if (o.affine()) {
    weight = register_parameter("weight", uninitialized({c}));
    bias = register_parameter("bias", uninitialized({c}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", uninitialized({c}));
    running_var = register_buffer("running_var", uninitialized({c}));
    num_batches_tracked =
        register_buffer("num_batches_tracked", detail::new_tensor({}, kInt64));
  }
  defer_reset([w = weight,
               b = bias,
               rm = running_mean,
               rv = running_var,
               n = num_batches_tracked] { fill_ones_zeros(w, b, rm, rv, n); });
}

Tensor BatchNormImplBase::forward(const Tensor& x) {
  ForwardScope scope(*this);
  const char* name = type_name().c_str();
  DITTO_CHECK(x.defined(), ValueError, name, "undefined input");
  bool rank_ok = false;
  for (int64_t r : ranks_) {
    rank_ok = rank_ok || x.dim() == r;
  }
  DITTO_CHECK(
      rank_ok,
      ValueError,
      name,
      "expected ",
      ranks_.size() == 1 ? std::to_string(ranks_[0]) + "D" : "2D or 3D",
      " input (got ",
      x.dim(),
      "D input)");
  DITTO_CHECK(
      x.size(1) == options.num_features(),
      ValueError,
      name,
      "running_mean should contain ",
      x.size(1),
      " elements not ",
      options.num_features());
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    DITTO_CHECK(
        !(x.numel() / x.size(1) <= 1),
        ValueError,
        name,
        "Expected more than 1 value per channel when training, got input "
        "size ",
        shape_str(x.sizes()));
    autograd::NoGradGuard no_grad;
    num_batches_tracked.add_(int64_t(1));
    if (!options.momentum()) {
      factor = 1.0 / double(num_batches_tracked.item<int64_t>());
    }
  }
  const bool use_running = !is_training() && running_mean.defined();
  return functional::batch_norm(
      x,
      running_mean,
      running_var,
      weight,
      bias,
      !use_running,
      factor,
      options.eps());
}

std::string BatchNormImplBase::extra_repr() const {
  const auto& o = options;
  return std::to_string(o.num_features()) + ", eps=" + py_float(o.eps()) +
      ", momentum=" + (o.momentum() ? py_float(*o.momentum()) : "None") +
      ", affine=" + py_bool(o.affine()) +
      ", track_running_stats=" + py_bool(o.track_running_stats());
}

template <int D>
InstanceNormNd<D>::InstanceNormNd(const InstanceNormOptions& o)
    : Module("InstanceNorm" + std::to_string(D) + "d"), options(o) {
  check_positive(o.num_features(), type_name().c_str(), "num_features");
  const int64_t c = o.num_features();
  if (o.affine()) {
    weight = register_parameter("weight", uninitialized({c}));
    bias = register_parameter("bias", uninitialized({c}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", uninitialized({c}));
    running_var = register_buffer("running_var", uninitialized({c}));
    num_batches_tracked =
        register_buffer("num_batches_tracked", detail::new_tensor({}, kInt64));
  }
  defer_reset([w = weight,
               b = bias,
               rm = running_mean,
               rv = running_var,
               n = num_batches_tracked] { fill_ones_zeros(w, b, rm, rv, n); });
}

template <int D>
Tensor InstanceNormNd<D>::forward(const Tensor& x) {
  ForwardScope scope(*this);
  const char* name = type_name().c_str();
  DITTO_CHECK(
      x.defined() && (x.dim() == D + 1 || x.dim() == D + 2),
      ValueError,
      name,
      "expected ",
      D + 1,
      "D (unbatched) or ",
      D + 2,
      "D (batched) input, got ",
      x.defined() ? shape_str(x.sizes()) : std::string("an undefined tensor"));
  if (x.dim() == D + 1) { // unbatched: PyTorch's unsqueeze and squeeze
    return forward(x.unsqueeze(0)).squeeze(0);
  }
  DITTO_CHECK(
      !(options.affine() || options.track_running_stats()) ||
          x.size(1) == options.num_features(),
      ValueError,
      name,
      "expected input with ",
      options.num_features(),
      " channels, got sizes ",
      shape_str(x.sizes()));
  // PyTorch's InstanceNorm leaves num_batches_tracked at 0.
  const bool use_input_stats = is_training() || !options.track_running_stats();
  return functional::instance_norm(
      x,
      running_mean,
      running_var,
      weight,
      bias,
      use_input_stats,
      options.momentum(),
      options.eps());
}

template <int D>
std::string InstanceNormNd<D>::extra_repr() const {
  const auto& o = options;
  return std::to_string(o.num_features()) + ", eps=" + py_float(o.eps()) +
      ", momentum=" + py_float(o.momentum()) +
      ", affine=" + py_bool(o.affine()) +
      ", track_running_stats=" + py_bool(o.track_running_stats());
}

template class InstanceNormNd<1>;
template class InstanceNormNd<2>;
template class InstanceNormNd<3>;

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o)
    : Module("LayerNorm"), options(o) {
  DITTO_CHECK(
      !o.normalized_shape().empty(),
      ValueError,
      "LayerNorm",
      "normalized_shape must have at least one size");
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", uninitialized(o.normalized_shape()));
    bias = register_parameter("bias", uninitialized(o.normalized_shape()));
    defer_reset([w = weight, b = bias] { fill_ones_zeros(w, b); });
  }
}

Tensor LayerNormImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  return functional::layer_norm(
      x, options.normalized_shape(), weight, bias, options.eps());
}

std::string LayerNormImpl::extra_repr() const {
  return py_tuple(
             options.normalized_shape(), options.normalized_shape().size()) +
      ", eps=" + py_float(options.eps()) +
      ", elementwise_affine=" + py_bool(options.elementwise_affine());
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& o)
    : Module("GroupNorm"), options(o) {
  DITTO_CHECK(
      o.num_groups() > 0 && o.num_channels() % o.num_groups() == 0,
      ValueError,
      "GroupNorm",
      "num_channels must be divisible by num_groups");
  if (o.affine()) {
    weight = register_parameter("weight", uninitialized({o.num_channels()}));
    bias = register_parameter("bias", uninitialized({o.num_channels()}));
    defer_reset([w = weight, b = bias] { fill_ones_zeros(w, b); });
  }
}

Tensor GroupNormImpl::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  DITTO_CHECK(
      x.defined() && x.dim() >= 2 && x.size(1) == options.num_channels(),
      ValueError,
      "GroupNorm",
      "expected an input (N, ",
      options.num_channels(),
      ", ...), got sizes ",
      shape_str(x.defined() ? x.sizes() : Shape{}));
  return functional::group_norm(
      x, options.num_groups(), weight, bias, options.eps());
}

std::string GroupNormImpl::extra_repr() const {
  return std::to_string(options.num_groups()) + ", " +
      std::to_string(options.num_channels()) +
      ", eps=" + py_float(options.eps()) +
      ", affine=" + py_bool(options.affine());
}

} // namespace ditto::nn
