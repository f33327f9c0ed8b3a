#pragma once

// Note [Device kernel slots]
// The kernels of a device, as one table of slots per device type. An op
// body validates its arguments, makes its operands, and then calls
// detail::device_slots(out, name).slot(...) (ditto/ops/detail/
// cpu_kernels.h): the CPU's table (its loops over kernels::KernelTable,
// filled by ops/) for a CPU tensor, the device's for a device tensor; the
// op names no device. A device fills its slots while the library loads
// (the Vulkan device: ditto/device/vulkan/kernels.cpp); which ops a device
// runs is said by each op's declaration or record (`devices`, Note [Device
// kernels are declared] in ditto/ops/record.cpp): OpScope admits a device
// tensor into those ops alone, so a slot is reached only by an op its
// device declared. A device fills every slot (register_device_kernels
// checks) but the optional ones, which an op composes from its other
// slots where a device leaves one out (clamp from maximum and minimum, a
// batch of products from single ones).
// The slots' contracts (shapes, layouts, dtypes, whose bits) are written
// once, here; a device gives the CPU's bits for each, except where a slot
// says it may not (the `deterministic` flags). The CPU's slots take every
// dtype the op's loops have; a device refuses what it has no kernel for
// (NotImplementedError naming the op, the dtype and the device). A 0-dim
// CPU tensor where a slot takes a tensor operand stands for a scalar (the
// CPU reads it with stride 0).
// Internal: ops/, nn/ and the devices include it; not installed.

#include <array>
#include <cstdint>
#include <type_traits>

#include "ditto/core/device.h"
#include "ditto/core/tensor.h"
#include "ditto/kernels/conv_geometry.h"

namespace ditto::kernels {

// One matrix of a product: elements at offset + i * rs + j * cs of t's
// storage (the offset counts from the storage's start).
struct DeviceMatrix {
  const Tensor* t;
  int64_t offset, rs, cs;
};

// One operand of a batch of products: matrix i's elements at t's first
// element + offsets[i] + r * rs + c * cs (offsets in elements, one per
// matrix).
struct BatchedMatrices {
  const Tensor* t;
  int64_t rs, cs;
  const int64_t* offsets;
};

// nll_loss's operands: x the input as (N, C, S) and target as (N, S),
// contiguous, floating and int64 on one device; weight undefined or C
// values of x's dtype there. The op has checked every target. The Vulkan
// device: float32.
struct NllArgs {
  const Tensor& x;
  const Tensor& target;
  const Tensor& weight;
  int64_t c, s, ignore_index;
};

// conv2d's directions (ditto/ops/conv/algorithms.h): forward "direct" (the
// bits of "im2col_gemm" too), input gradient "direct" or "gemm_col2im",
// weight gradient "gemm_chunked", or "fast" (the chunks' partials added in
// arrival order: nondeterministic).
enum class ConvKernel {
  Forward,
  InputDirect,
  InputCol2im,
  WeightChunked,
  WeightFast
};

// What reduce computes of each row.
enum class ReduceKind { Sum, Mean, Prod };

// max_pool2d on (planes, H, W): {planes, h, w, oh, ow, kh, kw, sh, sw, ph,
// pw, dh, dw}.
using PoolGeom = std::array<int64_t, 13>;

struct DeviceKernels {
  // dst = src on one device: broadcast to dst's shape, converted to dst's
  // dtype.
  void (*copy_into)(const Tensor& dst, const Tensor& src, const char* op) =
      nullptr;
  // Between the host and the device, bytes only (the op layer converts and
  // broadcasts on the host): dst (any strides) takes host's values, host a
  // contiguous CPU tensor of dst's sizes and dtype; to_host returns src's
  // values as such a CPU tensor.
  void (*upload_into)(const Tensor& dst, const Tensor& host, const char* op) =
      nullptr;
  Tensor (*to_host)(const Tensor& src, const char* op) = nullptr;

