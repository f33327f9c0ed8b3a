#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ditto/ditto.h"

using namespace ditto;

namespace {
class Parallel : public ::testing::Test {
 protected:
  void TearDown() override {
    set_num_threads(saved_);
  }
  int saved_ = get_num_threads();
};
} // namespace

TEST_F(Parallel, ChunkBoundariesDependOnlyOnRangeAndGrain) {
  for (int threads : {1, 2, 3, 8}) {
    set_num_threads(threads);
    EXPECT_EQ(get_num_threads(), threads);
    std::mutex mu;
    std::set<std::pair<int64_t, int64_t>> chunks;
    parallel_for(5, 1005, 64, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(mu);
      chunks.insert({b, e});
    });
    ASSERT_EQ(chunks.size(), 16u) << threads << " threads";
    int64_t expect = 5;
    for (auto [b, e] : chunks) {
      EXPECT_EQ(b, expect);
      EXPECT_EQ(e, std::min<int64_t>(b + 64, 1005));
      expect = e;
    }
    EXPECT_EQ(expect, 1005);
  }
}

TEST_F(Parallel, EveryChunkRunsExactlyOnce) {
  set_num_threads(3);
  std::vector<std::atomic<int>> hits(1000);
  parallel_chunks(1000, [&](int64_t c) { hits[size_t(c)]++; });
  for (auto& h : hits) {
    EXPECT_EQ(h.load(), 1);
  }
}

TEST_F(Parallel, UsesSeveralThreads) {
  set_num_threads(2);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  parallel_chunks(2, [&](int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    // Wait (bounded) for the other chunk, so both threads must take part.
    arrived++;
    for (int i = 0; i < 2000 && arrived.load() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  EXPECT_EQ(ids.size(), 2u);
}

// Note [Chunks keep their thread]: thread t runs range t of the chunks
// first, so consecutive ops over the same tensors find their parts in the
// same core's caches. Chunk 0 waits (at most 5 s) for the worker to start
// on its range, so a late wake-up does not count, and each chunk then takes
// 2 ms: only the last few chunks of a range can go to the other thread, as
// the two finish about together. Taking chunks in turn from one counter
// splits each half about evenly (16 and 16).
TEST_F(Parallel, EachThreadRunsItsOwnRangeFirst) {
  set_num_threads(2);
  const auto caller = std::this_thread::get_id();
  std::vector<std::thread::id> who(64);
  std::atomic<bool> second_started{false};
  parallel_chunks(64, [&](int64_t c) {
    who[size_t(c)] = std::this_thread::get_id();
    if (c >= 32) {
      second_started = true;
    }
    for (int i = 0; c == 0 && i < 5000 && !second_started.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  int caller_first = 0, worker_second = 0;
  for (size_t c = 0; c < 64; ++c) {
    (c < 32 ? caller_first : worker_second) +=
        c < 32 ? who[c] == caller : who[c] != caller;
  }
  EXPECT_GE(caller_first, 24);
  EXPECT_GE(worker_second, 24);
  EXPECT_EQ(who[0], caller);
  EXPECT_NE(who[32], caller);
}

// A thread whose range is done takes chunks from the others' ranges.
TEST_F(Parallel, AThreadWithItsRangeDoneTakesOthersChunks) {
  set_num_threads(2);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> caller_slow{0};
  parallel_chunks(64, [&](int64_t c) {
    if (c >= 32) { // the worker's range is the slow one
      caller_slow += std::this_thread::get_id() == caller;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  EXPECT_GE(caller_slow.load(), 4);
}

TEST_F(Parallel, NestedCallsRunInline) {
  set_num_threads(2);
  std::atomic<int> total{0};
  parallel_chunks(4, [&](int64_t) {
    EXPECT_TRUE(in_parallel_region());
    auto me = std::this_thread::get_id();
    parallel_chunks(8, [&](int64_t) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      total++;
    });
  });
  EXPECT_EQ(total.load(), 32);
  EXPECT_FALSE(in_parallel_region());
}

TEST_F(Parallel, ExceptionOfTheFirstFailingChunkPropagates) {
  for (int threads : {1, 2, 8}) {
    set_num_threads(threads);
    try {
      parallel_chunks(100, [&](int64_t c) {
        if (c == 37 || c == 80) {
          throw std::runtime_error("chunk " + std::to_string(c));
        }
      });
      FAIL();
    } catch (const std::runtime_error& e) {
      // 37 always fails before 80 can be handed out on one thread; with
      // several, the lowest failing chunk is the one reported.
      EXPECT_STREQ(e.what(), "chunk 37");
    }
    // The pool still works afterwards.
    std::atomic<int> n{0};
    parallel_chunks(10, [&](int64_t) { n++; });
    EXPECT_EQ(n.load(), 10);
  }
}

TEST_F(Parallel, BadThreadCountsAreRejected) {
  EXPECT_THROW(set_num_threads(0), ValueError);
  EXPECT_THROW(set_num_threads(-3), ValueError);
  parallel_chunks(
      2, [&](int64_t) { EXPECT_THROW(set_num_threads(4), ValueError); });
}

TEST_F(Parallel, ResizingWhileOtherThreadsComputeIsSafe) {
  Tensor x = arange(0, 300000, 1, kFloat32);
  const uint64_t expected = fingerprint(sum(x));
  std::atomic<bool> stop{false};
  std::vector<uint64_t> seen;
  std::thread worker([&] {
    while (!stop.load()) {
      seen.push_back(fingerprint(sum(x)));
    }
  });
  for (int i = 0; i < 20; ++i) {
    set_num_threads(1 + i % 4);
  }
  stop = true;
  worker.join();
  for (uint64_t s : seen) {
    EXPECT_EQ(s, expected);
  }
}

// The thread pool's teardown and rebuild under load (issue 17: races seen
// by TSan when set_num_threads changes while user threads run ops): three
// user threads run reductions, matrix products and convolutions while the
// main thread resizes the pool 60 times. Every result keeps its bits; the
// TSan build (make tsan) runs this test instrumented.
TEST_F(Parallel, ResizingWhileSeveralUserThreadsRunOpsIsSafe) {
  manual_seed(3);
  const Tensor a = randn({96, 80}), b = randn({80, 72});
  const Tensor img = randn({2, 3, 20, 20}), w = randn({4, 3, 3, 3});
  const Tensor v = arange(0, 200000, 1, kFloat32);
  const uint64_t want_sum = fingerprint(sum(v));
  const uint64_t want_mm = fingerprint(matmul(a, b));
  const uint64_t want_conv = fingerprint(conv2d(img, w));
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, runs{0};
  auto loop = [&](int kind) {
    while (!stop.load()) {
      uint64_t got, want;
      if (kind == 0) {
        got = fingerprint(sum(v));
        want = want_sum;
      } else if (kind == 1) {
        got = fingerprint(matmul(a, b));
        want = want_mm;
      } else {
        got = fingerprint(conv2d(img, w));
        want = want_conv;
      }
      bad += got != want;
      ++runs;
    }
  };
  std::vector<std::thread> users;
  for (int k = 0; k < 3; ++k) {
    users.emplace_back(loop, k);
  }
  // At least 60 resizes, and on until the users have run a few ops while
  // they happen (on a loaded 2-core machine 60 yields could all pass before
  // the users ran more than 2), within 10 s.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int i = 0; i < 60 ||
       (runs.load() <= 12 && std::chrono::steady_clock::now() < deadline);
       ++i) {
    set_num_threads(1 + i % 4);
    std::this_thread::yield();
  }
  stop = true;
  for (auto& t : users) {
    t.join();
  }
  set_num_threads(2);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(runs.load(), 3);
}
