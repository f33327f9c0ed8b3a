// Large storages: huge-page blocks and the block cache (Note [Large
// storages: huge pages and a block cache] in ditto/core/storage.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ditto/ditto.h"

#ifdef __linux__
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

using namespace ditto;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

// Restores the cache limit and empties the cache around each test, so the
// tests do not see each other's blocks.
class StorageCache : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_limit_ = storage_cache_limit();
    empty_cache();
  }
  void TearDown() override {
    set_storage_cache_limit(saved_limit_);
    empty_cache();
  }
  size_t saved_limit_ = 0;
};

uintptr_t address(const Storage& s) {
  return reinterpret_cast<uintptr_t>(s.data());
}

} // namespace

TEST_F(StorageCache, AvailableWhereDocumented) {
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(storage_cache_available());
  EXPECT_EQ(storage_cache_limit(), size_t(1) << 30);
#else
  EXPECT_FALSE(storage_cache_available());
  EXPECT_EQ(storage_cache_limit(), 0u);
#endif
}

TEST_F(StorageCache, SameSizeReusesTheReleasedBlock) {
  if (!storage_cache_available()) {
    // Without the cache every large storage is malloc's, released at once.
    { Storage s(4 * kMiB); }
    EXPECT_EQ(storage_cache_bytes(), 0u);
    return;
  }
  uintptr_t first = 0;
  {
    Storage s(4 * kMiB);
    first = address(s);
    EXPECT_EQ(first % kStorageAlignment, 0u);
    std::memset(s.data(), 0x5a, s.nbytes()); // the whole block is writable
    EXPECT_EQ(storage_cache_bytes(), 0u);
  }
  EXPECT_EQ(storage_cache_bytes(), 4 * kMiB);
  {
    Storage other(4 * kMiB + 4096); // another size: a new block
    EXPECT_NE(address(other), first);
    Storage same(4 * kMiB);
    EXPECT_EQ(address(same), first);
    EXPECT_EQ(storage_cache_bytes(), 0u);
  }
  EXPECT_EQ(storage_cache_bytes(), 8 * kMiB + 4096);
  empty_cache();
  EXPECT_EQ(storage_cache_bytes(), 0u);
  // From 128 KiB up a storage is a block (page-aligned below 2 MiB)...
  uintptr_t mid = 0;
  {
    Storage s(kMiB);
    mid = address(s);
    EXPECT_EQ(mid % kStorageAlignment, 0u);
    std::memset(s.data(), 0x5a, s.nbytes());
  }
  EXPECT_EQ(storage_cache_bytes(), kMiB);
  {
    Storage again(kMiB);
    EXPECT_EQ(address(again), mid);
    { Storage least(128 << 10); }
    EXPECT_EQ(storage_cache_bytes(), size_t(128) << 10);
  }
  EXPECT_EQ(storage_cache_bytes(), kMiB + (size_t(128) << 10));
  empty_cache();
  // ... and below it storages come from malloc and are never cached.
  { Storage small((128 << 10) - 64); }
  EXPECT_EQ(storage_cache_bytes(), 0u);
}

TEST_F(StorageCache, TheOldestBlockGoesFirstWhateverItsSize) {
  if (!storage_cache_available()) {
    return;
  }
  set_storage_cache_limit(3 * kMiB);
  { Storage a(kMiB); }
  { Storage b(2 * kMiB); }
  // c reuses a's block, so a's size is now the most recently released.
  { Storage c(kMiB); }
  EXPECT_EQ(storage_cache_bytes(), 3 * kMiB);
  { Storage d(kMiB / 2); }
  // Over the limit: b, the oldest, goes back; the two newer stay.
  EXPECT_EQ(storage_cache_bytes(), kMiB + kMiB / 2);
  // Released, a new block of 2 MiB pushes out the oldest again: c's.
  { Storage e(2 * kMiB); }
  EXPECT_EQ(storage_cache_bytes(), 2 * kMiB + kMiB / 2);
}

