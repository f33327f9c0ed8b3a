#pragma once

// The ops' kernels on a Vulkan device (Note [The Vulkan device] in
// runtime.cpp): the device's kernel slots. The ops reach them through
// kernels::device_kernels, after they validated their arguments, with every
// tensor operand on one Vulkan device except where a slot says otherwise.
// Internal.

#include "ditto/core/tensor.h"
#include "ditto/kernels/device_kernels.h"

namespace ditto::vulkan {

// One function for each slot, of the slot's name and type (declared from
// DITTO_DEVICE_KERNEL_SLOTS; their contracts: Note [Device kernel slots] in
// ditto/kernels/device_kernels.h); kernels.cpp registers them while the
// library loads. Which ops reach them is said by each op's
// declaration or record (Note [Device kernels are declared] in
// ditto/ops/record.cpp), never by a list of the device's.

#define DITTO_VULKAN_DECLARE_KERNEL(name) DITTO_DEVICE_KERNEL_TYPE(name) name;
DITTO_DEVICE_KERNEL_SLOTS(DITTO_VULKAN_DECLARE_KERNEL)
#undef DITTO_VULKAN_DECLARE_KERNEL

using Matrix = kernels::DeviceMatrix;
using Nll = kernels::NllArgs;
using kernels::ConvKernel;
using kernels::PoolGeom;

} // namespace ditto::vulkan
