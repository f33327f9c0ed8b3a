// The Vulkan runtime's start: the loader (dlopen), the instance, the
// devices and their properties, opening a device, and the probe of its
// arithmetic (Note [The Vulkan device], Note [The device's arithmetic] in
// runtime.cpp).

#include "ditto/device/vulkan/detail/vk.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ditto/core/error.h"

namespace ditto::vulkan {
namespace vk_detail {
namespace {

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

} // namespace vk_detail

using namespace vk_detail;

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

} // namespace ditto::vulkan
