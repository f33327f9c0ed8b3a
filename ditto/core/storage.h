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

// A block of bytes on a device. Owned blocks are 64-byte aligned (blocks of
// 128 KiB and more are ditto's own mappings, kept for reuse; from 2 MiB
// 2 MiB aligned, in huge pages; Note [Large storages: huge pages and a block
// cache] in storage.cpp); borrowed
// ones (from_blob) call the user's deleter, if any.
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
  // memory (from_blob) and for memory whose address was shared.
  void grow(size_t nbytes);
  // The address was handed to a holder that outlives every op (a NumPy
  // array from numpy(), a DLPack capsule): the bytes stay where they are for
  // the storage's life, so grow() refuses rather than free them under it.
  void share_address() {
    address_shared_.store(true, std::memory_order_relaxed);
  }
  bool address_shared() const {
    return address_shared_.load(std::memory_order_relaxed);
  }

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
  size_t block_bytes_ = 0; // mapped bytes of a large block, else 0
  std::function<void(void*)> deleter_;
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> address_shared_{false};
};

// The cache of released storages of 128 KiB and more, which the next storage
// of the same size reuses (Linux; elsewhere, and under AddressSanitizer,
// storage_cache_available() is false, the others do nothing and return 0). Like
// LibTorch's emptyCache for CUDA: empty_cache() returns every cached block to
// the system. The limit (bytes; 1 GiB by default, 0 turns caching off) bounds
// what is kept; lowering it releases the oldest blocks at once.
DITTO_API bool storage_cache_available();
DITTO_API void empty_cache();
DITTO_API void set_storage_cache_limit(size_t bytes);
DITTO_API size_t storage_cache_limit();
DITTO_API size_t storage_cache_bytes();

} // namespace ditto
