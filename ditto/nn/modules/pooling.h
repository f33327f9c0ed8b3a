#pragma once

// The pooling layers over one, two and three dims (LibTorch's names:
// MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
// AdaptiveMaxPool1d/2d/3d, MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d), each a
// template over its dim count D with one options struct (MaxPool2dOptions =
// MaxPoolOptions<2>). Arguments are one int for every dim or D ints; the
// functions in ditto/nn/functional/pooling.h do the work.

#include <optional>
#include <string>
#include <utility>

#include "ditto/nn/module.h"
#include "ditto/nn/options.h"

namespace ditto::nn {

template <int D>
struct MaxPoolOptions {
  MaxPoolOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}
  MaxPoolOptions(int64_t kernel_size) : kernel_size_({kernel_size}) {}
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride); // empty: the kernel size
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(IntArg, dilation) = {1};
  DITTO_NN_ARG(bool, ceil_mode) = false;
};

template <int D>
class DITTO_API MaxPoolNd : public Module {
 public:
  MaxPoolNd(int64_t kernel_size) : MaxPoolNd(MaxPoolOptions<D>(kernel_size)) {}
  explicit MaxPoolNd(const MaxPoolOptions<D>& options);
  Tensor forward(const Tensor& x) const;
  // The output and the flat index of each maximum in its plane.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) const;
  std::string extra_repr() const override;

  MaxPoolOptions<D> options;
};

template <int D>
struct AvgPoolOptions {
  AvgPoolOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}
  AvgPoolOptions(int64_t kernel_size) : kernel_size_({kernel_size}) {}
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride); // empty: the kernel size
  DITTO_NN_ARG(IntArg, padding) = {0};
  DITTO_NN_ARG(bool, ceil_mode) = false;
  DITTO_NN_ARG(bool, count_include_pad) = true;
  // 2-d and 3-d only (PyTorch's AvgPool1d has none).
  DITTO_NN_ARG(std::optional<int64_t>, divisor_override);
};

template <int D>
class DITTO_API AvgPoolNd : public Module {
 public:
  AvgPoolNd(int64_t kernel_size) : AvgPoolNd(AvgPoolOptions<D>(kernel_size)) {}
  explicit AvgPoolNd(const AvgPoolOptions<D>& options);
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  AvgPoolOptions<D> options;
};

template <int D>
class DITTO_API AdaptiveAvgPoolNd : public Module {
 public:
  explicit AdaptiveAvgPoolNd(IntList output_size);
  AdaptiveAvgPoolNd(int64_t size) : AdaptiveAvgPoolNd(IntList{size}) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  IntList output_size;
};

template <int D>
class DITTO_API AdaptiveMaxPoolNd : public Module {
 public:
  explicit AdaptiveMaxPoolNd(IntList output_size);
  AdaptiveMaxPoolNd(int64_t size) : AdaptiveMaxPoolNd(IntList{size}) {}
  Tensor forward(const Tensor& x) const;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) const;
  std::string extra_repr() const override;
  IntList output_size;
};

template <int D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}
  MaxUnpoolOptions(int64_t kernel_size) : kernel_size_({kernel_size}) {}
  DITTO_NN_ARG(IntArg, kernel_size);
  DITTO_NN_ARG(IntArg, stride); // empty: the kernel size
  DITTO_NN_ARG(IntArg, padding) = {0};
};

template <int D>
class DITTO_API MaxUnpoolNd : public Module {
 public:
  MaxUnpoolNd(int64_t kernel_size)
      : MaxUnpoolNd(MaxUnpoolOptions<D>(kernel_size)) {}
  explicit MaxUnpoolNd(const MaxUnpoolOptions<D>& options);
  // output_size: empty for the default size, else the last D sizes (or
  // all D + 2), as the functional op takes it.
  Tensor forward(
      const Tensor& x,
      const Tensor& indices,
      const IntList& output_size = {}) const;
  std::string extra_repr() const override;
  MaxUnpoolOptions<D> options;
};

template <int D>
struct FractionalMaxPoolOptions {
  FractionalMaxPoolOptions(IntArg kernel_size)
      : kernel_size_(std::move(kernel_size)) {}
  FractionalMaxPoolOptions(int64_t kernel_size) : kernel_size_({kernel_size}) {}
  DITTO_NN_ARG(IntArg, kernel_size);
  // One of the two: the output's last D sizes, or their ratio to the
  // input's (each in (0, 1)).
  DITTO_NN_ARG(IntList, output_size);
  DITTO_NN_ARG(std::vector<double>, output_ratio);
  // Fixed samples [N, C, D] in [0, 1) (PyTorch's _random_samples); else
  // each forward draws them from the default generator.
  DITTO_NN_ARG(Tensor, _random_samples);
};

// PyTorch's FractionalMaxPool2d/3d (Note [Fractional windows]): prints as
// "FractionalMaxPool2d()", as PyTorch's.
template <int D>
class DITTO_API FractionalMaxPoolNd : public Module {
 public:
  explicit FractionalMaxPoolNd(const FractionalMaxPoolOptions<D>& options);
  Tensor forward(const Tensor& x) const;
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) const;
  FractionalMaxPoolOptions<D> options;
};
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;
using FractionalMaxPool2dImpl = FractionalMaxPoolNd<2>;
using FractionalMaxPool3dImpl = FractionalMaxPoolNd<3>;
DITTO_MODULE(FractionalMaxPool2d);
DITTO_MODULE(FractionalMaxPool3d);
extern template class FractionalMaxPoolNd<2>;
extern template class FractionalMaxPoolNd<3>;

#define DITTO_POOLING_DIMS(X) X(1) X(2) X(3)
#define DITTO_POOLING_ALIASES(D)                          \
  using MaxPool##D##dOptions = MaxPoolOptions<D>;         \
  using MaxPool##D##dImpl = MaxPoolNd<D>;                 \
  DITTO_MODULE(MaxPool##D##d);                            \
  using AvgPool##D##dOptions = AvgPoolOptions<D>;         \
  using AvgPool##D##dImpl = AvgPoolNd<D>;                 \
  DITTO_MODULE(AvgPool##D##d);                            \
  using AdaptiveAvgPool##D##dImpl = AdaptiveAvgPoolNd<D>; \
  DITTO_MODULE(AdaptiveAvgPool##D##d);                    \
  using AdaptiveMaxPool##D##dImpl = AdaptiveMaxPoolNd<D>; \
  DITTO_MODULE(AdaptiveMaxPool##D##d);                    \
  using MaxUnpool##D##dOptions = MaxUnpoolOptions<D>;     \
  using MaxUnpool##D##dImpl = MaxUnpoolNd<D>;             \
  DITTO_MODULE(MaxUnpool##D##d);                          \
  extern template class MaxPoolNd<D>;                     \
  extern template class AvgPoolNd<D>;                     \
  extern template class AdaptiveAvgPoolNd<D>;             \
  extern template class AdaptiveMaxPoolNd<D>;             \
  extern template class MaxUnpoolNd<D>;
DITTO_POOLING_DIMS(DITTO_POOLING_ALIASES)
#undef DITTO_POOLING_ALIASES

} // namespace ditto::nn
