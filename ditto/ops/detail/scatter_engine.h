#pragma once

// Internal: the one mechanism behind every accumulating or overwriting op of
// the scatter/index family (index_add_, index_copy_, scatter_*, index_put_,
// put_, bincount, embedding_bag). See Note [Owner computes].

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ditto/core/parallel.h"
#include "ditto/core/spin.h"
#include "ditto/determinism/context.h"

namespace ditto::detail {

// How an update combines a source value s into a destination value d, with
// PyTorch's CPU semantics: amax/amin propagate NaN from either side.
enum class Combine { kAssign, kAdd, kMul, kMax, kMin };

template <Combine C, typename T>
inline T combine(T d, T s) {
  if constexpr (C == Combine::kAssign) {
    return s;
  } else if constexpr (C == Combine::kAdd) {
    return T(d + s);
  } else if constexpr (C == Combine::kMul) {
    return T(d * s);
  } else if constexpr (C == Combine::kMax) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(s) ? s : std::max(d, s);
    } else {
      return std::max(d, s);
    }
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(s) ? s : std::min(d, s);
    } else {
      return std::min(d, s);
    }
  }
}

// The same combine as one atomic read-modify-write of *d.
template <Combine C, typename T>
inline void combine_atomic(T* d, T s) {
  std::atomic_ref<T> a(*d);
  if constexpr (C == Combine::kAssign) {
    a.store(s, std::memory_order_relaxed);
  } else if constexpr (
      C == Combine::kAdd && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    a.fetch_add(s, std::memory_order_relaxed);
  } else {
    T cur = a.load(std::memory_order_relaxed);
    while (!a.compare_exchange_weak(
        cur, combine<C>(cur, s), std::memory_order_relaxed)) {
    }
  }
}

// True when the fast variant of C on T gives the same bits whatever the
// order of the updates: integer sums, products and extrema. Such ops never
// alert and need no deterministic variant.
template <Combine C, typename T>
constexpr bool order_independent() {
  return C != Combine::kAssign && std::is_integral_v<T>;
}

// Whether C on T runs its deterministic variant: when the mode is on,
// unless the fast one gives the same bits anyway.
template <Combine C, typename T>
bool use_deterministic() {
  return are_deterministic_algorithms_enabled() && !order_independent<C, T>();
}

// Calls fn.template operator()<C>() with C = kAdd when accumulating, else
// kAssign (index_put_ and put_).
template <class Fn>
void with_accumulate(bool accumulate, const Fn& fn) {
  if (accumulate) {
    fn.template operator()<Combine::kAdd>();
  } else {
    fn.template operator()<Combine::kAssign>();
  }
}

// Destination keys per task of the owner-computes variant: about one
// reduction chunk (16384 elements) of destination per task.
inline int64_t keys_per_task(int64_t row_len) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(row_len, 1));
}

// Note [Owner computes]
// An update i touches the destination elements of one key (a destination
// row, bin, bag or element); updates of different keys touch disjoint
// elements. The deterministic variant cuts the key range into fixed blocks
// (keys_per_task(row_len) keys each, from the shapes only), sorts the update
// ids by block with a stable counting sort, and runs the blocks in
// parallel, each applying its updates in index order. Every destination
// element therefore sees its updates in the order of the serial loop, and
// the result has the serial loop's bits for any thread count. Heavy
// duplicates serialize on their block: that is the price of the serial
// order, which the fast variant does not keep.
// No prefetch: the default of owner_computes() and scatter_updates().
struct NoPrefetch {
  void operator()(int64_t) const {}
};

// Updates ahead of the current one whose source the owner-computes loop
// prefetches: in index order within a block, sources are far apart.
inline constexpr int64_t kPrefetchDistance = 12;

template <class KeyFn, class ApplyFn, class PrefetchFn = NoPrefetch>
void owner_computes(
    int64_t n,
    int64_t keys,
    int64_t row_len,
    const KeyFn& key,
    const ApplyFn& apply,
    const PrefetchFn& prefetch = {}) {
  if (n == 0) {
    return;
  }
  const int64_t per = keys_per_task(row_len);
  const int64_t blocks = (keys + per - 1) / per;
  if (blocks <= 1) {
    for (int64_t i = 0; i < n; ++i) {
      apply(i);
    }
    return;
  }
  std::vector<int64_t> start(static_cast<size_t>(blocks + 1), 0);
  for (int64_t i = 0; i < n; ++i) {
    ++start[static_cast<size_t>(key(i) / per + 1)];
  }
  for (size_t b = 1; b < start.size(); ++b) {
    start[b] += start[b - 1];
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    order[static_cast<size_t>(next[static_cast<size_t>(key(i) / per)]++)] = i;
  }
  parallel_chunks(blocks, [&](int64_t blk) {
    const auto b = static_cast<size_t>(blk);
    const int64_t end = start[b + 1];
    for (int64_t k = start[b]; k < end; ++k) {
      if (k + kPrefetchDistance < end) {
        prefetch(order[static_cast<size_t>(k + kPrefetchDistance)]);
      }
      apply(order[static_cast<size_t>(k)]);
    }
  });
}

// A spin lock per stripe of keys, for the fast variant's rows.
class KeyLocks {
 public:
  static constexpr int64_t kStripes = 1024;
  void acquire(int64_t key) {
    std::atomic<bool>& f = stripe(key);
    while (f.exchange(true, std::memory_order_acquire)) {
      while (f.load(std::memory_order_relaxed)) {
        detail::cpu_relax();
      }
    }
  }
  void release(int64_t key) {
    stripe(key).store(false, std::memory_order_release);
  }

 private:
  struct alignas(64) Flag {
    std::atomic<bool> f{false};
  };
  std::atomic<bool>& stripe(int64_t key) {
    return flags_[static_cast<size_t>(key % kStripes)].f;
  }
  std::array<Flag, kStripes> flags_{};
};

