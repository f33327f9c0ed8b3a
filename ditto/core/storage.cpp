#include "ditto/core/storage.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "ditto/core/error.h"

namespace ditto {

namespace {

// Note [Large storages: huge pages and a block cache]
// Storages of 128 KiB and more are mapped by ditto itself, and a released
// one is kept for the next storage of the same size (up to
// storage_cache_limit() bytes in all, 1 GiB unless set; the oldest go first)
// instead of being returned to the system. Those of 2 MiB and more start
// from a 2 MiB boundary, advised MADV_HUGEPAGE.
// - Colors: a storage starts 0 to 31 times 17 cache lines past its
//   boundary (2 MiB), or past its page (smaller blocks: the 32 offsets of
//   17 x c lines modulo 64), a different offset for each new block. With
//   every block at the boundary, an output and its inputs had the same
//   address bits below 2 MiB, so loads waited on unrelated stores (4K
//   aliasing) and the streams fought over the same cache sets: exp of 1M
//   floats 514 to 700 us.
// - Huge pages: with transparent huge pages "always" or "madvise" Linux
//   backs the block with 2 MiB pages, and a pass over three 4 MB tensors
//   (add of 1M floats) no longer walks the page tables once per 4 KiB: 163
//   to 142 us in a standalone loop (Zen 4, one thread).
// - The cache: a fresh mapping faults its pages in on first write (a 64 MB
//   output: 7 ms in 2 MiB pages, 28 ms in 4 KiB ones), and glibc maps fresh
//   memory for every block of 32 MiB and more. Training steps allocate the
//   same sizes step after step, so they reuse blocks already faulted in.
//   Aligning blocks inside glibc's heap instead made it map fresh memory
//   for each (add of 1M elements 1.8x slower).
// - From 128 KiB (glibc's first mmap threshold): glibc mapped a 1 MiB
//   storage afresh and faulted in its 256 pages on each of the first 15
//   mm of 512 x 512 floats in a process, even with each output released
//   before the next call (posix_memalign's request is larger than the chunk
//   freed, so the heap grew instead), and the calls after that ran 20%
//   slower for 30 more: 5.4 instead of 2.6 ms a call (Zen 5 VM, where a
//   page fault costs about 16 us). From the cache only the first call
//   faults.
// Smaller storages come from glibc, which reuses its heap for them. No
// value depends on any of this: a storage's bytes are uninitialized either
// way (empty() fills them when the determinism settings ask for it). Under
// AddressSanitizer every storage comes from malloc, so that overflows and
// uses after free stay detectable. empty_cache() unmaps the cached blocks,
// and so does a storage whose new mapping the system refuses, before it
// tries once more and only then reports out of memory.
constexpr size_t kHugePage = size_t(2) << 20;
// Storages from this size on are blocks of the cache.
constexpr size_t kSmallestBlock = size_t(128) << 10;
// Offsets of storages from their boundary: 32 colors, 17 cache lines apart
// (modulo a page for blocks under 2 MiB).
constexpr size_t kColorBytes = 17 * 64;
constexpr size_t kColors = 32;
#if defined(__linux__) && defined(MADV_HUGEPAGE) && \
    !defined(__SANITIZE_ADDRESS__)
#define DITTO_LARGE_BLOCKS 1
#else
#define DITTO_LARGE_BLOCKS 0
#endif

#if DITTO_LARGE_BLOCKS
size_t page_bytes() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}

// Whole pages of the system (4 KiB on x86-64, up to 64 KiB on aarch64).
size_t round_to_pages(size_t bytes) {
  const size_t page = page_bytes();
  return (bytes + page - 1) / page * page;
}

// What a block of `bytes` is aligned to: 2 MiB from kHugePage on, a page
// below.
size_t boundary(size_t bytes) {
  return bytes >= kHugePage ? kHugePage : page_bytes();
}

class BlockCache {
 public:
  // A block of `bytes` (a multiple of the page size, at least
  // kSmallestBlock), at its color's offset from its boundary; nullptr if the
  // system has no memory for it.
  void* take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The most recently released first: its lines may still be cached.
      auto it = by_size_.find(bytes);
      if (it != by_size_.end()) {
        const uint64_t age = it->second.back();
        it->second.pop_back();
        if (it->second.empty()) {
          by_size_.erase(it);
        }
        auto block = by_age_.find(age);
        void* p = block->second.data;
        by_age_.erase(block);
        cached_ -= bytes;
        return p;
      }
    }
    void* p = map_block(bytes);
    if (p == nullptr && cached() != 0) {
      // The system refused a new mapping while released blocks are held:
      // they go back to it, and the mapping is tried once more before the
      // storage reports out of memory.
      clear();
      p = map_block(bytes);
    }
    return p;
  }

  void give(void* p, size_t bytes) {
    std::vector<Block> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (bytes > limit_) {
        release.push_back({p, bytes});
      } else if (!index_locked(p, bytes)) {
        // No memory for the bookkeeping (a storage's destructor must not
        // throw): the block goes back to the system instead.
        release.push_back({p, bytes});
      } else {
        cached_ += bytes;
        release = over_limit_locked();
      }
    }
    unmap(release);
  }

  void set_limit(size_t bytes) {
    std::vector<Block> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      limit_ = bytes;
      release = over_limit_locked();
    }
    unmap(release);
  }

  size_t limit() {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }

  size_t cached() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }

  void clear() {
    std::vector<Block> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [age, block] : by_age_) {
        release.push_back(block);
      }
      by_age_.clear();
      by_size_.clear();
      cached_ = 0;
    }
    unmap(release);
  }

 private:
  struct Block {
    void* data;
    size_t bytes;
  };

  // Records a released block as the newest; false, and nothing recorded,
  // when the index cannot grow.
  bool index_locked(void* p, size_t bytes) {
    const uint64_t age = next_age_;
    try {
      std::deque<uint64_t>& ages = by_size_[bytes];
      try {
        ages.push_back(age);
        by_age_.emplace(age, Block{p, bytes});
      } catch (const std::bad_alloc&) {
        if (!ages.empty() && ages.back() == age) {
          ages.pop_back();
        }
        if (ages.empty()) {
          by_size_.erase(bytes);
        }
        return false;
      }
    } catch (const std::bad_alloc&) {
      return false;
    }
    ++next_age_;
    return true;
  }

  // The oldest blocks, removed until what is left fits the limit.
  std::vector<Block> over_limit_locked() {
    std::vector<Block> out;
    while (cached_ > limit_) {
      auto oldest = by_age_.begin();
      const Block b = oldest->second;
      // The oldest block of its size is the first of its list.
      auto same = by_size_.find(b.bytes);
      same->second.pop_front();
      if (same->second.empty()) {
        by_size_.erase(same);
      }
      by_age_.erase(oldest);
      out.push_back(b);
      cached_ -= b.bytes;
    }
    return out;
  }

  // A storage starts `offset` bytes into its mapping (see the Note): the
  // mapping is the offset plus the bytes, rounded up to whole pages.
  static size_t mapped_bytes(size_t offset, size_t bytes) {
    return round_to_pages(offset + bytes);
  }

  // The color's offset from the block's boundary.
  size_t next_offset(size_t bytes) {
    const size_t color =
        next_color_.fetch_add(1, std::memory_order_relaxed) % kColors;
    return (kColorBytes * color) % boundary(bytes);
  }

  // Blocks of 2 MiB and more: maps 2 MiB more than needed and unmaps the
  // unaligned head and the tail. Smaller ones: the pages they need.
  void* map_block(size_t bytes) {
    const size_t offset = next_offset(bytes);
    const size_t len = mapped_bytes(offset, bytes);
    const size_t align = boundary(bytes);
    const size_t span = align > page_bytes() ? len + align : len;
    void* raw = mmap(
        nullptr,
        span,
        PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS,
        -1,
        0);
    if (raw == MAP_FAILED) {
      return nullptr;
    }
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + align - 1) & ~(align - 1);
    const size_t head = aligned - start;
    if (head != 0) {
      munmap(raw, head);
    }
    const size_t tail = span - head - len;
    if (tail != 0) {
      munmap(reinterpret_cast<void*>(aligned + len), tail);
    }
    if (align == kHugePage) {
      madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
    }
    return reinterpret_cast<void*>(aligned + offset);
  }

  static void unmap(const std::vector<Block>& blocks) {
    for (const Block& b : blocks) {
      const uintptr_t data = reinterpret_cast<uintptr_t>(b.data);
      const uintptr_t base = data & ~(boundary(b.bytes) - 1);
      munmap(reinterpret_cast<void*>(base), mapped_bytes(data - base, b.bytes));
    }
  }

  std::mutex mu_;
  // Cached blocks by the order they were released (oldest first), and the
  // ages of the blocks of each size (most recent last).
  std::map<uint64_t, Block> by_age_;
  std::unordered_map<size_t, std::deque<uint64_t>> by_size_;
  uint64_t next_age_ = 0;
  size_t cached_ = 0;
  size_t limit_ = size_t(1) << 30;
  std::atomic<uint64_t> next_color_{0};
};

