#pragma once

// The Vulkan compute runtime under ditto's `vulkan` device (Note [The Vulkan
// device] in runtime.cpp). Internal: ops reach it through
// ditto/device/vulkan/kernels.h; users through Device and
// ditto/device/device.h.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ditto::vulkan {

// What `ditto env` prints about one device, and what decides whether the
// device can give the CPU's bits (Note [The device's arithmetic]).
struct DeviceInfo {
  std::string name;
  std::string type; // "discrete GPU", "integrated GPU", "CPU", ...
  std::string driver; // driver name and version, as the driver reports them
  std::string api_version;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint64_t memory_bytes = 0; // the largest device-local heap
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_shared_memory = 0; // bytes per workgroup
  bool float64 = false;
  bool int64 = false;
  bool storage8 = false; // 8-bit storage buffers (bool and uint8 copies)
  // SPIR-V DenormPreserve for float32 is available and every shader asks
  // for it; false: the driver may flush float32 denormals to zero.
  bool denorm_preserve_float32 = false;
  // Measured at start-up by a probe shader (Note [The device's arithmetic]).
  bool fma_fused = false; // fma() rounds once, like std::fma
  bool denormals_kept = false; // a float32 denormal survives a multiply
};

// A block of device memory (opaque outside runtime.cpp).
struct Buffer;

// Whether the Vulkan loader (libvulkan.so.1) could be opened and an
// instance created; why not in *why. Cheap after the first call.
bool available(std::string* why = nullptr);
// The compute-capable devices, in the loader's order (0 without a loader).
int device_count();
// InvalidArgument-style ValueError naming op if index is out of range.
const DeviceInfo& device_info(int index, const char* op = "vulkan");

// Device-local memory of nbytes (at least 1) on device index. Freed
// blocks are kept for reuse by the next allocation of the same size class.
Buffer* allocate(int index, size_t nbytes);
void release(Buffer* buffer);
size_t buffer_bytes(const Buffer* buffer);
int buffer_device(const Buffer* buffer);

// Copies between host memory and a buffer (through a staging buffer), and
// within a device. Each returns once the copy is complete.
void upload(Buffer* dst, size_t dst_offset, const void* src, size_t nbytes);
void download(const Buffer* src, size_t src_offset, void* dst, size_t nbytes);
void copy(
    const Buffer* src,
    size_t src_offset,
    Buffer* dst,
    size_t dst_offset,
    size_t nbytes);

// Runs the compute shader `shader` (a name from the table in kernels.cpp)
// over groups[0] x groups[1] x groups[2] workgroups. Binding 0 holds the
// params bytes (at most 4 KiB), bindings 1.. the buffers, in order.
// Returns once the shader has finished (one submission per call).
struct Shader {
  std::string_view name;
  std::span<const uint32_t> spirv; // without DenormPreserve
  std::span<const uint32_t> spirv_denorm; // with it
  uint32_t buffers; // data bindings after the params
};
void dispatch(
    int index,
    const Shader& shader,
    std::span<Buffer* const> buffers,
    const void* params,
    size_t params_bytes,
    const uint32_t groups[3]);

// The shader the start-up probe runs (kernels.cpp registers it).
void set_probe_shader(const Shader* shader);

} // namespace ditto::vulkan
