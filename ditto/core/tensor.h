#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ditto/core/api.h"
#include "ditto/core/device.h"
#include "ditto/core/dtype.h"
#include "ditto/core/error.h"
#include "ditto/core/scalar.h"
#include "ditto/core/shape.h"
#include "ditto/core/storage.h"
#include "ditto/core/tensor_options.h"

namespace ditto {

namespace autograd {
// What autograd keeps for a tensor (ditto/autograd/); core only holds it.
struct AutogradMeta;
class Node;
} // namespace autograd

// A random-number generator (ditto/random/generator.h). Core includes
// nothing outside core/, so it only names the type: the random fills below
// take it through overloads (a defaulted std::optional<Generator> would
// need the whole class here), and their definitions are in
// ditto/ops/random.cpp.
class Generator;
template <typename T>
class ArrayRef;
namespace indexing {
class TensorIndex;
} // namespace indexing

// The sparse COO parts of a sparse tensor (defined below Tensor).
struct SparseParts;

// How a tensor's elements are laid out: strided (a storage read through
// sizes and strides) or sparse COO (indices and values; docs/sparse.md).
// LibTorch's torch::kStrided and torch::kSparse.
enum class Layout { kStrided, kSparse };
inline constexpr Layout kStrided = Layout::kStrided;
inline constexpr Layout kSparse = Layout::kSparse;

// What a Tensor handle points at: a storage, how to read it, and an
// autograd slot (empty for tensors that never took part in autograd).
// Geometry is fixed at construction; only resize_ changes it.
class DITTO_API TensorImpl {
 public:
  TensorImpl(
      std::shared_ptr<Storage> storage,
      Shape sizes,
      Shape strides,
      int64_t offset,
      Dtype dtype)
      : storage_(std::move(storage)),
        sizes_(std::move(sizes)),
        strides_(std::move(strides)),
        offset_(offset),
        dtype_(dtype) {}
  // A sparse COO tensor: no storage, no strides; sizes are the full sizes.
  TensorImpl(
      std::shared_ptr<const SparseParts> sparse,
      Shape sizes,
      Dtype dtype)
      : sizes_(std::move(sizes)),
        offset_(0),
        dtype_(dtype),
        sparse_(std::move(sparse)) {}
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const std::shared_ptr<Storage>& storage() const {
    return storage_;
  }
  const Shape& sizes() const {
    return sizes_;
  }
  const Shape& strides() const {
    return strides_; // in elements
  }
  int64_t offset() const {
    return offset_; // in elements
  }
  Dtype dtype() const {
    return dtype_;
  }
  bool is_sparse() const {
    return sparse_ != nullptr;
  }
  // Null for a strided tensor.
  const std::shared_ptr<const SparseParts>& sparse() const {
    return sparse_;
  }
  // Replaces a sparse tensor's parts (its in-place ops: zero_, add_).
  void set_sparse(std::shared_ptr<const SparseParts> sparse) {
    sparse_ = std::move(sparse);
  }
  // For resize_: new sizes, contiguous strides, the offset kept.
  void set_sizes_contiguous(Shape sizes);
  // Points this impl at src's data and geometry, keeping its autograd
  // slot (PyTorch's `t.data = src`): how Module::to converts parameters
  // that other handles still refer to.
  void set_data(const TensorImpl& src) {
    storage_ = src.storage_;
    sizes_ = src.sizes_;
    strides_ = src.strides_;
    offset_ = src.offset_;
    dtype_ = src.dtype_;
    sparse_ = src.sparse_;
  }

  autograd::AutogradMeta* autograd_meta() const {
    return autograd_.get();
  }
  void set_autograd_meta(std::shared_ptr<autograd::AutogradMeta> meta) {
    autograd_ = std::move(meta);
  }

 private:
  std::shared_ptr<Storage> storage_;
  Shape sizes_;
  Shape strides_;
  int64_t offset_;
  Dtype dtype_;
  std::shared_ptr<const SparseParts> sparse_;
  std::shared_ptr<autograd::AutogradMeta> autograd_;
};

// A cheap handle: copying a Tensor shares the data (as torch.Tensor does).
// A default-constructed Tensor is undefined and stands for "no tensor".
class DITTO_API Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const {
    return impl_ != nullptr;
  }
  Dtype dtype() const;
  Device device() const;
  // This tensor's dtype and device, for making others like it (LibTorch's
  // options(); requires_grad unset).
  TensorOptions options() const {
    return TensorOptions().dtype(dtype()).device(device());
  }
  const Shape& sizes() const;
  const Shape& strides() const;
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t storage_offset() const;
  int64_t dim() const;
  int64_t numel() const;
  size_t element_size() const;
  size_t nbytes() const;
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const;
  Layout layout() const;
  // False for an undefined tensor.
  bool is_sparse() const {
    return impl_ != nullptr && impl_->is_sparse();
  }

