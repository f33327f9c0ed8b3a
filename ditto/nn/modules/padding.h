#pragma once

// The padding layers: ZeroPad2d, ReflectionPad2d and ReplicationPad2d.

#include <string>

#include "ditto/nn/module.h"

namespace ditto::nn {

// Pads the last two dims: padding (left, right, top, bottom), or one value
// for all four.
class DITTO_API ZeroPad2d : public Module {
 public:
  ZeroPad2d(IntList padding)
      : ZeroPad2d("ZeroPad2d", "constant", std::move(padding)) {}
  ZeroPad2d(int64_t padding) : ZeroPad2d(IntList{padding}) {}
  Tensor forward(const Tensor& x) const;
  std::string extra_repr() const override;
  IntList padding; // always four values

 protected:
  ZeroPad2d(const char* name, const char* mode, IntList padding);
  const char* mode_;
};

class DITTO_API ReflectionPad2d : public ZeroPad2d {
 public:
  ReflectionPad2d(IntList padding)
      : ZeroPad2d("ReflectionPad2d", "reflect", std::move(padding)) {}
  ReflectionPad2d(int64_t padding) : ReflectionPad2d(IntList{padding}) {}
};

class DITTO_API ReplicationPad2d : public ZeroPad2d {
 public:
  ReplicationPad2d(IntList padding)
      : ZeroPad2d("ReplicationPad2d", "replicate", std::move(padding)) {}
  ReplicationPad2d(int64_t padding) : ReplicationPad2d(IntList{padding}) {}
};

} // namespace ditto::nn
