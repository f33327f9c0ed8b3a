// Note [The Vulkan device]
// ditto's GPU device runs SPIR-V compute shaders through Vulkan. The loader
// (libvulkan.so.1) is opened with dlopen when a Vulkan tensor is first made
// or a device is first listed, so libditto has no link dependency on it:
// ditto starts on a machine without Vulkan, and only Device("vulkan")
// raises there (DeviceError naming what is missing). Every physical device
// with a compute queue is a ditto device, in the loader's order; Mesa's
// lavapipe runs the same shaders on the CPU, which is how CI tests them.
//
// The runtime is deliberately simple and synchronous: each dispatch or copy
// records one command buffer, submits it and waits for its fence, under the
// device's mutex. An op's result is therefore complete when the op returns,
// as on the CPU, and nothing about timing can change a value. Buffers are
// device-local; host copies go through a persistent staging buffer. Freed
// buffers are kept per size class (powers of two up to 64 MiB) and reused,
// since drivers allow few allocations (4096 on NVIDIA's).
//
// Note [The device's arithmetic]
// Vulkan promises correctly rounded add, subtract and multiply, but lets a
// driver flush float32 denormals (unless the shader asks for DenormPreserve,
// which each of ditto's shaders does where the device offers it) and lets
// fma() round twice. Both are measured at start-up by a probe shader and
// reported by `ditto env`; the device tests check each op's bits against the
// CPU's and name the property when they differ.

#include "ditto/device/vulkan/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "ditto/core/error.h"

namespace ditto::vulkan {
namespace {

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

[[noreturn]] void fail(const char* what, VkResult r) {
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    throw OutOfMemoryError(detail::str_cat(
        "[vulkan] out of memory in ", what, " (VkResult ", r, ")"));
  }
  throw DeviceError(
      detail::str_cat("[vulkan] ", what, " failed (VkResult ", int(r), ")"));
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) {
    fail(what, r);
  }
}

// ---- one device

constexpr size_t kStagingBytes = size_t(16) << 20;
constexpr size_t kParamsBytes = 4096;
constexpr size_t kLargestClass = size_t(64) << 20;

size_t size_class(size_t nbytes) {
  size_t n = std::max<size_t>(nbytes, 256);
  if (n > kLargestClass) {
    return (n + 4095) / 4096 * 4096;
  }
  size_t c = 256;
  while (c < n) {
    c *= 2;
  }
  return c;
}

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t buffers = 0;
};

} // namespace

struct Buffer {
  int device = 0;
  size_t bytes = 0; // the size class
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

namespace {

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

const char* device_type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU";
    default:
      return "other";
  }
}

std::string version_text(uint32_t v) {
  return detail::str_cat(
      VK_API_VERSION_MAJOR(v),
      ".",
      VK_API_VERSION_MINOR(v),
      ".",
      VK_API_VERSION_PATCH(v));
}

