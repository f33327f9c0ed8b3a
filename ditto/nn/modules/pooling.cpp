#include "ditto/nn/modules/pooling.h"

#include "ditto/core/error.h"
#include "ditto/nn/detail/module_util.h"
#include "ditto/nn/functional.h"

namespace ditto::nn {
namespace {

namespace F = functional;

std::string layer_name(const char* kind, int d) {
  return kind + std::to_string(d) + "d";
}

// v as the layer takes it: one int or d ints, ValueError naming the layer
// otherwise (before any call).
void check_dims(
    const IntList& v,
    int d,
    const std::string& layer,
    const char* what) {
  DITTO_CHECK(
      v.size() == 1 || int(v.size()) == d,
      ValueError,
      layer.c_str(),
      what,
      " must be one int",
      d == 1 ? "" : " or " + std::to_string(d) + " ints",
      ", got ",
      v.size(),
      " values");
}

template <int D>
std::tuple<Tensor, Tensor> max_pool(
    const Tensor& x,
    const MaxPoolOptions<D>& o) {
  using Fn = decltype(&F::max_pool1d_with_indices);
  static constexpr Fn kFns[] = {
      nullptr,
      &F::max_pool1d_with_indices,
      &F::max_pool2d_with_indices,
      &F::max_pool3d_with_indices};
  return kFns[D](
      x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

} // namespace

template <int D>
MaxPoolNd<D>::MaxPoolNd(const MaxPoolOptions<D>& o)
    : Module(layer_name("MaxPool", D)), options(o) {
  check_dims(o.kernel_size(), D, type_name(), "kernel_size");
}

template <int D>
std::tuple<Tensor, Tensor> MaxPoolNd<D>::forward_with_indices(
    const Tensor& x) const {
  ForwardScope scope(*this);
  return max_pool(x, options);
}

template <int D>
Tensor MaxPoolNd<D>::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  const auto& o = options;
  using Fn = decltype(&F::max_pool1d);
  static constexpr Fn kFns[] = {
      nullptr, &F::max_pool1d, &F::max_pool2d, &F::max_pool3d};
  return kFns[D](
      x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

template <int D>
std::string MaxPoolNd<D>::extra_repr() const {
  const auto& o = options;
  return "kernel_size=" + py_int_or_tuple(o.kernel_size()) + ", stride=" +
      py_int_or_tuple(o.stride().empty() ? o.kernel_size() : o.stride()) +
      ", padding=" + py_int_or_tuple(o.padding()) +
      ", dilation=" + py_int_or_tuple(o.dilation()) +
      ", ceil_mode=" + py_bool(o.ceil_mode());
}

template <int D>
AvgPoolNd<D>::AvgPoolNd(const AvgPoolOptions<D>& o)
    : Module(layer_name("AvgPool", D)), options(o) {
  check_dims(o.kernel_size(), D, type_name(), "kernel_size");
  DITTO_CHECK(
      D > 1 || !o.divisor_override(),
      ValueError,
      type_name().c_str(),
      "divisor_override is for AvgPool2d and AvgPool3d");
}

template <int D>
Tensor AvgPoolNd<D>::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  const auto& o = options;
  if constexpr (D == 1) {
    return F::avg_pool1d(
        x,
        o.kernel_size(),
        o.stride(),
        o.padding(),
        o.ceil_mode(),
        o.count_include_pad());
  } else {
    return (D == 2 ? &F::avg_pool2d : &F::avg_pool3d)(
        x,
        o.kernel_size(),
        o.stride(),
        o.padding(),
        o.ceil_mode(),
        o.count_include_pad(),
        o.divisor_override());
  }
}

template <int D>
std::string AvgPoolNd<D>::extra_repr() const {
  // PyTorch's AvgPool1d keeps its arguments as 1-tuples.
  const auto& o = options;
  auto arg = [](const IntList& v) {
    return D == 1 ? py_tuple(v, 1) : py_int_or_tuple(v);
  };
  return "kernel_size=" + arg(o.kernel_size()) +
      ", stride=" + arg(o.stride().empty() ? o.kernel_size() : o.stride()) +
      ", padding=" + arg(o.padding());
}

template <int D>
AdaptiveAvgPoolNd<D>::AdaptiveAvgPoolNd(IntList size)
    : Module(layer_name("AdaptiveAvgPool", D)), output_size(std::move(size)) {
  check_dims(output_size, D, type_name(), "output_size");
}

template <int D>
Tensor AdaptiveAvgPoolNd<D>::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  static constexpr Tensor (*kFns[])(const Tensor&, const IntArg&) = {
      nullptr,
      &F::adaptive_avg_pool1d,
      &F::adaptive_avg_pool2d,
      &F::adaptive_avg_pool3d};
  return kFns[D](x, output_size);
}

template <int D>
std::string AdaptiveAvgPoolNd<D>::extra_repr() const {
  return "output_size=" + py_int_or_tuple(output_size);
}

template <int D>
AdaptiveMaxPoolNd<D>::AdaptiveMaxPoolNd(IntList size)
    : Module(layer_name("AdaptiveMaxPool", D)), output_size(std::move(size)) {
  check_dims(output_size, D, type_name(), "output_size");
}

template <int D>
std::tuple<Tensor, Tensor> AdaptiveMaxPoolNd<D>::forward_with_indices(
    const Tensor& x) const {
  ForwardScope scope(*this);
  static constexpr std::tuple<Tensor, Tensor> (*kFns[])(
      const Tensor&, const IntArg&) = {
      nullptr,
      &F::adaptive_max_pool1d_with_indices,
      &F::adaptive_max_pool2d_with_indices,
      &F::adaptive_max_pool3d_with_indices};
  return kFns[D](x, output_size);
}

template <int D>
Tensor AdaptiveMaxPoolNd<D>::forward(const Tensor& x) const {
  ForwardScope scope(*this);
  static constexpr Tensor (*kFns[])(const Tensor&, const IntArg&) = {
      nullptr,
      &F::adaptive_max_pool1d,
      &F::adaptive_max_pool2d,
      &F::adaptive_max_pool3d};
  return kFns[D](x, output_size);
}

template <int D>
std::string AdaptiveMaxPoolNd<D>::extra_repr() const {
  return "output_size=" + py_int_or_tuple(output_size);
}

template <int D>
MaxUnpoolNd<D>::MaxUnpoolNd(const MaxUnpoolOptions<D>& o)
    : Module(layer_name("MaxUnpool", D)), options(o) {
  check_dims(o.kernel_size(), D, type_name(), "kernel_size");
}

template <int D>
Tensor MaxUnpoolNd<D>::forward(
    const Tensor& x,
    const Tensor& indices,
    const IntList& output_size) const {
  ForwardScope scope(*this);
  static constexpr decltype(&F::max_unpool1d) kFns[] = {
      nullptr, &F::max_unpool1d, &F::max_unpool2d, &F::max_unpool3d};
  const auto& o = options;
  return kFns[D](
      x, indices, o.kernel_size(), o.stride(), o.padding(), output_size);
}

template <int D>
std::string MaxUnpoolNd<D>::extra_repr() const {
  // PyTorch keeps MaxUnpool's arguments as D-tuples.
  const auto& o = options;
  return "kernel_size=" + py_tuple(o.kernel_size(), D) + ", stride=" +
      py_tuple(o.stride().empty() ? o.kernel_size() : o.stride(), D) +
      ", padding=" + py_tuple(o.padding(), D);
}

template <int D>
FractionalMaxPoolNd<D>::FractionalMaxPoolNd(
    const FractionalMaxPoolOptions<D>& o)
    : Module(layer_name("FractionalMaxPool", D)), options(o) {
  const std::string name = type_name();
  check_dims(o.kernel_size(), D, name, "kernel_size");
  DITTO_CHECK(
      !o.output_size().empty() || !o.output_ratio().empty(),
      ValueError,
      name.c_str(),
      "requires specifying either an output size, or a pooling ratio");
  DITTO_CHECK(
      o.output_size().empty() || o.output_ratio().empty(),
      ValueError,
      name.c_str(),
      "only one of output_size and output_ratio may be specified");
  if (!o.output_size().empty()) {
    check_dims(o.output_size(), D, name, "output_size");
  }
  DITTO_CHECK(
      o.output_ratio().empty() || o.output_ratio().size() == 1 ||
          o.output_ratio().size() == size_t(D),
      ValueError,
      name.c_str(),
      "output_ratio must have 1 or ",
      D,
      " values");
  for (double r : o.output_ratio()) {
    DITTO_CHECK(
        r > 0 && r < 1,
        ValueError,
        name.c_str(),
        "output_ratio must be between 0 and 1 (got ",
        r,
        ")");
  }
}

template <int D>
std::tuple<Tensor, Tensor> FractionalMaxPoolNd<D>::forward_with_indices(
    const Tensor& x) const {
  ForwardScope scope(*this);
  const auto& o = options;
  auto* f = D == 2 ? &F::fractional_max_pool2d_with_indices
                   : &F::fractional_max_pool3d_with_indices;
  return f(
      x,
      o.kernel_size(),
      o.output_size(),
      o.output_ratio(),
      o._random_samples());
}

template <int D>
Tensor FractionalMaxPoolNd<D>::forward(const Tensor& x) const {
  return std::get<0>(forward_with_indices(x));
}

template class FractionalMaxPoolNd<2>;
template class FractionalMaxPoolNd<3>;

#define DITTO_POOLING_INSTANCES(D)     \
  template class MaxPoolNd<D>;         \
  template class AvgPoolNd<D>;         \
  template class AdaptiveAvgPoolNd<D>; \
  template class AdaptiveMaxPoolNd<D>; \
  template class MaxUnpoolNd<D>;
DITTO_POOLING_DIMS(DITTO_POOLING_INSTANCES)
#undef DITTO_POOLING_INSTANCES

} // namespace ditto::nn