  // out = a op b elementwise, a and b (of one dtype, the op's compute
  // dtype) expanded to out's shape, or 0-dim CPU tensors. op: the
  // kernels::BinaryOp (the CPU's loop); code: the op's code in the
  // declaration's `vulkan` field, -1 where it has none; compare: a bool
  // result; float64: the kernel needs float64 (div's exact quotient).
  void (*binary)(
      int op,
      int code,
      bool compare,
      bool float64,
      const Tensor& out,
      const Tensor& a,
      const Tensor& b,
      const char* name) = nullptr;
  // out = the fused op (kernels::FusedOp numbering: AddScaled, Addcmul) of
  // x, y, z (z null for AddScaled) with the scalar s, operands of out's
  // dtype expanded to out's shape, or 0-dim CPU tensors.
  void (*fused)(
      int op,
      double s,
      const Tensor& out,
      const Tensor& x,
      const Tensor& y,
      const Tensor* z,
      const char* name) = nullptr;
  // out = op(x), same shape and dtype; op the kernels::UnaryOp, code and
  // float64 as binary's.
  void (*unary)(
      int op,
      int code,
      bool float64,
      const Tensor& out,
      const Tensor& x,
      const char* name) = nullptr;
  // out = cond ? a : b with cond, a, b (a and b of out's dtype) expanded
  // to out's shape; a or b may be a 0-dim CPU tensor (a scalar). The
  // Vulkan device: 4-byte elements.
  void (*where)(
      const Tensor& out,
      const Tensor& cond,
      const Tensor& a,
      const Tensor& b,
      const char* name) = nullptr;

  // The sum (Mean: divided by inner; Prod: the product) of each of the
  // `rows` rows of `inner` elements of view (row-major over view's shape)
  // into out (rows elements, contiguous; int64 for an integral view), with
  // the CPU's chunks, lanes and trees (reduce.cpp). The Vulkan device:
  // float32 Sum and Mean.
  void (*reduce)(
      ReduceKind kind,
      const Tensor& out,
      const Tensor& view,
      int64_t rows,
      int64_t inner,
      const char* name) = nullptr;
  // The extremum (max when is_max) of each row (as reduce's) and the index
  // of its first occurrence (the first NaN wins): values (view's dtype) and
  // indices (int64) contiguous, rows elements each. The Vulkan device:
  // float32.
  void (*arg_reduce)(
      const Tensor& values,
      const Tensor& indices,
      const Tensor& view,
      int64_t rows,
      int64_t inner,
      bool is_max,
      const char* name) = nullptr;
  // c (m x n) = a (m x k) b (k x n), float32, each output the CPU's chain
  // (Note [GEMM accumulation order]).
  void (*gemm)(
      DeviceMatrix c,
      DeviceMatrix a,
      DeviceMatrix b,
      int64_t m,
      int64_t k,
      int64_t n,
      const char* name) = nullptr;

  // Rows of src (len elements each, contiguous) at index[0..n) into out's
  // n rows (index_select).
  void (*select_rows)(
      const Tensor& out,
      const Tensor& src,
      const int64_t* index,
      int64_t n,
      int64_t len,
      const char* name) = nullptr;
  // w's row index[i] += src's row i, for i < n (w has `rows` rows of len);
  // deterministic: the CPU's order, its bits; else atomic additions.
  void (*add_rows)(
      const Tensor& w,
      const Tensor& src,
      const int64_t* index,
      int64_t n,
      int64_t rows,
      int64_t len,
      bool deterministic,
      const char* name) = nullptr;

  // out (contiguous float32) = bernoulli(p) from the Philox stream with this
  // key, element i from words first + 2i and + 2i + 1 (ops/random/
  // random.cpp's philox_fill): the CPU's bits.
  void (*philox_bernoulli)(
      const Tensor& out,
      uint32_t key0,
      uint32_t key1,
      uint64_t first,
      double p,
      const char* name) = nullptr;

  // conv2d's directions in float32, each output the CPU's chain for the
  // algorithm (ConvKernel), the weight gradient's chunks of per_chunk
  // samples; a, b, out contiguous in the direction's layout.
  void (*conv2d)(
      ConvKernel kernel,
      const detail::conv::Geom& g,
      int64_t per_chunk,
      const Tensor& out,
      const Tensor& a,
      const Tensor& b,
      const char* name) = nullptr;
  // max_pool2d on (planes, H, W) contiguous float32. Forward: out and
  // indices (int64) from x. Backward: grad_in (zeros) from grad_out and
  // indices, deterministic: the CPU's serial loop per plane, its bits; else
  // atomic additions (which differ only where windows overlap); IndexError
  // naming the op, before anything is written, for an index outside a
  // plane.
  void (*max_pool2d)(
      const PoolGeom& g,
      const Tensor& out,
      const Tensor& indices,
      const Tensor& x,
      const char* name) = nullptr;
  void (*max_pool2d_backward)(
      const PoolGeom& g,
      const Tensor& grad_in,
      const Tensor& indices,
      const Tensor& grad_out,
      bool deterministic,
      const char* name) = nullptr;

