#define XXH_INLINE_ALL
#include <xxhash.h>

#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ditto/core/fingerprint_chunks.h"
#include "ditto/core/parallel.h"
#include "ditto/core/tensor.h"

namespace ditto {
namespace {

static_assert(
    std::endian::native == std::endian::little,
    "fingerprint encodes little-endian integers");

// Feeds values with every NaN replaced by the canonical quiet NaN (positive,
// payload zero): NaN payloads and signs differ between compilers and CPUs.
template <typename T>
void update_values(XXH3_state_t* st, const T* p, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr int64_t kBlock = 4096;
    T buf[kBlock];
    const T qnan = std::numeric_limits<T>::quiet_NaN();
    for (int64_t b = 0; b < n; b += kBlock) {
      int64_t m = std::min(kBlock, n - b);
      // Most blocks hold no NaN: hashed in place, after a read-only check
      // (the same bytes as the copy would be). On the bits, so that it
      // vectorizes: |x| above infinity's pattern is a NaN, which makes
      // inf - |x| negative.
      using U = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
      constexpr U kAbs = std::numeric_limits<U>::max();
      constexpr U kInf = std::bit_cast<U>(std::numeric_limits<T>::infinity());
      U any = 0;
      for (int64_t i = 0; i < m; ++i) {
        any |= kInf - (std::bit_cast<U>(p[b + i]) & kAbs);
      }
      if (any >= 0) {
        XXH3_64bits_update(st, p + b, size_t(m) * sizeof(T));
        continue;
      }
      for (int64_t i = 0; i < m; ++i) {
        T v = p[b + i];
        buf[i] = v != v ? qnan : v;
      }
      XXH3_64bits_update(st, buf, size_t(m) * sizeof(T));
    }
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    constexpr uint16_t kInf = std::is_same_v<T, Half> ? 0x7C00 : 0x7F80;
    constexpr uint16_t kQnan = std::is_same_v<T, Half> ? 0x7E00 : 0x7FC0;
    constexpr int64_t kBlock = 4096;
    uint16_t buf[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      int64_t m = std::min(kBlock, n - b);
      for (int64_t i = 0; i < m; ++i) {
        const uint16_t x = p[b + i].x;
        buf[i] = (x & 0x7FFF) > kInf ? kQnan : x;
      }
      XXH3_64bits_update(st, buf, size_t(m) * sizeof(uint16_t));
    }
  } else {
    XXH3_64bits_update(st, p, size_t(n) * sizeof(T));
  }
}

} // namespace

namespace {
// A sparse tensor's: its dtype, sizes and the fingerprints of its indices
// and values as stored (docs/fingerprint.md): two runs that store the same
// entries in another order differ, as their sums may.
uint64_t sparse_fingerprint(const Tensor& t) {
  std::vector<uint64_t> words{0x5350415253450000u, uint64_t(t.dtype())};
  for (int64_t s : t.sizes()) {
    words.push_back(uint64_t(s));
  }
  words.push_back(fingerprint(t._indices()));
  words.push_back(fingerprint(t.impl()->sparse()->values));
  return XXH3_64bits(words.data(), words.size() * sizeof(uint64_t));
}
} // namespace

uint64_t fingerprint(const Tensor& t) {
  DITTO_CHECK(t.defined(), ValueError, "fingerprint", "undefined tensor");
  if (t.impl()->is_sparse()) {
    return sparse_fingerprint(t);
  }
  XXH3_state_t* st = XXH3_createState();
  DITTO_CHECK(st != nullptr, Error, "fingerprint", "out of memory");
  XXH3_64bits_reset(st);
  uint8_t code = uint8_t(t.dtype());
  XXH3_64bits_update(st, &code, 1);
  int64_t nd = t.dim();
  XXH3_64bits_update(st, &nd, sizeof(nd));
  for (int64_t s : t.sizes()) {
    XXH3_64bits_update(st, &s, sizeof(s));
  }
  Tensor c = (t.is_cpu() ? t : t.cpu()).contiguous();
  dispatch_any_dtype(c.dtype(), "fingerprint", [&]<typename T>() {
    update_values(st, static_cast<const T*>(c.raw_data()), c.numel());
  });
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

namespace detail {

uint64_t chunked_fingerprint(const Tensor& t) {
  DITTO_CHECK(t.defined(), ValueError, "fingerprint", "undefined tensor");
  if (t.impl()->is_sparse()) {
    return sparse_fingerprint(t);
  }
  Tensor c = (t.is_cpu() ? t : t.cpu()).contiguous();
  const int64_t n = c.numel();
  const int64_t chunks =
      std::max<int64_t>(1, (n + kFingerprintChunk - 1) / kFingerprintChunk);
  std::vector<uint64_t> hashes(size_t(chunks) + 2 + size_t(c.dim()));
  dispatch_any_dtype(c.dtype(), "fingerprint", [&]<typename T>() {
    const T* p = static_cast<const T*>(c.raw_data());
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        XXH3_state_t st;
        XXH3_64bits_reset(&st);
        const int64_t at = k * kFingerprintChunk;
        update_values(&st, p + at, std::min(kFingerprintChunk, n - at));
        hashes[size_t(k)] = XXH3_64bits_digest(&st);
      }
    });
  });
  // Then the dtype code and the shape, and one hash over all of it.
  size_t at = size_t(chunks);
  hashes[at++] = uint64_t(c.dtype());
  hashes[at++] = uint64_t(c.dim());
  for (int64_t s : c.sizes()) {
    hashes[at++] = uint64_t(s);
  }
  return XXH3_64bits(hashes.data(), hashes.size() * sizeof(uint64_t));
}

} // namespace detail
} // namespace ditto
