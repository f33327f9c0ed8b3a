#include "ditto/device/vulkan/kernels.h"

#include "ditto/device/device.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "ditto/device/vulkan/launch.h"
#include "ditto/device/vulkan/runtime.h"
#include "ditto/kernels/cpu/kernel_table.h"

namespace ditto::vulkan {

namespace {

// Registers the storage hooks, the kernel slots (Note [Device kernel
// slots]) and the probe while the library loads.
struct Registrar {
  Registrar() {
    detail::DeviceHooks hooks;
    hooks.allocate = [](int index, size_t nbytes) -> void* {
      return allocate(index, nbytes);
    };
    hooks.release = [](void* handle) { release(static_cast<Buffer*>(handle)); };
    detail::register_device_hooks(DeviceType::Vulkan, hooks);
    kernels::DeviceKernels k;
#define DITTO_VULKAN_FILL_SLOT(name) k.name = &name;
    DITTO_DEVICE_KERNEL_SLOTS(DITTO_VULKAN_FILL_SLOT)
#undef DITTO_VULKAN_FILL_SLOT
    kernels::register_device_kernels(DeviceType::Vulkan, k);
    set_probe_shader(&kProbe);
  }
};
const Registrar registrar;

} // namespace

void copy_into(const Tensor& dst, const Tensor& src_in, const char* op) {
  DITTO_CHECK(
      dst.device() == src_in.device(),
      InternalError,
      op,
      "vulkan::copy_into on two devices");
  const bool overlap = dst.storage() == src_in.storage();
  Tensor src = (overlap ? src_in.clone() : src_in).expand(dst.sizes());
  if (dst.dtype() == src.dtype()) {
    copy_on_device(dst, src, op);
  } else {
    cast_on_device(dst, src, op);
  }
}

void upload_into(const Tensor& dst, const Tensor& host, const char* op) {
  const bool direct = dst.is_contiguous();
  Tensor stage =
      direct ? dst : device_tensor(dst.sizes(), dst.dtype(), dst.device());
  check_extent(stage, op);
  upload(
      buffer_of(stage),
      size_t(stage.storage_offset()) * stage.element_size(),
      host.raw_data(),
      host.nbytes());
  if (!direct) {
    copy_on_device(dst, stage, op);
  }
}

Tensor to_host(const Tensor& src, const char* op) {
  // src's own elements, contiguous on the device first.
  Tensor packed = src;
  if (!src.is_contiguous()) {
    packed = device_tensor(src.sizes(), src.dtype(), src.device());
    copy_on_device(packed, src, op);
  }
  check_extent(packed, op);
  Tensor host = detail::new_tensor(packed.sizes(), packed.dtype());
  download(
      buffer_of(packed),
      size_t(packed.storage_offset()) * packed.element_size(),
      host.raw_data(),
      host.nbytes());
  return host;
}

namespace {

// binary() on int64 operands: add, sub, mul, maximum, minimum.
void binary_int64(
    int code,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* name) {
  require_kernel(
      b.dtype() == kInt64 && out.dtype() == kInt64 &&
          (code == 0 || code == 1 || code == 2 || code == 5 || code == 6),
      name,
      kInt64,
      out.device());
  require_feature(
      device_info(device_of(out), name).int64,
      name,
      out.device(),
      "64-bit integers in shaders");
  const bool a_scalar = a.device().is_cpu();
  const bool b_scalar = b.device().is_cpu();
  for (const Tensor* t : {&out, &a, &b}) {
    if (!t->device().is_cpu()) {
      check_extent(*t, name);
    }
  }
  LoopParams lp(
      out.sizes(), {&out, a_scalar ? nullptr : &a, b_scalar ? nullptr : &b});
  lp.p[kOp] = code;
  // The scalar's 64 bits: the low word in its operand's slot, the high
  // word in the op's scalar slot (binary_i64.comp).
  for (int k : {1, 2}) {
    const Tensor& t = k == 1 ? a : b;
    if (t.device().is_cpu()) {
      const uint64_t bits = std::bit_cast<uint64_t>(t.item<int64_t>());
      lp.p[kFlags] |= 1 << (k + 1);
      lp.p[size_t(kScalar + k)] = int32_t(uint32_t(bits));
      lp.p[kOpScalar] = int32_t(uint32_t(bits >> 32));
    }
  }
  if (out.numel() == 0) {
    return;
  }
  Buffer* o = buffer_of(out);
  run(device_of(out),
      kBinaryI64,
      {o, a_scalar ? o : buffer_of(a), b_scalar ? o : buffer_of(b)},
      lp.p.data(),
      sizeof lp.p,
      out.numel());
}

} // namespace

void binary(
    int /*op: the CPU's*/,
    int code,
    bool compare,
    bool float64,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* name) {
  const Dtype in = a.dtype();
  if (in == kInt64 && !compare) {
    binary_int64(code, out, a, b, name);
    return;
  }
  require_kernel(
      in == kFloat32 && b.dtype() == kFloat32 && code >= 0 &&
          (compare ? out.dtype() == kBool : out.dtype() == kFloat32),
      name,
      in,
      out.device());
  require_feature(
      !compare || device_info(device_of(out), name).storage8,
      name,
      out.device(),
      "8-bit storage for the bool result");
  const bool a_scalar = a.device().is_cpu();
  const bool b_scalar = b.device().is_cpu();
  for (const Tensor* t : {&out, &a, &b}) {
    if (!t->device().is_cpu()) {
      check_extent(*t, name);
    }
  }
  LoopParams lp(
      out.sizes(), {&out, a_scalar ? nullptr : &a, b_scalar ? nullptr : &b});
  lp.p[kOp] = code;
  lp.scalar(1, a_scalar ? &a : nullptr);
  lp.scalar(2, b_scalar ? &b : nullptr);
  if (out.numel() == 0) {
    return;
  }
  require_feature(
      !float64 || device_info(device_of(out), name).float64,
      name,
      out.device(),
      "float64, from which its division is made exact");
  Buffer* o = buffer_of(out);
  run(device_of(out),
      compare       ? kCompareF32
          : float64 ? kBinaryF32Div
                    : kBinaryF32,
      {o, a_scalar ? o : buffer_of(a), b_scalar ? o : buffer_of(b)},
      lp.p.data(),
      sizeof lp.p,
      out.numel());
}

void where(
    const Tensor& out,
    const Tensor& cond,
    const Tensor& a,
    const Tensor& b,
    const char* name) {
  require_kernel(
      out.element_size() == 4 && device_info(device_of(out), name).storage8,
      name,
      out.dtype(),
      out.device());
  for (const Tensor* t : {&out, &cond, &a, &b}) {
    if (!t->is_cpu()) {
      check_extent(*t, name);
    }
  }
  DITTO_CHECK(
      !cond.is_cpu(),
      ValueError,
      name,
      "the condition must be on ",
      out.device());
  auto on_device = [](const Tensor* t) { return t->is_cpu() ? nullptr : t; };
  LoopParams lp(out.sizes(), {&out, &cond, on_device(&a), on_device(&b)});
  if (a.is_cpu()) {
    lp.p[kFlags] |= 8;
    uint32_t bits = 0;
    std::memcpy(&bits, a.raw_data(), 4);
    lp.p[kScalar + 2] = int32_t(bits);
  }
  if (b.is_cpu()) {
    lp.p[kFlags] |= 16;
    uint32_t bits = 0;
    std::memcpy(&bits, b.raw_data(), 4);
    lp.p[kScalar + 3] = int32_t(bits);
  }
  if (out.numel() == 0) {
    return;
  }
  Buffer* o = buffer_of(out);
  run(device_of(out),
      kWhere,
      {o,
       buffer_of(cond),
       a.is_cpu() ? o : buffer_of(a),
       b.is_cpu() ? o : buffer_of(b)},
      lp.p.data(),
      sizeof lp.p,
      out.numel());
}

void reduce(
    kernels::ReduceKind kind,
    const Tensor& out,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    const char* name) {
  DITTO_CHECK(
      kind != kernels::ReduceKind::Prod,
      NotImplementedError,
      name,
      "no kernel on ",
      view.device(),
      " for this op");
  const bool mean = kind == kernels::ReduceKind::Mean;
  require_kernel(
      out.dtype() == kFloat32 && view.dtype() == kFloat32,
      name,
      view.dtype(),
      view.device());
  require_feature(
      device_info(device_of(out), name).float64,
      name,
      out.device(),
      "float64, from which the mean's division is made exact");
  check_extent(view, name);
  check_extent(out, name);
  if (rows == 0) {
    return;
  }
  constexpr int64_t kChunk = kernels::kReduceGrain;
  static_assert(kChunk == 16384, "reduce_f32.comp's kChunk");
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
  Tensor partials = device_tensor(
      {std::max<int64_t>(rows * chunks, 1)}, kFloat32, out.device());
  LoopParams lp(view.sizes(), {&view});
  lp.p[kScalar] = int32_t(rows);
  lp.p[kScalar + 1] = int32_t(inner);
  lp.p[kScalar + 2] = int32_t(chunks);
  lp.p[kScalar + 3] = mean ? 1 : 0;
  if (chunks > 0) {
    // One workgroup per chunk (up to 65535; they loop over the rest).
    const uint32_t groups[3] = {
        uint32_t(std::min<int64_t>(rows * chunks, 65535)), 1, 1};
    Buffer* bufs[2] = {buffer_of(partials), buffer_of(view)};
    dispatch(
        device_of(out), kReduceF32, bufs, lp.p.data(), sizeof lp.p, groups);
  }
  run(device_of(out),
      kReduceCombineF32,
      {buffer_of(out), buffer_of(partials)},
      lp.p.data(),
      sizeof lp.p,
      rows);
}

void unary(
    int /*op: the CPU's*/,
    int code,
    bool float64,
    const Tensor& out,
    const Tensor& x,
    const char* name) {
  // unary_f32.comp's codes: neg 0, abs 1, relu 2, exp 3, log 4 and sqrt 5
  // (these two in the float64 build), from the ops' declarations.
  require_kernel(
      out.dtype() == kFloat32 && code >= 0, name, out.dtype(), out.device());
  check_extent(out, name);
  check_extent(x, name);
  if (out.numel() == 0) {
    return;
  }
  LoopParams lp(out.sizes(), {&out, &x});
  lp.p[kOp] = code;
  const bool f64 = float64;
  require_feature(
      !f64 || device_info(device_of(out), name).float64,
      name,
      out.device(),
      "float64, from which log's division and sqrt are made exact");
  run(device_of(out),
      f64 ? kUnaryF32F64 : kUnaryF32,
      {buffer_of(out), buffer_of(x)},
      lp.p.data(),
      sizeof lp.p,
      out.numel());
}

void fused(
    int op,
    double s,
    const Tensor& out,
    const Tensor& x,
    const Tensor& y,
    const Tensor* z,
    const char* name) {
  require_kernel(
      out.dtype() == kFloat32 && (op == 0 || op == 1 || op == 2),
      name,
      out.dtype(),
      out.device());
  require_feature(
      op != 2 || device_info(device_of(out), name).float64,
      name,
      out.device(),
      "float64, from which the division is made exact");
  const Tensor* ops[3] = {&x, &y, z};
  for (const Tensor* t : ops) {
    if (t != nullptr && !t->is_cpu()) {
      check_extent(*t, name);
    }
  }
  check_extent(out, name);
  auto on_device = [](const Tensor* t) {
    return t == nullptr || t->is_cpu() ? nullptr : t;
  };
  LoopParams lp(
      out.sizes(), {&out, on_device(&x), on_device(&y), on_device(z)});
  lp.p[kOp] = op;
  lp.p[kOpScalar] = std::bit_cast<int32_t>(float(s));
  lp.scalar(1, x.is_cpu() ? &x : nullptr);
  lp.scalar(2, y.is_cpu() ? &y : nullptr);
  lp.scalar(3, z != nullptr && z->is_cpu() ? z : nullptr);
  if (out.numel() == 0) {
    return;
  }
  Buffer* o = buffer_of(out);
  auto buf = [&](const Tensor* t) {
    return t == nullptr || t->is_cpu() ? o : buffer_of(*t);
  };
  run(device_of(out),
      op == 2 ? kFusedF32Div : with_fma(out, kFusedF32, kFusedF32Fma64, name),
      {o, buf(&x), buf(&y), buf(z)},
      lp.p.data(),
      sizeof lp.p,
      out.numel());
}

void gemm(
    Matrix c,
    Matrix a,
    Matrix b,
    int64_t m,
    int64_t k,
    int64_t n,
    const char* name) {
  require_kernel(c.t->dtype() == kFloat32, name, c.t->dtype(), c.t->device());
  for (const Matrix* x : {&c, &a, &b}) {
    check_extent(*x->t, name);
  }
  if (m == 0 || n == 0) {
    return;
  }
  const int32_t params[12] = {
      int32_t(m),
      int32_t(n),
      int32_t(k),
      int32_t(a.offset),
      int32_t(a.rs),
      int32_t(a.cs),
      int32_t(b.offset),
      int32_t(b.rs),
      int32_t(b.cs),
      int32_t(c.offset),
      int32_t(c.rs),
      int32_t(c.cs)};
  // 128 x 128 tiles where they still give every compute unit several
  // (same bits: the tile never changes a chain).
  // (H100: 1024^2 ran at 9.8 TFLOP/s in 64-tiles, 6.6 in 128-tiles;
  // 2048^2 at 14.4 against 18.9.)
  const int64_t tile = m * n >= int64_t(2048) * 2048 ? 128 : 64;
  const uint32_t groups[3] = {
      uint32_t((n + tile - 1) / tile), uint32_t((m + tile - 1) / tile), 1};
  Buffer* bufs[3] = {buffer_of(*c.t), buffer_of(*a.t), buffer_of(*b.t)};
  dispatch(
      device_of(*c.t),
      tile == 128 ? with_fma(*c.t, kMmF32Big, kMmF32BigFma64, name)
                  : with_fma(*c.t, kMmF32, kMmF32Fma64, name),
      bufs,
      params,
      sizeof params,
      groups);
}

void arg_reduce(
    const Tensor& values,
    const Tensor& indices,
    const Tensor& view,
    int64_t rows,
    int64_t inner,
    bool is_max,
    const char* name) {
  require_kernel(view.dtype() == kFloat32, name, view.dtype(), view.device());
  for (const Tensor* t : {&values, &indices, &view}) {
    check_extent(*t, name);
  }
  check_based(values);
  check_based(indices);
  if (rows == 0) {
    return;
  }
  constexpr int64_t kChunk = kernels::kReduceGrain;
  static_assert(kChunk == 16384, "arg_f32.comp's kChunk");
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
  LoopParams lp(view.sizes(), {&view});
  lp.p[kOp] = is_max ? 1 : 0;
  lp.p[kScalar] = int32_t(rows);
  lp.p[kScalar + 1] = int32_t(inner);
  lp.p[kScalar + 2] = int32_t(chunks);
  const int dev = device_of(view);
  if (chunks == 1) {
    run(dev,
        kArgF32,
        {buffer_of(values),
         buffer_of(indices),
         buffer_of(view),
         buffer_of(view)},
        lp.p.data(),
        sizeof lp.p,
        rows);
    return;
  }
  // Each chunk's extremum, then the chunks combined in order.
  Tensor pv = device_tensor({rows * chunks}, kFloat32, view.device());
  Tensor pi = device_tensor({rows * chunks}, kInt64, view.device());
  run(dev,
      kArgF32,
      {buffer_of(pv), buffer_of(pi), buffer_of(view), buffer_of(view)},
      lp.p.data(),
      sizeof lp.p,
      rows * chunks);
  lp.p[kScalar + 3] = 1;
  run(dev,
      kArgF32,
      {buffer_of(values), buffer_of(indices), buffer_of(pv), buffer_of(pi)},
      lp.p.data(),
      sizeof lp.p,
      rows);
}

} // namespace ditto::vulkan

namespace ditto {

bool is_vulkan_available() {
  return vulkan::available();
}

std::string vulkan_unavailable_reason() {
  std::string why;
  vulkan::available(&why);
  return why;
}

int vulkan_device_count() {
  return vulkan::device_count();
}

VulkanDeviceInfo vulkan_device_info(int index) {
  const vulkan::DeviceInfo& d =
      vulkan::device_info(index, "vulkan_device_info");
  VulkanDeviceInfo out;
  out.name = d.name;
  out.type = d.type;
  out.driver = d.driver;
  out.api_version = d.api_version;
  out.memory_bytes = d.memory_bytes;
  out.float64 = d.float64;
  out.denorm_preserve_float32 = d.denorm_preserve_float32;
  out.denormals_kept = d.denormals_kept;
  out.fma_fused = d.fma_fused;
  return out;
}

} // namespace ditto
