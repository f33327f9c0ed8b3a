#pragma once

#include <cstdint>
#include <ostream>

#include "ditto/core/api.h"

namespace ditto {

// Only the CPU exists today; the type and index are kept so another device
// type can be added without changing every signature.
enum class DeviceType : uint8_t { CPU = 0 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = -1;

  constexpr Device() = default;
  constexpr explicit Device(DeviceType t, int16_t i = -1) : type(t), index(i) {}

  bool operator==(const Device&) const = default;
  bool is_cpu() const {
    return type == DeviceType::CPU;
  }
};

inline constexpr Device kCPU{};

DITTO_API std::ostream& operator<<(std::ostream& os, const Device& d);

} // namespace ditto