  // nll_loss: reduction none: out (N S, contiguous) = -(x[n, t, s] w[t]), 0
  // where ignored; nll_sum: the float64 sum of those terms in order (the
  // CPU's accumulator); nll_backward: into grad_in (zeros, contiguous like
  // x), -(w[t] g) at each kept target, g the element of go (reduction none:
  // go contiguous, N S values) or the scalar `scale` (go undefined, a
  // value of grad_in's dtype), each product in grad_in's dtype.
  void (*nll_terms)(const NllArgs& a, const Tensor& out, const char* name) =
      nullptr;
  double (*nll_sum)(const NllArgs& a, const char* name) = nullptr;
  void (*nll_backward)(
      const NllArgs& a,
      const Tensor& grad_in,
      const Tensor& go,
      double scale,
      const char* name) = nullptr;

  // The optional slots (DITTO_DEVICE_OPTIONAL_SLOTS): a device may leave
  // one empty, and the op then composes it from other ops (on the device's
  // other slots) with the CPU's bits, as its body says.
  // out = clamp(x, lo, hi): x of out's shape and dtype, lo and hi 0-dim CPU
  // tensors of out's dtype or null (no bound); the CPU's loop:
  // maximum(lo, x), then minimum(hi, .).
  void (*clamp)(
      const Tensor& out,
      const Tensor& x,
      const Tensor* lo,
      const Tensor* hi,
      const char* name) = nullptr;
  // out (contiguous [batches, m, n]) = a's matrix i (m x k) times b's (k x
  // n) for each i, each output the CPU's chain (Note [GEMM accumulation
  // order]; Note [Split-K] for k >= 16384). A device without it runs each
  // product through gemm, a deep one split as Note [Split-K on a device]
  // (ditto/ops/linalg/linalg.cpp).
  void (*gemm_batched)(
      const Tensor& out,
      const BatchedMatrices& a,
      const BatchedMatrices& b,
      int64_t batches,
      int64_t m,
      int64_t k,
      int64_t n,
      const char* name) = nullptr;
};

// Every slot of DeviceKernels but the optional ones, by name, once:
// register_device_kernels checks each is filled, and a device declares and
// fills its kernels from the list (ditto/device/vulkan/kernels.h and
// kernels.cpp), so that a slot's signature is written here only.
#define DITTO_DEVICE_KERNEL_SLOTS(X) \
  X(copy_into)                       \
  X(upload_into)                     \
  X(to_host)                         \
  X(binary)                          \
  X(fused)                           \
  X(unary)                           \
  X(where)                           \
  X(reduce)                          \
  X(arg_reduce)                      \
  X(gemm)                            \
  X(select_rows)                     \
  X(add_rows)                        \
  X(philox_bernoulli)                \
  X(conv2d)                          \
  X(max_pool2d)                      \
  X(max_pool2d_backward)             \
  X(nll_terms)                       \
  X(nll_sum)                         \
  X(nll_backward)

// The slots a device may leave empty (see above): their ops compose them.
#define DITTO_DEVICE_OPTIONAL_SLOTS(X) X(clamp) X(gemm_batched)

// A slot's function type (void(const Tensor&, const Tensor&, const char*)
// for copy_into): a device declares its kernel for the slot as
// `DITTO_DEVICE_KERNEL_TYPE(copy_into) copy_into;`.
#define DITTO_DEVICE_KERNEL_TYPE(name) \
  std::remove_pointer_t<decltype(::ditto::kernels::DeviceKernels::name)>

namespace detail {
#define DITTO_DEVICE_KERNEL_COUNT(name) +1
// The list names every member: each member is one slot (a pointer).
static_assert(
    sizeof(DeviceKernels) ==
    (0 DITTO_DEVICE_KERNEL_SLOTS(DITTO_DEVICE_KERNEL_COUNT)
         DITTO_DEVICE_OPTIONAL_SLOTS(DITTO_DEVICE_KERNEL_COUNT)) *
        sizeof(void (*)()));
#undef DITTO_DEVICE_KERNEL_COUNT
} // namespace detail

// The device fills its slots while the library loads: InternalError naming
// the device and the first empty slot unless every slot is filled.
DITTO_API void register_device_kernels(DeviceType type, const DeviceKernels& k);

// The slots of t's device (t not on the CPU): InternalError naming op where
// that device registered none.
DITTO_API const DeviceKernels& device_kernels(const Tensor& t, const char* op);

} // namespace ditto::kernels
