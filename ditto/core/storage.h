#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "ditto/core/api.h"
#include "ditto/core/device.h"

namespace ditto {

inline constexpr size_t kStorageAlignment = 64;

// A block of bytes on a device. Owned blocks come from a 64-byte-aligned
// allocator; borrowed ones (from_blob) call the user's deleter, if any.
class DITTO_API Storage {
 public:
  // Allocates nbytes (uninitialized), 64-byte aligned.
  explicit Storage(size_t nbytes, Device device = kCPU);
  // Wraps memory owned by the caller; deleter (may be empty) runs at the end.
  Storage(
      void* data,
      size_t nbytes,
      std::function<void(void*)> deleter,
      Device device = kCPU);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const {
    return data_;
  }
  size_t nbytes() const {
    return nbytes_;
  }
  Device device() const {
    return device_;
  }
  bool owns_memory() const {
    return owned_;
  }
  // Reallocates an owned storage to nbytes (> nbytes()), keeping its bytes;
  // every tensor sharing it sees the new memory. ValueError for borrowed
  // memory (from_blob).
  void grow(size_t nbytes);

  // The version counter that in-place ops bump (PyTorch keeps it per tensor
  // and shares it among views; views share the storage here, so it lives
  // with the bytes). Autograd compares it with the version a saved tensor
  // had when its node was recorded. See OpScope::finish for when a write is
  // counted.
  uint64_t version() const {
    return version_.load(std::memory_order_relaxed);
  }
  void bump_version() {
    version_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  bool owned_ = true;
  std::function<void(void*)> deleter_;
  std::atomic<uint64_t> version_{0};
};

} // namespace ditto
