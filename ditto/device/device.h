#pragma once

// The devices besides the CPU (docs/device.md): Vulkan compute devices, a
// GPU through its vendor's driver or Mesa's lavapipe on the CPU.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/device.h"

namespace ditto {

// What `ditto env` prints about a Vulkan device.
struct VulkanDeviceInfo {
  std::string name;
  std::string type; // "discrete GPU", "integrated GPU", "CPU", ...
  std::string driver;
  std::string api_version;
  uint64_t memory_bytes = 0;
  bool float64 = false;
  // The properties the device's bits rest on (Note [The device's
  // arithmetic] in ditto/device/vulkan/runtime.cpp): float32 denormals kept
  // (DenormPreserve requested and honoured), fma() rounding once.
  bool denorm_preserve_float32 = false;
  bool denormals_kept = false;
  bool fma_fused = false;
};

// torch.is_vulkan_available(): a loader, a driver and a compute device.
DITTO_API bool is_vulkan_available();
// Why not, when is_vulkan_available() is false ("" otherwise).
DITTO_API std::string vulkan_unavailable_reason();
DITTO_API int vulkan_device_count();
// DeviceError if vulkan:index does not exist. Opens the device (and runs
// its arithmetic probe) on first use.
DITTO_API VulkanDeviceInfo vulkan_device_info(int index = 0);

// Whether the op named op (its record's name, as `ditto ops` lists it) has
// a kernel on devices of this type; the ops that do, sorted. Every op runs
// on the CPU.
DITTO_API bool has_device_kernel(std::string_view op, DeviceType type);
DITTO_API std::vector<std::string> device_ops(DeviceType type);

} // namespace ditto

// LibTorch's torch::cuda, for programs that choose a device with it: ditto
// has no CUDA backend (its GPU device is Vulkan's, above).
namespace ditto::cuda {
inline bool is_available() {
  return false;
}
inline int64_t device_count() {
  return 0;
}
inline bool cudnn_is_available() {
  return false;
}
// No-ops without a CUDA device, as LibTorch's are.
inline void manual_seed(uint64_t) {}
inline void manual_seed_all(uint64_t) {}
} // namespace ditto::cuda