// Rows shorter than this are updated element by element with atomics in
// the fast variant; longer ones under their key's lock.
inline constexpr int64_t kLockedRowLen = 8;

// The fast variant: updates in fixed chunks on the pool, combined into
// shared destinations in whatever order threads reach them (the final bits
// depend on timing unless the combine is order independent).
// apply(i, atomic) applies update i, element by element with
// combine_atomic when atomic is true, plainly otherwise (the caller holds
// the key's lock).
template <class KeyFn, class ApplyFn>
void racing(
    int64_t n,
    int64_t row_len,
    const KeyFn& key,
    const ApplyFn& apply) {
  const int64_t grain = keys_per_task(row_len);
  if (row_len < kLockedRowLen) {
    parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        apply(i, true);
      }
    });
    return;
  }
  auto locks = std::make_unique<KeyLocks>();
  parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t k = key(i);
      locks->acquire(k);
      apply(i, false);
      locks->release(k);
    }
  });
}

// The variant chooser: owner computes when deterministic, racing otherwise.
template <class KeyFn, class ApplyFn, class PrefetchFn = NoPrefetch>
void scatter_updates(
    bool deterministic,
    int64_t n,
    int64_t keys,
    int64_t row_len,
    const KeyFn& key,
    const ApplyFn& apply,
    const PrefetchFn& prefetch = {}) {
  if (deterministic) {
    owner_computes(
        n, keys, row_len, key, [&](int64_t i) { apply(i, false); }, prefetch);
  } else {
    racing(n, row_len, key, apply);
  }
}

// Note [Plane scatters]
// The backward of pooling, interpolation and grid sampling adds every
// element of the output gradient into input-gradient elements of the same
// plane (one of N x C). The deterministic variant gives threads whole
// planes, each running the serial loop over its output positions: every
// element sees its additions in the serial order, so the result has the
// serial loop's bits for any thread count. With at least as many planes as
// threads that split is also the fastest, and the fast variant is the same
// loop. With fewer planes than threads (one image of few channels), the
// fast variant cuts each plane's output positions into chunks that run in
// parallel and add into the plane with atomic adds, in whatever order the
// threads get there.
//
// body(p, k0, k1, add) runs output positions [k0, k1) of plane p, calling
// add(i, v) to add v to element i of the plane's input gradient.
// work_per_position sizes the chunks (reads per output position).
// What plane_scatter's body adds with: add(i, v) adds v to element i of the
// plane's input gradient; add.fma(i, a, b) sets it to fma(a, b, element):
// one rounding, as PyTorch's kernels built for AVX2 (where the compiler
// contracts `grad_in[i] += a * b`) do.
template <typename T, bool kAtomic>
struct PlaneAdder {
  static constexpr bool kAtomicAdds = kAtomic;
  T* d;
  void operator()(int64_t i, T v) const {
    if constexpr (kAtomic) {
      combine_atomic<Combine::kAdd>(d + i, v);
    } else {
      d[i] += v;
    }
  }
  void fma(int64_t i, T a, T b) const {
    if constexpr (kAtomic) {
      std::atomic_ref<T> r(d[i]);
      T cur = r.load(std::memory_order_relaxed);
      while (!r.compare_exchange_weak(
          cur, std::fma(a, b, cur), std::memory_order_relaxed)) {
      }
    } else {
      d[i] = std::fma(a, b, d[i]);
    }
  }
};

template <typename T, class Body>
void plane_scatter(
    bool deterministic,
    int64_t planes,
    int64_t positions,
    int64_t work_per_position,
    T* grad_in,
    int64_t plane_size,
    const Body& body) {
  const int64_t work = std::max<int64_t>(1, work_per_position);
  const int64_t chunk = std::max<int64_t>(1, 16384 / work);
  if (deterministic || planes >= get_num_threads() || positions <= chunk) {
    const int64_t grain =
        std::max<int64_t>(1, 16384 / std::max<int64_t>(1, positions * work));
    parallel_for(0, planes, grain, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        body(p, 0, positions, PlaneAdder<T, false>{grad_in + p * plane_size});
      }
    });
    return;
  }
  const int64_t chunks = (positions + chunk - 1) / chunk;
  parallel_for(0, planes * chunks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t p = t / chunks, c = t % chunks;
      body(
          p,
          c * chunk,
          std::min(positions, (c + 1) * chunk),
          PlaneAdder<T, true>{grad_in + p * plane_size});
    }
  });
}

// Prefetches the len elements at p for reading.
template <typename T>
inline void prefetch_row(const T* p, int64_t len) {
  const char* c = reinterpret_cast<const char*>(p);
  const int64_t bytes = len * int64_t(sizeof(T));
  for (int64_t o = 0; o < bytes; o += 64) {
    __builtin_prefetch(c + o);
  }
}

// Applies combine C of len source values s[src_rest[c]] into
// d[dst_rest[c]] (rest arrays null: contiguous), atomically or not.
template <Combine C, typename T>
inline void combine_row(
    T* d,
    const T* s,
    int64_t len,
    const int64_t* dst_rest,
    const int64_t* src_rest,
    bool atomic) {
  if (!dst_rest && !src_rest && !atomic) {
    for (int64_t c = 0; c < len; ++c) {
      d[c] = combine<C>(d[c], s[c]);
    }
    return;
  }
  for (int64_t c = 0; c < len; ++c) {
    T* to = d + (dst_rest ? dst_rest[c] : c);
    const T v = s[src_rest ? src_rest[c] : c];
    if (atomic) {
      combine_atomic<C>(to, v);
    } else {
      *to = combine<C>(*to, v);
    }
  }
}

} // namespace ditto::detail
