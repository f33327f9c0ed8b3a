#include "ditto/core/device.h"

#include <array>
#include <charconv>

#include "ditto/core/error.h"

namespace ditto {

Device::Device(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "vulkan") {
    type = DeviceType::Vulkan;
  } else {
    detail::throw_error<ValueError>(
        "device",
        "expected a device type (cpu or vulkan), optionally followed by :N, "
        "but got \"",
        spec,
        "\"");
  }
  if (colon != std::string::npos) {
    const char* first = spec.data() + colon + 1;
    const char* last = spec.data() + spec.size();
    // Digits only (from_chars would also take a sign: "vulkan:-0").
    int value = -1;
    auto [end, ec] = std::from_chars(first, last, value);
    DITTO_CHECK(
        first != last && *first >= '0' && *first <= '9' && ec == std::errc() &&
            end == last && value <= INT16_MAX,
        ValueError,
        "device",
        "invalid device index in \"",
        spec,
        "\"");
    DITTO_CHECK(
        type != DeviceType::CPU || value == 0,
        ValueError,
        "device",
        "the CPU device has only index 0, got \"",
        spec,
        "\"");
    index = int16_t(value);
  }
}

std::string Device::str() const {
  if (type == DeviceType::CPU) {
    return index >= 0 ? detail::str_cat("cpu:", index) : "cpu";
  }
  return detail::str_cat(
      type == DeviceType::CUDA ? "cuda:" : "vulkan:", resolved_index());
}

std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << d.str();
}

std::ostream& operator<<(std::ostream& os, DeviceType t) {
  return os
      << (t == DeviceType::CPU          ? "cpu"
              : t == DeviceType::Vulkan ? "vulkan"
                                        : "cuda");
}

namespace detail {
namespace {
std::array<DeviceHooks, 3>& hooks() {
  static std::array<DeviceHooks, 3> h;
  return h;
}
} // namespace

void register_device_hooks(DeviceType type, DeviceHooks h) {
  hooks()[size_t(type)] = h;
}

const DeviceHooks& device_hooks(DeviceType type) {
  return hooks()[size_t(type)];
}
} // namespace detail

} // namespace ditto