void describe(Runtime& rt, Gpu& g) {
  const Api& vk = rt.api;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceFloatControlsProperties fc{};
  fc.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  fc.pNext = &driver;
  VkPhysicalDeviceProperties2 p2{};
  p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  VkPhysicalDeviceProperties props{};
  vk.vkGetPhysicalDeviceProperties(g.physical, &props);
  const bool v12 = props.apiVersion >= VK_API_VERSION_1_2 &&
      vk.vkGetPhysicalDeviceProperties2 != nullptr;
  if (v12) {
    p2.pNext = &fc;
    vk.vkGetPhysicalDeviceProperties2(g.physical, &p2);
    props = p2.properties;
  }
  VkPhysicalDeviceFeatures features{};
  vk.vkGetPhysicalDeviceFeatures(g.physical, &features);
  DeviceInfo& d = g.info;
  d.name = props.deviceName;
  d.type = device_type_name(props.deviceType);
  d.api_version = version_text(props.apiVersion);
  d.driver = v12 ? detail::str_cat(driver.driverName, " ", driver.driverInfo)
                 : detail::str_cat("driver version ", props.driverVersion);
  d.vendor_id = props.vendorID;
  d.device_id = props.deviceID;
  d.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
  d.max_shared_memory = props.limits.maxComputeSharedMemorySize;
  d.float64 = features.shaderFloat64 == VK_TRUE;
  d.int64 = features.shaderInt64 == VK_TRUE;
  if (v12 && vk.vkGetPhysicalDeviceFeatures2 != nullptr) {
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &f12;
    vk.vkGetPhysicalDeviceFeatures2(g.physical, &f2);
    d.storage8 = f12.storageBuffer8BitAccess == VK_TRUE;
  }
  d.denorm_preserve_float32 = v12 && fc.shaderDenormPreserveFloat32 == VK_TRUE;
  VkPhysicalDeviceMemoryProperties mem{};
  vk.vkGetPhysicalDeviceMemoryProperties(g.physical, &mem);
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
    if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      d.memory_bytes =
          std::max<uint64_t>(d.memory_bytes, mem.memoryHeaps[h].size);
    }
  }
}

Runtime& runtime() {
  static Runtime* rt = [] {
    auto* r = new Runtime; // never destroyed: buffers may outlive main()
    r->library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (r->library == nullptr) {
      r->why_not =
          "the Vulkan loader libvulkan.so.1 was not found (Debian: "
          "libvulkan1; scripts/setup installs it with Mesa's lavapipe)";
      return r;
    }
    Api& vk = r->api;
    vk.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
        dlsym(r->library, "vkGetInstanceProcAddr"));
    if (vk.vkGetInstanceProcAddr == nullptr) {
      r->why_not = "libvulkan.so.1 has no vkGetInstanceProcAddr";
      return r;
    }
    vk.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(
        vk.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance"));
    vk.vkEnumerateInstanceVersion =
        reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
            vk.vkGetInstanceProcAddr(
                VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
    uint32_t version = VK_API_VERSION_1_0;
    if (vk.vkEnumerateInstanceVersion != nullptr) {
      vk.vkEnumerateInstanceVersion(&version);
    }
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "ditto";
    app.pEngineName = "ditto";
    app.apiVersion = std::min<uint32_t>(version, VK_API_VERSION_1_2);
    VkInstanceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    VkResult res = vk.vkCreateInstance(&ci, nullptr, &r->instance);
    if (res != VK_SUCCESS) {
      r->why_not = detail::str_cat(
          "vkCreateInstance failed (VkResult ",
          int(res),
          "): no Vulkan driver is installed (Debian: mesa-vulkan-drivers "
          "for lavapipe, or the GPU vendor's driver)");
      return r;
    }
#define X(f) \
  vk.f = reinterpret_cast<PFN_##f>(vk.vkGetInstanceProcAddr(r->instance, #f));
    DITTO_VK_INSTANCE_FNS(X)
#undef X
    uint32_t n = 0;
    vk.vkEnumeratePhysicalDevices(r->instance, &n, nullptr);
    std::vector<VkPhysicalDevice> devices(n);
    vk.vkEnumeratePhysicalDevices(r->instance, &n, devices.data());
    for (VkPhysicalDevice pd : devices) {
      uint32_t nq = 0;
      vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
      std::vector<VkQueueFamilyProperties> qs(nq);
      vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs.data());
      for (uint32_t q = 0; q < nq; ++q) {
        if (qs[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
          auto g = std::make_unique<Gpu>();
          g->index = int(r->gpus.size());
          g->physical = pd;
          g->queue_family = q;
          describe(*r, *g);
          r->gpus.push_back(std::move(g));
          break;
        }
      }
    }
    if (r->gpus.empty()) {
      r->why_not = "the Vulkan loader lists no device with a compute queue";
    }
    return r;
  }();
  return *rt;
}

uint32_t find_memory_type(
    const VkPhysicalDeviceMemoryProperties& mem,
    uint32_t allowed,
    VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    if ((allowed & (1u << i)) &&
        (mem.memoryTypes[i].propertyFlags & want) == want) {
      return i;
    }
  }
  return UINT32_MAX;
}

