#include "ditto/core/deferred.h"

#include <mutex>
#include <utility>
#include <vector>

namespace ditto::detail {

std::atomic<int> g_deferred_pending{0};

namespace {

struct Entry {
  uint64_t ticket;
  std::function<void()> fn;
};

std::mutex& queue_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Entry>& queue() {
  static std::vector<Entry> q;
  return q;
}
uint64_t g_next_ticket = 1;

} // namespace

uint64_t defer_init(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(queue_mutex());
  const uint64_t t = g_next_ticket++;
  queue().push_back({t, std::move(fn)});
  g_deferred_pending.store(int(queue().size()), std::memory_order_release);
  return t;
}

std::function<void()> take_deferred(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(queue_mutex());
  auto& q = queue();
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it->ticket == ticket) {
      std::function<void()> fn = std::move(it->fn);
      q.erase(it);
      g_deferred_pending.store(int(q.size()), std::memory_order_release);
      return fn;
    }
  }
  return {};
}

void run_deferred_slow() {
  // Take the whole queue first: the work itself runs ops, which must not
  // find it again.
  std::vector<Entry> work;
  {
    std::lock_guard<std::mutex> lock(queue_mutex());
    work.swap(queue());
    g_deferred_pending.store(0, std::memory_order_release);
  }
  for (Entry& e : work) {
    e.fn();
  }
}

} // namespace ditto::detail
