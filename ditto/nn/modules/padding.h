#pragma once

// The padding layers over one, two and three dims (LibTorch's names):
// ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, ConstantPad1d/2d/3d and
// ZeroPad2d. padding is (left, right) for the last dim, then (top, bottom),
// then (front, back), or one value for all of them; the work is
// functional::pad's.

#include <string>

#include "ditto/nn/module.h"

namespace ditto::nn {

template <int D>
class DITTO_API PadNd : public Module {
 public:
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  IntList padding; // always 2 * D values
  double value = 0.0; // constant mode

 protected:
  // kind: "ReflectionPad", "ReplicationPad", "ConstantPad" or "ZeroPad".
  PadNd(const char* kind, const char* mode, IntList padding, double value);
  const char* mode_;
};

template <int D>
class DITTO_API ReflectionPadNd : public PadNd<D> {
 public:
  ReflectionPadNd(IntList padding)
      : PadNd<D>("ReflectionPad", "reflect", std::move(padding), 0.0) {}
  ReflectionPadNd(int64_t padding) : ReflectionPadNd(IntList{padding}) {}
};

template <int D>
class DITTO_API ReplicationPadNd : public PadNd<D> {
 public:
  ReplicationPadNd(IntList padding)
      : PadNd<D>("ReplicationPad", "replicate", std::move(padding), 0.0) {}
  ReplicationPadNd(int64_t padding) : ReplicationPadNd(IntList{padding}) {}
};

template <int D>
class DITTO_API ConstantPadNd : public PadNd<D> {
 public:
  ConstantPadNd(IntList padding, double value)
      : PadNd<D>("ConstantPad", "constant", std::move(padding), value) {}
  ConstantPadNd(int64_t padding, double value)
      : ConstantPadNd(IntList{padding}, value) {}
};

class DITTO_API ZeroPad2dImpl : public PadNd<2> {
 public:
  ZeroPad2dImpl(IntList padding)
      : PadNd<2>("ZeroPad", "constant", std::move(padding), 0.0) {}
  ZeroPad2dImpl(int64_t padding) : ZeroPad2dImpl(IntList{padding}) {}
};
DITTO_MODULE(ZeroPad2d);

#define DITTO_PADDING_ALIASES(D)                        \
  using ReflectionPad##D##dImpl = ReflectionPadNd<D>;   \
  DITTO_MODULE(ReflectionPad##D##d);                    \
  using ReplicationPad##D##dImpl = ReplicationPadNd<D>; \
  DITTO_MODULE(ReplicationPad##D##d);                   \
  using ConstantPad##D##dImpl = ConstantPadNd<D>;       \
  DITTO_MODULE(ConstantPad##D##d);                      \
  extern template class PadNd<D>;
DITTO_PADDING_ALIASES(1)
DITTO_PADDING_ALIASES(2)
DITTO_PADDING_ALIASES(3)
#undef DITTO_PADDING_ALIASES

} // namespace ditto::nn