// Never destroyed: storages released during static destruction still find
// it.
BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache;
  return *cache;
}
#endif

// The bytes a large block maps for a storage of `rounded` bytes, or 0 for a
// storage that comes from malloc.
size_t large_block_bytes(size_t rounded) {
#if DITTO_LARGE_BLOCKS
  if (rounded >= kSmallestBlock) {
    return round_to_pages(rounded);
  }
#endif
  (void)rounded;
  return 0;
}

} // namespace

Storage::Storage(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device) {
  // Round up to whole alignment units; never size 0.
  DITTO_CHECK(
      nbytes <= size_t(PTRDIFF_MAX) - kStorageAlignment,
      ValueError,
      "empty",
      nbytes,
      " bytes do not fit in memory");
  DITTO_CHECK(
      !device.is_cuda(),
      DeviceError,
      "empty",
      "ditto has no CUDA backend (torch::cuda::is_available() is false): use "
      "the CPU or a Vulkan device");
  if (!device.is_cpu()) {
    // A device's memory: an opaque handle from the device module.
    const detail::DeviceHooks& hooks = detail::device_hooks(device.type);
    DITTO_CHECK(
        hooks.allocate != nullptr,
        DeviceError,
        "empty",
        "this build of ditto has no ",
        device.type,
        " device (built without the Vulkan headers or glslc)");
    device_ = Device(device.type, int16_t(device.resolved_index()));
    data_ = hooks.allocate(device.resolved_index(), nbytes);
    owned_ = false;
    deleter_ = hooks.release;
    return;
  }
  size_t rounded =
      (nbytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  if (rounded == 0) {
    rounded = kStorageAlignment;
  }
  block_bytes_ = large_block_bytes(rounded);
#if DITTO_LARGE_BLOCKS
  if (block_bytes_ != 0) {
    data_ = block_cache().take(block_bytes_);
  }
#endif
  if (block_bytes_ == 0 &&
      posix_memalign(&data_, kStorageAlignment, rounded) != 0) {
    data_ = nullptr;
  }
  if (data_ == nullptr) {
    throw OutOfMemoryError(
        detail::str_cat("[empty] out of memory allocating ", nbytes, " bytes"));
  }
}

Storage::Storage(
    void* data,
    size_t nbytes,
    std::function<void(void*)> deleter,
    Device device)
    : data_(data),
      nbytes_(nbytes),
      device_(device),
      owned_(false),
      deleter_(std::move(deleter)) {}

void Storage::grow(size_t nbytes) {
  if (nbytes <= nbytes_) {
    return;
  }
  DITTO_CHECK(
      device_.is_cpu(),
      NotImplementedError,
      "resize_",
      "growing a tensor on ",
      device_,
      " is not supported yet");
  DITTO_CHECK(
      owned_,
      ValueError,
      "resize_",
      "cannot resize a tensor whose memory is borrowed (from_blob)");
  DITTO_CHECK(
      !address_shared(),
      ValueError,
      "resize_",
      "cannot resize a tensor whose memory is shared by address (numpy(), "
      "__dlpack__): the holder would be left with freed memory");
  if (nbytes <= nbytes_) {
    return;
  }
  Storage bigger(nbytes, device_);
  std::memcpy(bigger.data_, data_, nbytes_);
  std::swap(data_, bigger.data_);
  std::swap(nbytes_, bigger.nbytes_);
  std::swap(block_bytes_, bigger.block_bytes_);
}

Storage::~Storage() {
  if (owned_) {
#if DITTO_LARGE_BLOCKS
    if (block_bytes_ != 0) {
      block_cache().give(data_, block_bytes_);
      return;
    }
#endif
    std::free(data_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

void empty_cache() {
#if DITTO_LARGE_BLOCKS
  block_cache().clear();
#endif
}

void set_storage_cache_limit(size_t bytes) {
#if DITTO_LARGE_BLOCKS
  block_cache().set_limit(bytes);
#else
  (void)bytes;
#endif
}

size_t storage_cache_limit() {
#if DITTO_LARGE_BLOCKS
  return block_cache().limit();
#else
  return 0;
#endif
}

bool storage_cache_available() {
  return DITTO_LARGE_BLOCKS != 0;
}

size_t storage_cache_bytes() {
#if DITTO_LARGE_BLOCKS
  return block_cache().cached();
#else
  return 0;
#endif
}

} // namespace ditto