TEST_F(StorageCache, NewBlocksStartAtDifferentOffsets) {
  // Two live blocks never share their address bits below 2 MiB (the
  // colors), and both stay 64-byte aligned.
  std::vector<std::unique_ptr<Storage>> live;
  for (int i = 0; i < 8; ++i) {
    live.push_back(std::make_unique<Storage>(3 * kMiB));
  }
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(address(*live[i]) % kStorageAlignment, 0u);
    for (size_t j = 0; j < i; ++j) {
      if (storage_cache_available()) {
        EXPECT_NE(
            address(*live[i]) % (2 * kMiB), address(*live[j]) % (2 * kMiB))
            << i << " and " << j;
      }
    }
  }
  // Blocks under 2 MiB start at different offsets in their page: their
  // addresses differ below 4 KiB, where loads and stores are matched.
  std::vector<std::unique_ptr<Storage>> small;
  for (int i = 0; i < 8; ++i) {
    small.push_back(std::make_unique<Storage>(256 << 10));
  }
  for (size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(address(*small[i]) % kStorageAlignment, 0u);
    for (size_t j = 0; j < i; ++j) {
      if (storage_cache_available()) {
        EXPECT_NE(address(*small[i]) % 4096, address(*small[j]) % 4096)
            << i << " and " << j;
      }
    }
  }
}

TEST_F(StorageCache, TheLimitBoundsWhatIsKept) {
  if (!storage_cache_available()) {
    set_storage_cache_limit(64 * kMiB); // does nothing
    EXPECT_EQ(storage_cache_limit(), 0u);
    return;
  }
  set_storage_cache_limit(10 * kMiB);
  { Storage a(4 * kMiB), b(4 * kMiB), c(4 * kMiB); }
  // Three blocks of 4 MiB do not fit in 10: the oldest went back.
  EXPECT_EQ(storage_cache_bytes(), 8 * kMiB);
  set_storage_cache_limit(5 * kMiB); // lowering it releases at once
  EXPECT_EQ(storage_cache_bytes(), 4 * kMiB);
  { Storage big(6 * kMiB); } // larger than the limit: not kept
  EXPECT_EQ(storage_cache_bytes(), 4 * kMiB);
  set_storage_cache_limit(0); // off
  EXPECT_EQ(storage_cache_bytes(), 0u);
  { Storage d(4 * kMiB); }
  EXPECT_EQ(storage_cache_bytes(), 0u);
}

TEST_F(StorageCache, ReusedMemoryIsStillFilledWhenDeterministic) {
  // A reused block holds the last tensor's values; empty() in the
  // deterministic mode must still fill it.
  const int64_t n = 1 << 20; // 4 MiB of float32
  { Tensor t = ones({n}); }
  use_deterministic_algorithms(true);
  Tensor e = empty({n});
  use_deterministic_algorithms(false);
  const float* p = e.data_ptr<float>();
  EXPECT_TRUE(std::isnan(p[0]));
  EXPECT_TRUE(std::isnan(p[n / 2]));
  EXPECT_TRUE(std::isnan(p[n - 1]));
}

TEST_F(StorageCache, ResizeKeepsTheBytesAcrossBlocks) {
  // 64 KiB (malloc) -> 1 MiB (a page-aligned block) -> 3 MiB (a block on
  // a 2 MiB boundary) -> 5 MiB (another).
  Tensor t = arange(0, 1 << 14, 1, kFloat32);
  t.resize_({1 << 18});
  EXPECT_EQ(t.data_ptr<float>()[(1 << 14) - 1], float((1 << 14) - 1));
  t.narrow(0, 1 << 14, (1 << 18) - (1 << 14)).fill_(5.0);
  t.resize_({3 << 18});
  EXPECT_EQ(t.data_ptr<float>()[(1 << 14) - 1], float((1 << 14) - 1));
  EXPECT_EQ(t.data_ptr<float>()[(1 << 18) - 1], 5.0f);
  t.narrow(0, 1 << 18, 2 << 18).fill_(7.0);
  t.resize_({5 << 18});
  EXPECT_EQ(t.data_ptr<float>()[12345], 12345.0f);
  EXPECT_EQ(t.data_ptr<float>()[(1 << 18) - 1], 5.0f);
  EXPECT_EQ(t.data_ptr<float>()[(3 << 18) - 1], 7.0f);
}

