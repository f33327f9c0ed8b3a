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

#include "ditto/device/vulkan/detail/vk.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ditto/core/error.h"

namespace ditto::vulkan {
namespace vk_detail {

namespace {

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

} // namespace

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

} // namespace vk_detail

using namespace vk_detail;

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
