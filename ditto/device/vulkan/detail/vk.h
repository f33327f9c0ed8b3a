#pragma once

// The Vulkan runtime's own state, shared by instance.cpp (the loader, the
// instance, opening a device, the probe) and runtime.cpp (buffers,
// pipelines, copies, dispatches). Internal: never installed; device/
// includes nothing of ops/.

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ditto/device/vulkan/runtime.h"

namespace ditto::vulkan {

struct Buffer {
  int device = 0;
  size_t bytes = 0; // the size class
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

namespace vk_detail {

// ---- the loader's entry points, resolved at run time

#define DITTO_VK_INSTANCE_FNS(X)              \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures)              \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define DITTO_VK_DEVICE_FNS(X)     \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkResetDescriptorPool)         \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkResetCommandBuffer)          \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdDispatch)                 \
  X(vkCmdCopyBuffer)               \
  X(vkCmdPipelineBarrier)          \
  X(vkQueueSubmit)                 \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkResetFences)

struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
#define X(f) PFN_##f f = nullptr;
  DITTO_VK_INSTANCE_FNS(X)
  DITTO_VK_DEVICE_FNS(X)
#undef X
};

// DeviceError (OutOfMemoryError for a lack of memory) naming what failed.
[[noreturn]] void fail(const char* what, VkResult r);
void check(VkResult r, const char* what);

// The host-visible staging buffer (copies go through it in pieces of this
// size) and the parameters buffer of each device.
constexpr size_t kStagingBytes = size_t(16) << 20;
constexpr size_t kParamsBytes = 4096;

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t buffers = 0;
};

// ---- one device

struct Gpu {
  int index = 0;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceInfo info;
  uint32_t queue_family = 0;
  uint32_t device_memory_type = 0;
  uint32_t host_memory_type = 0;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  Buffer* staging = nullptr;
  void* staging_map = nullptr;
  Buffer* params = nullptr;
  void* params_map = nullptr;
  std::map<std::string_view, Pipeline> pipelines;
  std::multimap<size_t, Buffer*> free_buffers;
  std::recursive_mutex mu;
  bool opened = false;
};

struct Runtime {
  void* library = nullptr;
  Api api;
  VkInstance instance = VK_NULL_HANDLE;
  std::string why_not;
  std::vector<std::unique_ptr<Gpu>> gpus;
};

// The process's runtime: the loader opened and the devices listed, once
// (why_not says why there are none).
Runtime& runtime();
// Device index, opened on first use; DeviceError naming op when there is
// none.
Gpu& open(int index, const char* op);

// A buffer of bytes, host-visible or device-local.
Buffer* make_buffer(Runtime& rt, Gpu& g, size_t bytes, bool host);
void destroy_buffer(Runtime& rt, Gpu& g, Buffer* b);
// Starts g's command buffer; submit ends it, submits it and waits.
void begin(Runtime& rt, Gpu& g);
void submit(Runtime& rt, Gpu& g);
// One dispatch of shader over buffers with its parameters, waited for.
void record_dispatch(
    Runtime& rt,
    Gpu& g,
    const Shader& shader,
    std::span<Buffer* const> buffers,
    const void* params,
    size_t params_bytes,
    const uint32_t groups[3]);

} // namespace vk_detail
} // namespace ditto::vulkan
