// The factories with torch's options (factories.ops.toml, Note [Factory
// options] in tools/opgen.py): LibTorch's torch::zeros(size, options). A
// dtype the options lack is the factory's own default; a device they lack
// the CPU (the *_like factories: self's); requires_grad as they ask.

#include "ditto/ops/factories.h"

namespace ditto {
using detail::like_options;

Tensor empty(const IntArg& size, const TensorOptions& options) {
  return detail::with_options(
      empty(size, options.dtype(), options.device()), options);
}

Tensor zeros(const IntArg& size, const TensorOptions& options) {
  return detail::with_options(
      zeros(size, options.dtype(), options.device()), options);
}

Tensor ones(const IntArg& size, const TensorOptions& options) {
  return detail::with_options(
      ones(size, options.dtype(), options.device()), options);
}

// full(size, fill_value, options): beside default_dtype_for, in
// factories.cpp.

Tensor empty_like(const Tensor& self, const TensorOptions& options) {
  return empty(self.sizes(), like_options(self, options));
}

Tensor zeros_like(const Tensor& self, const TensorOptions& options) {
  return zeros(self.sizes(), like_options(self, options));
}

Tensor ones_like(const Tensor& self, const TensorOptions& options) {
  return ones(self.sizes(), like_options(self, options));
}

Tensor full_like(
    const Tensor& self,
    const Scalar& fill_value,
    const TensorOptions& options) {
  return full(self.sizes(), fill_value, like_options(self, options));
}

Tensor empty_strided(
    const IntArg& size,
    const IntArg& stride,
    const TensorOptions& options) {
  const Shape& sizes = size;
  const Shape& strides = stride;
  return detail::on_device(
      empty_strided(sizes, strides, options.dtype()), options);
}

// Without a dtype in the options, arange infers it from its arguments.
Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}

Tensor arange(
    const Scalar& start,
    const Scalar& end,
    const TensorOptions& options) {
  return arange(start, end, 1, options);
}

Tensor arange(
    const Scalar& start,
    const Scalar& end,
    const Scalar& step,
    const TensorOptions& options) {
  Tensor t = options.has_dtype() ? arange(start, end, step, options.dtype())
                                 : arange(start, end, step);
  return detail::on_device(t, options);
}

Tensor linspace(
    const Scalar& start,
    const Scalar& end,
    int64_t steps,
    const TensorOptions& options) {
  return detail::on_device(
      linspace(start, end, steps, options.dtype()), options);
}

Tensor eye(int64_t n, const TensorOptions& options) {
  return detail::on_device(eye(n, options.dtype()), options);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  return detail::on_device(eye(n, m, options.dtype()), options);
}

Tensor scalar_tensor(const Scalar& s, const TensorOptions& options) {
  return detail::on_device(scalar_tensor(s, options.dtype()), options);
}

} // namespace ditto
