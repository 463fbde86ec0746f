// The forward sites of autograd nodes (see forward_sites.h).
#include "torch/forward_sites.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "dispatch/dispatcher.h"
#include "torch/dispatch_key.h"

namespace lg::torch_bridge {
namespace {

constexpr size_t kMaxChanges = 1 << 16;
constexpr size_t kMaxPaths = 1 << 12;
constexpr size_t kMaxThreads = 256;
constexpr size_t kRecentPaths = 4;

struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// From `first_node` on, the thread's nodes were made under `path` (null: outside every module).
struct Change {
  uint64_t first_node;
  const std::string* path;
};

// One thread's changes, in the order of its node numbers, which only grow. Written by its own
// thread, read by the backward threads that report its nodes' ops.
struct ThreadLog {
  std::mutex mutex;
  std::deque<Change> changes;
  // A program has few distinct paths: each is kept once, and the changes point at it.
  std::unordered_set<std::string, TransparentHash, std::equal_to<>> paths;

  void note(uint64_t next_node, std::string_view path) {
    std::lock_guard lock(mutex);
    const std::string* kept = path.empty() ? nullptr : intern(path);
    if (!changes.empty() && changes.back().path == kept) return;
    // No node was made since the last change (a module that made none, or an exit followed by
    // the next module's entry): it is replaced.
    if (!changes.empty() && changes.back().first_node == next_node) {
      changes.back().path = kept;
      return;
    }
    if (changes.size() >= kMaxChanges) changes.erase(changes.begin(), changes.begin() + kMaxChanges / 2);
    changes.push_back({next_node, kept});
  }

  std::string path_of(uint64_t node) {
    std::lock_guard lock(mutex);
    auto after = std::upper_bound(changes.begin(), changes.end(), node,
                                  [](uint64_t n, const Change& c) { return n < c.first_node; });
    if (after == changes.begin() || std::prev(after)->path == nullptr) return {};
    return *std::prev(after)->path;
  }

 private:
  const std::string* intern(std::string_view path) {
    // A pop returns to a path of the last few changes (the parent's): compared, not hashed.
    size_t looked = 0;
    for (auto it = changes.rbegin(); it != changes.rend() && looked < kRecentPaths; ++it, ++looked)
      if (it->path != nullptr && *it->path == path) return it->path;
    auto it = paths.find(path);
    if (it == paths.end()) {
      if (paths.size() >= kMaxPaths) {  // a program that names modules afresh without end
        changes.clear();
        paths.clear();
      }
      it = paths.emplace(path).first;
    }
    return &*it;
  }
};

struct Logs {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::shared_ptr<ThreadLog>> by_thread;
  std::deque<uint64_t> order;  // oldest first
};

Logs& logs() {
  static auto* l = new Logs();  // never destroyed: backward may run during exit
  return *l;
}

// This thread's log, made at its first change. The thread keeps its own reference: a log
// dropped from the registry (more threads than kept) only stops being found.
ThreadLog& this_thread_log() {
  thread_local std::shared_ptr<ThreadLog> log;
  if (!log) {
    log = std::make_shared<ThreadLog>();
    Logs& l = logs();
    std::lock_guard lock(l.mutex);
    if (l.order.size() >= kMaxThreads) {
      l.by_thread.erase(l.order.front());
      l.order.pop_front();
    }
    const uint64_t thread = at::RecordFunction::currentThreadId();
    l.by_thread[thread] = log;
    l.order.push_back(thread);
  }
  return *log;
}

void note_path(std::string_view path) noexcept {
  try {
    this_thread_log().note(at::sequence_number::peek(), path);
  } catch (...) {
    // Out of memory: the nodes made from here on report no module path.
  }
}

// The module stack's observer: followed on switched-on threads only, so that a thread that
// runs with the bridge off (an Off scope) pays nothing for it.
void on_module_path(std::string_view path) noexcept {
  if (c10::impl::tls_is_dispatch_key_included(kKey)) note_path(path);
}

}  // namespace

void keep_forward_sites() { dispatch::detail::set_module_observer(&on_module_path); }

void note_switch(bool on) { note_path(on ? dispatch::detail::current_module_path() : std::string_view()); }

std::string forward_site(uint64_t forward_thread_id, int64_t sequence_nr) {
  std::shared_ptr<ThreadLog> log;
  {
    Logs& l = logs();
    std::lock_guard lock(l.mutex);
    auto it = l.by_thread.find(forward_thread_id);
    if (it == l.by_thread.end()) return {};
    log = it->second;
  }
  return log->path_of(static_cast<uint64_t>(sequence_nr));
}

}  // namespace lg::torch_bridge
