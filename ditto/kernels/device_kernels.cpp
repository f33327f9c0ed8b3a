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
  const std::pair<bool, const char*> slots[] = {
      {k.copy_into != nullptr, "copy_into"},
      {k.upload_into != nullptr, "upload_into"},
      {k.to_host != nullptr, "to_host"},
      {k.binary != nullptr, "binary"},
      {k.fused != nullptr, "fused"},
      {k.unary != nullptr, "unary"},
      {k.where != nullptr, "where"},
      {k.reduce_sum != nullptr, "reduce_sum"},
      {k.arg_reduce != nullptr, "arg_reduce"},
      {k.gemm != nullptr, "gemm"},
      {k.select_rows != nullptr, "select_rows"},
      {k.add_rows != nullptr, "add_rows"},
      {k.philox_bernoulli != nullptr, "philox_bernoulli"},
      {k.conv2d != nullptr, "conv2d"},
      {k.max_pool2d != nullptr, "max_pool2d"},
      {k.max_pool2d_backward != nullptr, "max_pool2d_backward"},
      {k.nll_terms != nullptr, "nll_terms"},
      {k.nll_sum != nullptr, "nll_sum"},
      {k.nll_backward != nullptr, "nll_backward"},
  };
  for (const auto& [filled, name] : slots) {
    if (!filled) {
      return name;
    }
  }
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
