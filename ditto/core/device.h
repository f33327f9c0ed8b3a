#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "ditto/core/api.h"

namespace ditto {

// Where a tensor's bytes live: the CPU, or a GPU driven through Vulkan
// compute (docs/device.md). The names follow LibTorch's c10::DeviceType.
// CUDA is named only so that LibTorch programs compile (a device chosen
// under `if (torch::cuda::is_available())`): ditto has no CUDA backend, and
// a tensor asked for there is a DeviceError.
enum class DeviceType : uint8_t { CPU = 0, Vulkan = 1, CUDA = 2 };

inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kVulkan = DeviceType::Vulkan;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

struct DITTO_API Device {
  DeviceType type = DeviceType::CPU;
  // -1: the default (the CPU; vulkan:0 for a Vulkan device).
  int16_t index = -1;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int16_t i = -1) : type(t), index(i) {}
  // "cpu", "vulkan", "vulkan:1", as torch.device and c10::Device parse
  // them; ValueError for anything else.
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}

  // Equal when the type matches and the indices name the same device
  // (vulkan and vulkan:0 are one device).
  bool operator==(const Device& o) const {
    return type == o.type && resolved_index() == o.resolved_index();
  }
  bool is_cpu() const {
    return type == DeviceType::CPU;
  }
  bool is_vulkan() const {
    return type == DeviceType::Vulkan;
  }
  bool is_cuda() const {
    return type == DeviceType::CUDA;
  }
  bool has_index() const {
    return index >= 0;
  }
  int resolved_index() const {
    return index >= 0 ? index : (type == DeviceType::CPU ? -1 : 0);
  }
  // "cpu", "vulkan:0".
  std::string str() const;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const Device& d);
DITTO_API std::ostream& operator<<(std::ostream& os, DeviceType t);

namespace detail {
// How core allocates a device's memory: the device module (ditto/device/)
// registers these while the library loads. A handle is opaque to core.
struct DeviceHooks {
  void* (*allocate)(int index, size_t nbytes) = nullptr;
  void (*release)(void* handle) = nullptr;
};
DITTO_API void register_device_hooks(DeviceType type, DeviceHooks hooks);
DITTO_API const DeviceHooks& device_hooks(DeviceType type);
} // namespace detail

} // namespace ditto
