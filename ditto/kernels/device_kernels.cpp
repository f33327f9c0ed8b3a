// The devices' kernel slots (Note [Device kernel slots]).

#include "ditto/kernels/device_kernels.h"

#include <optional>

#include "ditto/core/error.h"

namespace ditto::kernels {

namespace {

constexpr size_t kDeviceTypes = 3;

std::array<std::optional<DeviceKernels>, kDeviceTypes>& tables() {
  static std::array<std::optional<DeviceKernels>, kDeviceTypes> t;
  return t;
}

// The first slot k leaves empty, or null.
const char* empty_slot(const DeviceKernels& k) {
#define DITTO_EMPTY_SLOT(name) \
  if (k.name == nullptr) {     \
    return #name;              \
  }
  DITTO_DEVICE_KERNEL_SLOTS(DITTO_EMPTY_SLOT)
#undef DITTO_EMPTY_SLOT
  return nullptr;
}

} // namespace

void register_device_kernels(DeviceType type, const DeviceKernels& k) {
  const char* op = "register_device_kernels";
  DITTO_CHECK(
      type != DeviceType::CPU && size_t(type) < kDeviceTypes,
      InternalError,
      op,
      "the CPU's kernels are its loops (kernels::KernelTable), not slots");
  const char* empty = empty_slot(k);
  DITTO_CHECK(
      empty == nullptr,
      InternalError,
      op,
      type,
      " leaves a slot empty: ",
      empty);
  tables()[size_t(type)] = k;
}

const DeviceKernels& device_kernels(const Tensor& t, const char* op) {
  const DeviceType type = t.device().type;
  const auto& table = tables()[size_t(type)];
  DITTO_CHECK(
      table.has_value(), InternalError, op, "no kernels registered for ", type);
  return *table;
}

} // namespace ditto::kernels