TEST_F(StorageCache, ThreadsTakeAndReleaseConcurrently) {
  // Four threads allocate, write and release blocks of two sizes; every
  // block they hold is theirs alone (the values they wrote are intact).
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad] {
      for (int i = 0; i < 50; ++i) {
        Storage s((2 + size_t(i % 2)) * kMiB);
        auto* w = static_cast<uint32_t*>(s.data());
        const size_t words = s.nbytes() / 4;
        for (size_t k = 0; k < words; k += 1021) {
          w[k] = uint32_t(t * 1000 + i);
        }
        std::this_thread::yield();
        for (size_t k = 0; k < words; k += 1021) {
          bad[size_t(t)] += w[k] != uint32_t(t * 1000 + i);
        }
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(bad[size_t(t)], 0) << "thread " << t;
  }
  EXPECT_LE(storage_cache_bytes(), storage_cache_limit());
}

#ifdef __linux__
namespace {

// Bytes of address space the process maps now (/proc/self/statm's first
// field, in pages).
size_t mapped_now() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%lu", &pages) != 1) {
      pages = 0;
    }
    std::fclose(f);
  }
  return size_t(pages) * size_t(sysconf(_SC_PAGESIZE));
}

// Caps the address space for its lifetime (RLIMIT_AS), then restores it.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(size_t bytes) {
    ok_ = getrlimit(RLIMIT_AS, &saved_) == 0;
    rlimit cap = saved_;
    cap.rlim_cur = rlim_t(bytes);
    ok_ = ok_ && setrlimit(RLIMIT_AS, &cap) == 0;
  }
  ~AddressSpaceCap() {
    setrlimit(RLIMIT_AS, &saved_);
  }
  // False where the cap could not be set or is not enforced (qemu-user
  // accepts RLIMIT_AS and ignores it).
  bool enforced(size_t refused_bytes) const {
    if (!ok_) {
      return false;
    }
    void* p = mmap(
        nullptr,
        refused_bytes,
        PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS,
        -1,
        0);
    if (p == MAP_FAILED) {
      return true;
    }
    munmap(p, refused_bytes);
    return false;
  }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

} // namespace

TEST_F(StorageCache, ARefusedMappingReleasesTheCacheAndTriesAgain) {
  if (!storage_cache_available()) {
    GTEST_SKIP() << "no block cache in this build (AddressSanitizer or not "
                    "Linux): nothing is cached to release";
  }
  // 64 MiB of released blocks in the cache.
  {
    std::vector<std::unique_ptr<Storage>> held;
    for (int i = 0; i < 8; ++i) {
      held.push_back(std::make_unique<Storage>(8 * kMiB));
    }
  }
  ASSERT_EQ(storage_cache_bytes(), 64 * kMiB);
  {
    // Room for 32 MiB more: a 40 MiB storage fits only once the cached
    // blocks are unmapped.
    AddressSpaceCap cap(mapped_now() + 32 * kMiB);
    if (!cap.enforced(40 * kMiB)) {
      GTEST_SKIP() << "RLIMIT_AS is not enforced here (an emulator?)";
    }
    Storage big(40 * kMiB);
    EXPECT_EQ(storage_cache_bytes(), 0u);
    auto* w = static_cast<unsigned char*>(big.data());
    w[0] = 1;
    w[big.nbytes() - 1] = 2;
    EXPECT_EQ(w[0] + w[big.nbytes() - 1], 3);
    // Larger than what is left even then: out of memory, named.
    try {
      Storage huge(512 * kMiB);
      ADD_FAILURE() << "a 512 MiB storage fit under a 32 MiB cap";
    } catch (const OutOfMemoryError& e) {
      EXPECT_NE(std::string(e.what()).find("[empty]"), std::string::npos)
          << e.what();
    }
  }
  // Released under the cap, the 40 MiB block is kept as usual.
  EXPECT_EQ(storage_cache_bytes(), 40 * kMiB);
}
#endif