  // ---- sparse COO (ditto/ops/sparse.h, docs/sparse.md). A sparse tensor
  // has no storage or strides: ops that have no sparse form refuse it with
  // a TypeError naming the op.
  int64_t sparse_dim() const;
  int64_t dense_dim() const;
  // The number of stored entries (duplicates included until coalesce()).
  int64_t _nnz() const;
  // _indices, _values, indices, values, coalesce, to_dense and to_sparse
  // are declared (ditto/ops/sparse/sparse.ops.toml; below).
  bool is_coalesced() const;
  // True when both handles point at the same TensorImpl.
  bool is_same(const Tensor& other) const {
    return impl_ == other.impl_;
  }

  // Pointer to the first element; TypeError unless T matches the dtype.
  template <typename T>
  T* data_ptr() const {
    check_dtype_access(dtype_of<std::remove_const_t<T>>, "data_ptr");
    return static_cast<T*>(raw_data());
  }
  void* raw_data() const;

  // The single value, converted to T; ValueError unless numel() == 1.
  template <typename T>
  T item() const {
    return item_scalar().to<T>();
  }
  Scalar item_scalar() const;

  // ---- copies and conversions
  // clone, copy_, fill_, zero_ and resize_ are declared
  // (ditto/ops/factories/copies.ops.toml; tensor_methods_declared.inc,
  // below).
  Tensor contiguous() const;
  // to(dtype), to(device[, dtype]) and to(other), each with non_blocking and
  // copy, are declared too (copies.ops.toml; docs/device.md).
  // LibTorch's spellings of to(dtype) and of views shaped like another.
  Tensor toType(Dtype dtype) const {
    return to(dtype);
  }
  Tensor type_as(const Tensor& other) const {
    return to(other.dtype());
  }
  Dtype scalar_type() const {
    return dtype();
  }
  bool is_floating_point() const {
    return is_floating(dtype());
  }
  Tensor cpu() const {
    return to(kCPU);
  }
  bool is_cpu() const {
    return device().is_cpu();
  }
  bool is_vulkan() const {
    return device().is_vulkan();
  }

  // ---- views (share storage): view, reshape, permute, expand, transpose,
  // t, narrow, select, slice, unsqueeze, squeeze, flatten, as_strided and
  // the *_as forms are declared in ditto/ops/shape/views.ops.toml
  // (tensor_methods_declared.inc, below).
  // x[i]: select(0, i), as LibTorch.
  Tensor operator[](int64_t index) const {
    return select(0, index);
  }

  // ---- in-place ops (return *this)
  // add_, sub_ (with alpha), mul_, div_, pow_, clamp_, addcmul_ ...: the
  // declared ops' in-place forms (ditto/ops/*/*.ops.toml), below.
  // The compound operators: the in-place ops above (recorded as add_...).
  Tensor& operator+=(const Tensor& other) {
    return add_(other);
  }
  Tensor& operator+=(const Scalar& other) {
    return add_(other);
  }
  Tensor& operator-=(const Tensor& other) {
    return sub_(other);
  }
  Tensor& operator-=(const Scalar& other) {
    return sub_(other);
  }
  Tensor& operator*=(const Tensor& other) {
    return mul_(other);
  }
  Tensor& operator*=(const Scalar& other) {
    return mul_(other);
  }
  Tensor& operator/=(const Tensor& other) {
    return div_(other);
  }
  Tensor& operator/=(const Scalar& other) {
    return div_(other);
  }

  // ---- the in-place scatter/index family (ditto/ops/index.h explains the
  // deterministic and fast variants; indices are validated before anything
  // is written).
  // index_add_, index_copy_, put_, scatter_, scatter_add_,
  // scatter_reduce_ and index_reduce_ are declared in
  // ditto/ops/index/index.ops.toml (tensor_methods_declared.inc).
  // index_put_ (self[indices] = values, PyTorch's advanced indexing) is
  // declared in ditto/ops/index/index.ops.toml.
  // LibTorch's indexing (ditto/core/indexing.h): x.index({0, Slice(1,
  // None), "...", idx}) and x.index_put_({...}, value), with the rules of
  // Python's x[0, 1:, ..., idx].
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor& index_put_(
      std::initializer_list<indexing::TensorIndex> indices,
      const Tensor& values);
  Tensor& index_put_(
      ArrayRef<indexing::TensorIndex> indices,
      const Tensor& values);
  Tensor& index_put_(
      std::initializer_list<indexing::TensorIndex> indices,
      const Scalar& value);
  Tensor& index_put_(
      ArrayRef<indexing::TensorIndex> indices,
      const Scalar& value);
  // masked_fill_ (self[mask] = value): elementwise/elementwise.ops.toml.

