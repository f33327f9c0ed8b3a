#include "ditto/device/vulkan/launch.h"

#include <algorithm>
#include <vector>

namespace ditto::vulkan {

Buffer* buffer_of(const Tensor& t) {
  return static_cast<Buffer*>(t.storage()->data());
}

int device_of(const Tensor& t) {
  return t.device().resolved_index();
}

constexpr int64_t kMaxElements = INT32_MAX;

void check_extent(const Tensor& t, const char* op) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 0) {
      last += (t.size(d) - 1) * std::max<int64_t>(t.stride(d), 0);
    }
  }
  DITTO_CHECK(
      t.numel() <= kMaxElements && last <= kMaxElements &&
          int64_t(t.storage()->nbytes() / t.element_size()) <= kMaxElements * 2,
      ValueError,
      op,
      "tensors of 2^31 elements or more are not supported on ",
      t.device(),
      " yet");
}

LoopParams::LoopParams(
    const Shape& sizes,
    std::initializer_list<const Tensor*> ops) {
  const size_t nops = ops.size();
  std::vector<int64_t> sz;
  std::vector<std::vector<int64_t>> st(nops);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) {
      continue;
    }
    sz.push_back(sizes[d]);
    size_t k = 0;
    for (const Tensor* t : ops) {
      st[k++].push_back(t == nullptr ? 0 : t->stride(int64_t(d)));
    }
  }
  // Merge dim d into d-1 where every operand steps through both as one.
  for (size_t d = sz.size(); d-- > 1;) {
    bool merge = true;
    for (size_t k = 0; k < nops; ++k) {
      merge = merge && st[k][d - 1] == st[k][d] * sz[d];
    }
    if (merge) {
      sz[d - 1] *= sz[d];
      sz.erase(sz.begin() + std::ptrdiff_t(d));
      for (size_t k = 0; k < nops; ++k) {
        st[k][d - 1] = st[k][d];
        st[k].erase(st[k].begin() + std::ptrdiff_t(d));
      }
    }
  }
  DITTO_ASSERT(sz.size() <= 8 && nops <= 4);
  int64_t n = 1;
  for (int64_t s : sizes) {
    n *= s;
  }
  p[0] = int32_t(n);
  p[1] = int32_t(sz.size());
  for (size_t d = 0; d < sz.size(); ++d) {
    p[2 + d] = int32_t(sz[d]);
  }
  bool contiguous = sz.size() <= 1;
  size_t k = 0;
  for (const Tensor* t : ops) {
    p[10 + 9 * k] = t == nullptr ? 0 : int32_t(t->storage_offset());
    for (size_t d = 0; d < sz.size(); ++d) {
      p[11 + 9 * k + d] = int32_t(st[k][d]);
    }
    if (t != nullptr && !sz.empty()) {
      contiguous = contiguous && st[k].back() == 1;
    }
    ++k;
  }
  p[kFlags] = contiguous ? 1 : 0;
}

void run(
    int device,
    const Shader& s,
    std::initializer_list<Buffer*> buffers,
    const void* params,
    size_t bytes,
    int64_t n) {
  // 256 threads per group; groups loop over the rest.
  const uint32_t groups[3] = {
      uint32_t(std::clamp<int64_t>((n + 255) / 256, 1, 65535)), 1, 1};
  std::vector<Buffer*> bufs(buffers);
  dispatch(device, s, bufs, params, bytes, groups);
}

// NotImplementedError naming the op unless ok: no kernel for the dtype, or
// the device lacks what the kernel needs.
void require_kernel(bool ok, const char* name, Dtype dtype, Device device) {
  DITTO_CHECK(
      ok,
      NotImplementedError,
      name,
      "no kernel for ",
      dtype,
      " on ",
      device,
      " yet");
}

void require_feature(
    bool ok,
    const char* name,
    Device device,
    const char* what) {
  DITTO_CHECK(ok, NotImplementedError, name, device, " has no ", what);
}

// dst = src, both on one device, one dtype, src expanded to dst's shape.
void copy_on_device(const Tensor& dst, const Tensor& src, const char* op) {
  // Copies move bits, so every dtype has one: by 1-, 4- or 8-byte words.
  const size_t es = dst.element_size();
  DITTO_CHECK(
      es != 1 || device_info(device_of(dst), op).storage8,
      TypeError,
      op,
      dst.dtype(),
      " tensors need 8-bit storage buffers, which ",
      dst.device(),
      " does not offer");
  check_extent(dst, op);
  check_extent(src, op);
  if (dst.numel() == 0) {
    return;
  }
  LoopParams lp(dst.sizes(), {&dst, &src});
  run(device_of(dst),
      es == 1       ? kCopy8
          : es == 4 ? kCopy32
                    : kCopy64,
      {buffer_of(dst), buffer_of(src)},
      lp.p.data(),
      sizeof lp.p,
      dst.numel());
}

// dst = src converted (the CPU's convert(), cast.comp), one device.
void cast_on_device(const Tensor& dst, const Tensor& src, const char* op) {
  const DeviceInfo& info = device_info(device_of(dst), op);
  const bool bytes = dst.element_size() == 1;
  DITTO_CHECK(
      info.float64 && info.int64 && (!bytes || info.storage8),
      TypeError,
      op,
      "converting ",
      src.dtype(),
      " to ",
      dst.dtype(),
      " on ",
      dst.device(),
      " needs float64, int64 and 8-bit storage in shaders, which it does "
      "not offer all of");
  check_extent(dst, op);
  check_extent(src, op);
  if (dst.numel() == 0) {
    return;
  }
  LoopParams lp(dst.sizes(), {&dst, &src});
  lp.p[kOp] = dtype_index(src.dtype());
  lp.p[kOpScalar] = dtype_index(dst.dtype());
  run(device_of(dst),
      bytes ? kCastToBytes : kCast,
      {buffer_of(dst), buffer_of(src)},
      lp.p.data(),
      sizeof lp.p,
      dst.numel());
}

Tensor device_tensor(const Shape& sizes, Dtype dtype, Device device) {
  return detail::new_tensor(sizes, dtype, device);
}

// For the shaders that index contiguous operands from their buffer's
// start: t itself when it is contiguous and starts there, else such a
// copy. (Outputs are new tensors, which always do.)
Tensor based(const Tensor& t) {
  if (!t.defined() || (t.is_contiguous() && t.storage_offset() == 0)) {
    return t;
  }
  Tensor copy = device_tensor(t.sizes(), t.dtype(), t.device());
  copy_on_device(copy, t, "contiguous");
  return copy;
}

void check_based(const Tensor& out) {
  DITTO_ASSERT(out.is_contiguous() && out.storage_offset() == 0);
}

// The shader for a chain of fma on t's device: the plain one where fma()
// rounds once, else the one building it from float64 (Note [The device's
// arithmetic]); without float64 it cannot be exact, and the op raises
// rather than differ.
const Shader& with_fma(
    const Tensor& t,
    const Shader& plain,
    const Shader& emulated,
    const char* name) {
  const DeviceInfo& info = device_info(device_of(t), name);
  DITTO_CHECK(
      info.fma_fused || info.float64,
      NotImplementedError,
      name,
      t.device(),
      " (",
      info.name,
      ") rounds fma() twice and has no float64 to do it exactly: this op "
      "cannot give the CPU's bits there");
  return info.fma_fused ? plain : emulated;
}

} // namespace ditto::vulkan
