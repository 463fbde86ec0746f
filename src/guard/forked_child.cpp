// Forked children write none of the parent's files (see forked_child.h).
#include "guard/forked_child.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace lg::guard::detail {
namespace {

// Set in the child only. The handler runs between fork() and its return in the child, where
// only async-signal-safe work is allowed: one atomic store.
std::atomic<bool> g_forked_child{false};

void note_child() { g_forked_child.store(true, std::memory_order_relaxed); }

}  // namespace

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &note_child); });
}

bool in_forked_child() { return g_forked_child.load(std::memory_order_relaxed); }

}  // namespace lg::guard::detail
