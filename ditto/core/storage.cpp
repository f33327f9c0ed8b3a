#include "ditto/core/storage.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ditto/core/error.h"

namespace ditto {

namespace {

// Note [Huge pages for large storages]
// An op that writes a fresh large output spends most of its time in page
// faults: float add of 16M elements took 37 ms, most of it faulting in the
// 64 MB output 4 KiB at a time. glibc serves blocks of 32 MiB and more
// (its largest mmap threshold) with fresh pages from mmap on every
// allocation, so those storages are aligned to 2 MiB and advised
// MADV_HUGEPAGE: Linux, with transparent huge pages "always" or "madvise",
// then faults them in 2 MiB at a time (a first write of 64 MB: 7 ms instead
// of 28 ms; the add: 10 ms). Smaller blocks are left alone: glibc reuses
// its heap for them, already faulted in, and a 2 MiB alignment there made
// it map fresh memory for each (add of 1M elements 1.8x slower). Only
// 2 MiB ranges the storage covers whole become huge pages, so the memory
// used does not grow. The advice changes no value; where it is refused,
// nothing changes.
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugePageMinBytes = size_t(32) << 20;

void* allocate_aligned(size_t rounded) {
  const size_t alignment =
      rounded >= kHugePageMinBytes ? kHugePage : kStorageAlignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, rounded) != 0) {
    return nullptr;
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (alignment == kHugePage) {
    madvise(p, rounded / kHugePage * kHugePage, MADV_HUGEPAGE);
  }
#endif
  return p;
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
  size_t rounded =
      (nbytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  if (rounded == 0) {
    rounded = kStorageAlignment;
  }
  data_ = allocate_aligned(rounded);
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
  DITTO_CHECK(
      owned_,
      ValueError,
      "resize_",
      "cannot resize a tensor whose memory is borrowed (from_blob)");
  if (nbytes <= nbytes_) {
    return;
  }
  Storage bigger(nbytes, device_);
  std::memcpy(bigger.data_, data_, nbytes_);
  std::swap(data_, bigger.data_);
  std::swap(nbytes_, bigger.nbytes_);
}

Storage::~Storage() {
  if (owned_) {
    std::free(data_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

} // namespace ditto