  // ---- random fills (ditto/ops/random.h): uniform_, normal_, random_,
  // bernoulli_ and exponential_ are declared in
  // ditto/ops/random/random.ops.toml (tensor_methods_declared.inc); without
  // a generator they use the current thread's default one.

  // ---- the ops' method forms: x.sum(), x.matmul(w), x.exp_(), generated
  // from their declarations (ditto/ops/*.ops.toml, tools/opgen.py); each
  // calls the free function, or is defined beside the op's body.
  using TensorPair = std::pair<Tensor, Tensor>;
#define DITTO_METHOD(ret, name, decl, def, body) ret name decl;
#define DITTO_INPLACE_METHOD(name, params, expr) Tensor& name params;
#define DITTO_KERNEL_INPLACE_METHOD(name, params, expr) Tensor& name params;
#define DITTO_BODY_INPLACE_METHOD(name, params) Tensor& name params;
#define DITTO_BODY_METHOD(ret, name, params) ret name params;
#include "ditto/core/tensor_methods_declared.inc"
#undef DITTO_METHOD
#undef DITTO_INPLACE_METHOD
#undef DITTO_KERNEL_INPLACE_METHOD
#undef DITTO_BODY_INPLACE_METHOD
#undef DITTO_BODY_METHOD

  // ---- autograd (ditto/autograd/engine.h, docs/autograd.md)
  // True for a leaf that requires grad and for what ops computed from one
  // while grad mode was on.
  bool requires_grad() const;
  // Marks a leaf (floating dtype) as requiring grad; returns *this.
  Tensor& requires_grad_(bool requires_grad = true);
  // The accumulated gradient: undefined until a backward reaches this leaf
  // (or a non-leaf that called retain_grad()).
  Tensor grad() const;
  Tensor& mutable_grad();
  // The node that computed this tensor (null for a leaf).
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  // The same data (and version counter) without the graph.
  Tensor detach() const;
  // Keeps this non-leaf's gradient in grad() after a backward.
  void retain_grad() const;
  bool retains_grad() const;
  // autograd::backward({*this}, {gradient}, retain_graph, create_graph).
  void backward(
      const Tensor& gradient = {},
      std::optional<bool> retain_graph = std::nullopt,
      bool create_graph = false) const;

  // PyTorch's repr: "tensor([0.4963, 0.7682, 0.0885])".
  std::string to_string() const;
  // LibTorch's Tensor::print(): the type and sizes on a line of stdout,
  // "[CPUFloatType [3, 4]]" ("[UndefinedTensor]" for an undefined one).
  void print() const;

  const std::shared_ptr<TensorImpl>& impl() const {
    return impl_;
  }

 private:
  void check_defined(const char* op) const;
  void check_dtype_access(Dtype requested, const char* op) const;

  std::shared_ptr<TensorImpl> impl_;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const Tensor& t);

// A sparse tensor's parts, shared between handles and never written in
// place: an op that changes a sparse tensor gives its impl new parts.
struct SparseParts {
  Tensor indices; // int64, (sparse_dim, nnz)
  Tensor values; // (nnz, dense sizes...)
  bool coalesced = false;
};

namespace detail {
// TypeError naming op if t is sparse (an op with no sparse form).
DITTO_API void require_strided(const Tensor& t, const char* op);
// A new contiguous tensor whose contents are unspecified; not an op (no
// frame, never traced). Ops that write every element use it.
DITTO_API Tensor new_tensor(const Shape& sizes, Dtype dtype);
DITTO_API Tensor new_tensor(const Shape& sizes, Dtype dtype, Device device);
} // namespace detail

// xxh3-64 (seed 0) of the dtype code, the number of dims and each size (int64
// little-endian), then the values in logical row-major order with NaNs
// canonicalized. See docs/fingerprint.md.
DITTO_API uint64_t fingerprint(const Tensor& t);

} // namespace ditto

// The entries of Tensor::index need the complete Tensor.
#include "ditto/core/indexing.h"
