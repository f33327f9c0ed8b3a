#include "ditto/core/storage.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ditto/core/error.h"

namespace ditto {

Storage::Storage(size_t nbytes, Device device)
    : nbytes_(nbytes), device_(device) {
  // Round up so aligned_alloc's size requirement holds; never size 0.
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
  data_ = std::aligned_alloc(kStorageAlignment, rounded);
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