Buffer* make_buffer(Runtime& rt, Gpu& g, size_t bytes, bool host) {
  const Api& vk = rt.api;
  auto b = std::make_unique<Buffer>();
  b->device = g.index;
  b->bytes = bytes;
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(
      vk.vkCreateBuffer(g.device, &bi, nullptr, &b->buffer), "vkCreateBuffer");
  VkMemoryRequirements req{};
  vk.vkGetBufferMemoryRequirements(g.device, b->buffer, &req);
  VkPhysicalDeviceMemoryProperties mem{};
  vk.vkGetPhysicalDeviceMemoryProperties(g.physical, &mem);
  uint32_t type = host
      ? find_memory_type(
            mem,
            req.memoryTypeBits,
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
      : find_memory_type(
            mem, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (type == UINT32_MAX && !host) {
    type = find_memory_type(mem, req.memoryTypeBits, 0);
  }
  if (type == UINT32_MAX) {
    vk.vkDestroyBuffer(g.device, b->buffer, nullptr);
    throw DeviceError("[vulkan] the device has no suitable memory type");
  }
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  VkResult r = vk.vkAllocateMemory(g.device, &ai, nullptr, &b->memory);
  if (r != VK_SUCCESS) {
    vk.vkDestroyBuffer(g.device, b->buffer, nullptr);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY ||
        r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      throw OutOfMemoryError(detail::str_cat(
          "[vulkan] out of memory allocating ",
          bytes,
          " bytes on vulkan:",
          g.index));
    }
    fail("vkAllocateMemory", r);
  }
  check(
      vk.vkBindBufferMemory(g.device, b->buffer, b->memory, 0),
      "vkBindBufferMemory");
  return b.release();
}

void destroy_buffer(Runtime& rt, Gpu& g, Buffer* b) {
  rt.api.vkDestroyBuffer(g.device, b->buffer, nullptr);
  rt.api.vkFreeMemory(g.device, b->memory, nullptr);
  delete b;
}

void begin(Runtime& rt, Gpu& g) {
  const Api& vk = rt.api;
  check(vk.vkResetCommandBuffer(g.cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk.vkBeginCommandBuffer(g.cmd, &bi), "vkBeginCommandBuffer");
}

// Ends, submits and waits: every write is visible to the host and to the
// next command buffer when this returns.
void submit(Runtime& rt, Gpu& g) {
  const Api& vk = rt.api;
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(
      g.cmd,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
      VK_PIPELINE_STAGE_HOST_BIT,
      0,
      1,
      &mb,
      0,
      nullptr,
      0,
      nullptr);
  check(vk.vkEndCommandBuffer(g.cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &g.cmd;
  check(vk.vkResetFences(g.device, 1, &g.fence), "vkResetFences");
  check(vk.vkQueueSubmit(g.queue, 1, &si, g.fence), "vkQueueSubmit");
  check(
      vk.vkWaitForFences(g.device, 1, &g.fence, VK_TRUE, UINT64_MAX),
      "vkWaitForFences");
}

void probe(Runtime& rt, Gpu& g);

Gpu& open(int index, const char* op) {
  Runtime& rt = runtime();
  if (rt.gpus.empty()) {
    throw DeviceError(detail::str_cat(
        "[", detail::reported_op(op), "] no Vulkan device: ", rt.why_not));
  }
  DITTO_CHECK(
      index >= 0 && index < int(rt.gpus.size()),
      DeviceError,
      op,
      "vulkan:",
      index,
      " does not exist (",
      rt.gpus.size(),
      " Vulkan device",
      rt.gpus.size() == 1 ? "" : "s",
      ")");
  Gpu& g = *rt.gpus[size_t(index)];
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  if (g.opened) {
    return g;
  }
  const Api& vk = rt.api;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = g.queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkPhysicalDeviceFeatures features{};
  features.shaderFloat64 = g.info.float64 ? VK_TRUE : VK_FALSE;
  features.shaderInt64 = g.info.int64 ? VK_TRUE : VK_FALSE;
  // 8-bit storage, for the copies of bool and uint8 tensors.
  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f12.storageBuffer8BitAccess = g.info.storage8 ? VK_TRUE : VK_FALSE;
  VkDeviceCreateInfo di{};
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.pNext = &f12;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.pEnabledFeatures = &features;
  check(
      vk.vkCreateDevice(g.physical, &di, nullptr, &g.device), "vkCreateDevice");
  Api& api = rt.api;
#define X(f)                                                                 \
  if (api.f == nullptr) {                                                    \
    api.f = reinterpret_cast<PFN_##f>(vk.vkGetDeviceProcAddr(g.device, #f)); \
  }
  DITTO_VK_DEVICE_FNS(X)
#undef X
  vk.vkGetDeviceQueue(g.device, g.queue_family, 0, &g.queue);
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = g.queue_family;
  check(
      vk.vkCreateCommandPool(g.device, &pi, nullptr, &g.pool),
      "vkCreateCommandPool");
  VkCommandBufferAllocateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ci.commandPool = g.pool;
  ci.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ci.commandBufferCount = 1;
  check(
      vk.vkAllocateCommandBuffers(g.device, &ci, &g.cmd),
      "vkAllocateCommandBuffers");
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  check(vk.vkCreateFence(g.device, &fi, nullptr, &g.fence), "vkCreateFence");
  VkDescriptorPoolSize ps{};
  ps.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  ps.descriptorCount = 64;
  VkDescriptorPoolCreateInfo dpi{};
  dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpi.maxSets = 4;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &ps;
  check(
      vk.vkCreateDescriptorPool(g.device, &dpi, nullptr, &g.descriptors),
      "vkCreateDescriptorPool");
  g.staging = make_buffer(rt, g, kStagingBytes, true);
  check(
      vk.vkMapMemory(
          g.device, g.staging->memory, 0, VK_WHOLE_SIZE, 0, &g.staging_map),
      "vkMapMemory");
  g.params = make_buffer(rt, g, kParamsBytes, true);
  check(
      vk.vkMapMemory(
          g.device, g.params->memory, 0, VK_WHOLE_SIZE, 0, &g.params_map),
      "vkMapMemory");
  g.opened = true;
  probe(rt, g);
  return g;
}

Pipeline& pipeline(Runtime& rt, Gpu& g, const Shader& s) {
  auto it = g.pipelines.find(s.name);
  if (it != g.pipelines.end()) {
    return it->second;
  }
  const Api& vk = rt.api;
  Pipeline p;
  p.buffers = s.buffers;
  std::vector<VkDescriptorSetLayoutBinding> bindings(s.buffers + 1);
  for (uint32_t i = 0; i < bindings.size(); ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo li{};
  li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  li.bindingCount = uint32_t(bindings.size());
  li.pBindings = bindings.data();
  check(
      vk.vkCreateDescriptorSetLayout(g.device, &li, nullptr, &p.set_layout),
      "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p.set_layout;
  check(
      vk.vkCreatePipelineLayout(g.device, &pli, nullptr, &p.layout),
      "vkCreatePipelineLayout");
  std::span<const uint32_t> code =
      g.info.denorm_preserve_float32 ? s.spirv_denorm : s.spirv;
  VkShaderModuleCreateInfo mi{};
  mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  mi.codeSize = code.size_bytes();
  mi.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(
      vk.vkCreateShaderModule(g.device, &mi, nullptr, &module),
      "vkCreateShaderModule");
  VkComputePipelineCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.layout = p.layout;
  VkResult r = vk.vkCreateComputePipelines(
      g.device, VK_NULL_HANDLE, 1, &ci, nullptr, &p.pipeline);
  vk.vkDestroyShaderModule(g.device, module, nullptr);
  check(r, "vkCreateComputePipelines");
  return g.pipelines.emplace(s.name, p).first->second;
}

void record_dispatch(
    Runtime& rt,
    Gpu& g,
    const Shader& shader,
    std::span<Buffer* const> buffers,
    const void* params,
    size_t params_bytes,
    const uint32_t groups[3]) {
  const Api& vk = rt.api;
  DITTO_ASSERT(params_bytes <= kParamsBytes);
  DITTO_ASSERT(buffers.size() == shader.buffers);
  Pipeline& p = pipeline(rt, g, shader);
  std::memcpy(g.params_map, params, params_bytes);
  check(
      vk.vkResetDescriptorPool(g.device, g.descriptors, 0),
      "vkResetDescriptorPool");
  VkDescriptorSetAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  ai.descriptorPool = g.descriptors;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(
      vk.vkAllocateDescriptorSets(g.device, &ai, &set),
      "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(buffers.size() + 1);
  std::vector<VkWriteDescriptorSet> writes(buffers.size() + 1);
  for (size_t i = 0; i < infos.size(); ++i) {
    Buffer* b = i == 0 ? g.params : buffers[i - 1];
    DITTO_ASSERT(b != nullptr && b->device == g.index);
    infos[i].buffer = b->buffer;
    infos[i].offset = 0;
    infos[i].range = VK_WHOLE_SIZE;
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = uint32_t(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vk.vkUpdateDescriptorSets(
      g.device, uint32_t(writes.size()), writes.data(), 0, nullptr);
  begin(rt, g);
  vk.vkCmdBindPipeline(g.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vk.vkCmdBindDescriptorSets(
      g.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  vk.vkCmdDispatch(g.cmd, groups[0], groups[1], groups[2]);
  submit(rt, g);
}

// The probe shader (kernels.cpp registers it under "probe"): out[i] =
// fma(a[i], b[i], c[i]) for i < n/2 and a[i] * b[i] after.
const Shader* g_probe_shader = nullptr;

void probe(Runtime& rt, Gpu& g) {
  if (g_probe_shader == nullptr) {
    return;
  }
  // fma(x, x, -(1 + 2^-11)) with x = 1 + 2^-12 is 2^-24 when fused and 0
  // when x * x is rounded first; 2^-126 * 0.5 is a denormal.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  const float in[8] = {
      x,
      x,
      -(1.0f + std::ldexp(1.0f, -11)),
      0.0f,
      std::ldexp(1.0f, -126),
      0.5f,
      0.0f,
      0.0f};
  Buffer* b = make_buffer(rt, g, 64, false);
  std::memcpy(g.staging_map, in, sizeof in);
  const Api& vk = rt.api;
  begin(rt, g);
  VkBufferCopy region{0, 0, sizeof in};
  vk.vkCmdCopyBuffer(g.cmd, g.staging->buffer, b->buffer, 1, &region);
  submit(rt, g);
  const uint32_t groups[3] = {1, 1, 1};
  Buffer* bufs[1] = {b};
  const int32_t params[1] = {0};
  record_dispatch(rt, g, *g_probe_shader, bufs, params, sizeof params, groups);
  begin(rt, g);
  vk.vkCmdCopyBuffer(g.cmd, b->buffer, g.staging->buffer, 1, &region);
  submit(rt, g);
  float out[8];
  std::memcpy(out, g.staging_map, sizeof out);
  destroy_buffer(rt, g, b);
  g.info.fma_fused = out[3] == std::fma(in[0], in[1], in[2]);
  g.info.denormals_kept = out[7] == in[4] * in[5];
}

} // namespace

void set_probe_shader(const Shader* shader) {
  g_probe_shader = shader;
}

bool available(std::string* why) {
  Runtime& rt = runtime();
  if (why != nullptr) {
    *why = rt.why_not;
  }
  return !rt.gpus.empty();
}

int device_count() {
  return int(runtime().gpus.size());
}

const DeviceInfo& device_info(int index, const char* op) {
  return open(index, op).info;
}

Buffer* allocate(int index, size_t nbytes) {
  Runtime& rt = runtime();
  Gpu& g = open(index, "empty");
  const size_t bytes = size_class(nbytes);
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  auto it = g.free_buffers.find(bytes);
  if (it != g.free_buffers.end()) {
    Buffer* b = it->second;
    g.free_buffers.erase(it);
    return b;
  }
  try {
    return make_buffer(rt, g, bytes, false);
  } catch (const OutOfMemoryError&) {
    // Give the cached blocks back and try once more.
    for (auto& [size, b] : g.free_buffers) {
      destroy_buffer(rt, g, b);
    }
    g.free_buffers.clear();
    return make_buffer(rt, g, bytes, false);
  }
}

void release(Buffer* buffer) {
  if (buffer == nullptr) {
    return;
  }
  Gpu& g = *runtime().gpus[size_t(buffer->device)];
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  g.free_buffers.emplace(buffer->bytes, buffer);
}

size_t buffer_bytes(const Buffer* buffer) {
  return buffer->bytes;
}

int buffer_device(const Buffer* buffer) {
  return buffer->device;
}

void upload(Buffer* dst, size_t dst_offset, const void* src, size_t nbytes) {
  Runtime& rt = runtime();
  Gpu& g = open(dst->device, "to");
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  DITTO_ASSERT(dst_offset + nbytes <= dst->bytes);
  for (size_t done = 0; done < nbytes;) {
    const size_t n = std::min(kStagingBytes, nbytes - done);
    std::memcpy(g.staging_map, static_cast<const char*>(src) + done, n);
    begin(rt, g);
    VkBufferCopy region{0, dst_offset + done, n};
    rt.api.vkCmdCopyBuffer(g.cmd, g.staging->buffer, dst->buffer, 1, &region);
    submit(rt, g);
    done += n;
  }
}

void download(const Buffer* src, size_t src_offset, void* dst, size_t nbytes) {
  Runtime& rt = runtime();
  Gpu& g = open(src->device, "to");
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  DITTO_ASSERT(src_offset + nbytes <= src->bytes);
  for (size_t done = 0; done < nbytes;) {
    const size_t n = std::min(kStagingBytes, nbytes - done);
    begin(rt, g);
    VkBufferCopy region{src_offset + done, 0, n};
    rt.api.vkCmdCopyBuffer(g.cmd, src->buffer, g.staging->buffer, 1, &region);
    submit(rt, g);
    std::memcpy(static_cast<char*>(dst) + done, g.staging_map, n);
    done += n;
  }
}

void copy(
    const Buffer* src,
    size_t src_offset,
    Buffer* dst,
    size_t dst_offset,
    size_t nbytes) {
  Runtime& rt = runtime();
  DITTO_ASSERT(src->device == dst->device);
  Gpu& g = open(src->device, "copy_");
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  if (nbytes == 0) {
    return;
  }
  begin(rt, g);
  VkBufferCopy region{src_offset, dst_offset, nbytes};
  rt.api.vkCmdCopyBuffer(g.cmd, src->buffer, dst->buffer, 1, &region);
  submit(rt, g);
}

void dispatch(
    int index,
    const Shader& shader,
    std::span<Buffer* const> buffers,
    const void* params,
    size_t params_bytes,
    const uint32_t groups[3]) {
  Runtime& rt = runtime();
  Gpu& g = open(index, shader.name.data());
  std::lock_guard<std::recursive_mutex> lock(g.mu);
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0) {
    return;
  }
  record_dispatch(rt, g, shader, buffers, params, params_bytes, groups);
}

} // namespace ditto::vulkan
