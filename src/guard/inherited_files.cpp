// Which files are the parent's, in forked and spawned children (see inherited_files.h).
#include "guard/inherited_files.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace lg::guard::detail {
namespace {

// Set in the child only. The handler runs between fork() and its return in the child, where
// only async-signal-safe work is allowed: one atomic store.
std::atomic<bool> g_forked_child{false};

void note_child() { g_forked_child.store(true, std::memory_order_relaxed); }

// A spawned child's parent and its files: published once and never freed, so that readers
// (the events writer, at every line) need no lock. A second note leaks the first, a few paths.
struct SpawnedChild {
  pid_t parent = 0;
  std::vector<std::string> paths;
};
std::atomic<const SpawnedChild*> g_spawned{nullptr};

}  // namespace

void watch_forks() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &note_child); });
}

bool in_forked_child() { return g_forked_child.load(std::memory_order_relaxed); }

void note_spawned_child(pid_t parent, std::vector<std::string> paths) {
  // A forkserver's children are forked, from a server that may have loaded the guard.
  g_forked_child.store(false, std::memory_order_relaxed);
  watch_forks();  // its own forked children write none of its files, nor its parent's
  g_spawned.store(new SpawnedChild{parent, std::move(paths)}, std::memory_order_release);
}

pid_t spawning_parent() {
  const SpawnedChild* s = g_spawned.load(std::memory_order_acquire);
  return s ? s->parent : 0;
}

bool parents_file(const std::string& path) {
  if (in_forked_child()) return true;
  const SpawnedChild* s = g_spawned.load(std::memory_order_acquire);
  return s && std::find(s->paths.begin(), s->paths.end(), path) != s->paths.end();
}

}  // namespace lg::guard::detail
