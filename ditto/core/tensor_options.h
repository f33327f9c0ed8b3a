#pragma once

// TensorOptions: LibTorch's bundle of a new tensor's dtype, device and
// requires_grad, as the factories take it:
//   zeros({2, 3}, ditto::dtype(kFloat64).requires_grad(true))
//   ones({4}, kLong)                      // a Dtype or a Device converts
//   TensorOptions().dtype(kFloat32).device(kCPU)
// Unset fields take the defaults (float32, the CPU, no grad).

#include <optional>
#include <ostream>

#include "ditto/core/api.h"
#include "ditto/core/device.h"
#include "ditto/core/dtype.h"

namespace ditto {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(Dtype dtype) : dtype_(dtype) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions(DeviceType type) : device_(Device(type)) {}

  // Setters return a copy with the field set, as LibTorch's.
  TensorOptions dtype(std::optional<Dtype> dtype) const {
    TensorOptions o = *this;
    o.dtype_ = dtype;
    return o;
  }
  TensorOptions device(std::optional<Device> device) const {
    TensorOptions o = *this;
    o.device_ = device;
    return o;
  }
  TensorOptions requires_grad(std::optional<bool> requires_grad) const {
    TensorOptions o = *this;
    o.requires_grad_ = requires_grad;
    return o;
  }

  Dtype dtype() const {
    return dtype_.value_or(kFloat32);
  }
  Device device() const {
    return device_.value_or(Device());
  }
  bool requires_grad() const {
    return requires_grad_.value_or(false);
  }
  bool has_dtype() const {
    return dtype_.has_value();
  }
  bool has_device() const {
    return device_.has_value();
  }
  bool has_requires_grad() const {
    return requires_grad_.has_value();
  }
  std::optional<Dtype> dtype_opt() const {
    return dtype_;
  }
  std::optional<Device> device_opt() const {
    return device_;
  }

 private:
  std::optional<Dtype> dtype_;
  std::optional<Device> device_;
  std::optional<bool> requires_grad_;
};

// torch::dtype(kFloat64), torch::device(kCPU), torch::requires_grad().
inline TensorOptions dtype(Dtype dtype) {
  return TensorOptions().dtype(dtype);
}
inline TensorOptions device(Device device) {
  return TensorOptions().device(device);
}
inline TensorOptions requires_grad(bool requires_grad = true) {
  return TensorOptions().requires_grad(requires_grad);
}

// "TensorOptions(dtype=float32, device=cpu, requires_grad=false)".
DITTO_API std::ostream& operator<<(std::ostream& os, const TensorOptions& o);

} // namespace ditto
