#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "ditto/core/api.h"
#include "ditto/core/device.h"
#include "ditto/core/dtype.h"
#include "ditto/core/error.h"
#include "ditto/core/scalar.h"
#include "ditto/core/shape.h"
#include "ditto/core/storage.h"
#include "ditto/random/generator.h"

namespace ditto {

// What a Tensor handle points at: a storage and how to read it.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape sizes;
  Shape strides; // in elements
  int64_t offset = 0; // in elements
  Dtype dtype = kFloat32;
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
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(Dtype dtype) const; // returns *this when the dtype already matches
  // Copies src into this tensor, broadcasting and converting the dtype.
  Tensor& copy_(const Tensor& src);

  // ---- views (share storage)
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor permute(const IntList& dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(
      int64_t dim,
      int64_t start = 0,
      int64_t end = INT64_MAX,
      int64_t step = 1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor as_strided(const Shape& sizes, const Shape& strides, int64_t offset)
      const;

  // ---- in-place ops (return *this)
  // Gives the tensor these sizes, contiguous, growing its storage if needed
  // (every view of the storage sees the new memory). The grown part is
  // uninitialized, or filled as empty() fills while the deterministic mode
  // and determinism::fill_uninitialized_memory() are on.
  Tensor& resize_(const Shape& shape);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();
  Tensor& add_(const Tensor& other);
  Tensor& add_(const Scalar& other);
  Tensor& sub_(const Tensor& other);
  Tensor& sub_(const Scalar& other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor& clamp_(
      const std::optional<Scalar>& min,
      const std::optional<Scalar>& max);

  // ---- random fills (ditto/ops/random.h); without a generator they use
  // the current thread's default one.
  // Uniform on [from, to): PyTorch's exact values for mt19937 generators.
  Tensor& uniform_(
      double from = 0.0,
      double to = 1.0,
      const std::optional<Generator>& gen = {});
  Tensor& normal_(
      double mean = 0.0,
      double std = 1.0,
      const std::optional<Generator>& gen = {});
  // Integers on [from, to).
  Tensor& random_(
      int64_t from,
      int64_t to,
      const std::optional<Generator>& gen = {});
  Tensor& bernoulli_(double p, const std::optional<Generator>& gen = {});
  Tensor& bernoulli_(const Tensor& p, const std::optional<Generator>& gen = {});
  Tensor& exponential_(
      double lambd = 1.0,
      const std::optional<Generator>& gen = {});

  // PyTorch's repr: "tensor([0.4963, 0.7682, 0.0885])".
  std::string to_string() const;

  const std::shared_ptr<TensorImpl>& impl() const {
    return impl_;
  }

 private:
  void check_defined(const char* op) const;
  void check_dtype_access(Dtype requested, const char* op) const;

  std::shared_ptr<TensorImpl> impl_;
};

DITTO_API std::ostream& operator<<(std::ostream& os, const Tensor& t);

// xxh3-64 (seed 0) of the dtype code, the number of dims and each size (int64
// little-endian), then the values in logical row-major order with NaNs
// canonicalized. See docs/fingerprint.md.
DITTO_API uint64_t fingerprint(const Tensor& t);

} // namespace ditto
