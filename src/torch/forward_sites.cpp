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
#include <vector>

#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "core/thread_local_ref.h"
#include "dispatch/dispatcher.h"
#include "torch/backward_node.h"
#include "torch/dispatch_key.h"
#include "torch/native_call_site.h"
#include "torch/package_hooks.h"

namespace lg::torch_bridge {
namespace {

constexpr size_t kMaxChanges = 1 << 16;
constexpr size_t kMaxPaths = 1 << 12;
constexpr size_t kMaxThreads = 256;

struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// From `first_node` on, the thread's nodes were made under `path` (null: outside every module).
struct Change {
  uint64_t first_node;
  const std::string* path;
};

// The thread's nodes [first_node, end_node) were made by one user-level call at `site`.
struct Call {
  uint64_t first_node;
  uint64_t end_node;
  const std::string* site;
};

// A program has few distinct paths and call sites: each is kept once, and the records point
// at it.
using Strings = std::unordered_set<std::string, TransparentHash, std::equal_to<>>;

// One thread's changes, in the order of its node numbers, which only grow. Written by its own
// thread, read by the backward threads that report its nodes' ops.
struct ThreadLog {
  std::mutex mutex;
  std::deque<Change> changes;
  Strings paths;
  std::deque<Call> calls;  // option forward_calls, in the order of their nodes
  Strings sites;
  // The kept path of each module on the stack, outermost first, as this log last saw it (a
  // null entry: not seen). A pop returns to its parent's entry, which is compared with the
  // path (the stack's changes are not followed while the thread is off) but not hashed.
  std::vector<const std::string*> stack;

  void note(uint64_t next_node, std::string_view path, size_t depth) {
    std::lock_guard lock(mutex);
    append(next_node, kept_at(path, depth));
  }

  // From `next_node` on, nodes are made under `path`, whatever the module stack says (a node
  // of a graph-building backward pass runs): the stack's entries are left as they are.
  void note_site(uint64_t next_node, std::string_view path) {
    std::lock_guard lock(mutex);
    append(next_node, path.empty() ? nullptr : intern(path));
  }

  std::string path_of(uint64_t node) {
    std::lock_guard lock(mutex);
    auto after = std::upper_bound(changes.begin(), changes.end(), node,
                                  [](uint64_t n, const Change& c) { return n < c.first_node; });
    if (after == changes.begin() || std::prev(after)->path == nullptr) return {};
    return *std::prev(after)->path;
  }

  void note_call(uint64_t first_node, uint64_t end_node, std::string_view site) {
    std::lock_guard lock(mutex);
    // A loop calls from one line again and again: the last site is compared before any hash,
    // and a call that follows the last one from the same site extends its range.
    const bool as_last = !calls.empty() && *calls.back().site == site;
    if (as_last && calls.back().end_node == first_node) {
      calls.back().end_node = end_node;
      return;
    }
    // A program that makes new call sites without end (generated code) starts the record over.
    if (!as_last && sites.size() >= kMaxPaths && sites.find(site) == sites.end()) {
      calls.clear();
      sites.clear();
    }
    const std::string* kept = as_last ? calls.back().site : &*sites.emplace(site).first;
    if (calls.size() >= kMaxChanges) calls.erase(calls.begin(), calls.begin() + kMaxChanges / 2);
    calls.push_back({first_node, end_node, kept});
  }

  std::string site_of(uint64_t node) {
    std::lock_guard lock(mutex);
    auto after = std::upper_bound(calls.begin(), calls.end(), node,
                                  [](uint64_t n, const Call& c) { return n < c.first_node; });
    if (after == calls.begin() || node >= std::prev(after)->end_node) return {};
    return *std::prev(after)->site;
  }

 private:
  void append(uint64_t next_node, const std::string* kept) {
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

  // The kept path of the module at `depth` (1: the outermost; 0: none), `path`: the stack's
  // entry when it holds that path (a pop), else the path kept anew (a push).
  const std::string* kept_at(std::string_view path, size_t depth) {
    if (depth < stack.size()) stack.resize(depth);
    if (depth == 0) return nullptr;
    const std::string* known = depth == stack.size() ? stack.back() : nullptr;
    if (known != nullptr && *known == path) return known;
    const std::string* kept = intern(path);
    stack.resize(depth, nullptr);
    stack.back() = kept;
    return kept;
  }

  const std::string* intern(std::string_view path) {
    auto it = paths.find(path);
    if (it == paths.end()) {
      if (paths.size() >= kMaxPaths) {  // a program that names modules afresh without end
        changes.clear();
        stack.clear();
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

// Set when the thread's log reference is destroyed. Trivially destructible, so still readable
// afterwards: a scope of static storage duration ends after the main thread's thread_locals are
// destroyed, and switching the thread back notes the change.
thread_local bool t_log_gone = false;

struct LogReference {
  std::shared_ptr<ThreadLog> log;
  ~LogReference() { t_log_gone = true; }
};

// This thread's log, made at its first change; none once the thread's thread_locals are
// destroyed. The thread keeps its own reference: a log dropped from the registry (more threads
// than kept) only stops being found.
ThreadLog* this_thread_log() {
  thread_local LogReference t_log;
  if (t_log_gone) [[unlikely]] return nullptr;
  std::shared_ptr<ThreadLog>& log = lg::detail::thread_local_ref(t_log).log;
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
  return log.get();
}

// The graph-building nodes running on this thread, innermost last: the module path of each,
// and the module stack's depth when it started.
struct NodeSite {
  std::string path;
  size_t depth;
};
thread_local std::vector<NodeSite> t_node_sites;

void note_site(std::string_view path) noexcept {
  try {
    if (ThreadLog* log = this_thread_log()) log->note_site(at::sequence_number::peek(), path);
  } catch (...) {
    // Out of memory: the nodes made from here on have the path in force before.
  }
}

void note_path(std::string_view path, size_t depth) noexcept {
  try {
    if (ThreadLog* log = this_thread_log()) log->note(at::sequence_number::peek(), path, depth);
  } catch (...) {
    // Out of memory: the nodes made from here on report no module path.
  }
}

// The module stack's observer: followed on switched-on threads only, so that a thread that
// runs with the bridge off (an Off scope) pays nothing for it. It also tells forward code run
// inside a backward node from the node's own ops (backward_node.h).
void on_module_path(std::string_view path, size_t depth) noexcept {
  if (!c10::impl::tls_is_dispatch_key_included(kKey)) return;
  // Back out of a module called inside a graph-building node: the node's path again.
  const std::vector<NodeSite>& sites = lg::detail::thread_local_ref(t_node_sites);
  if (!sites.empty() && depth <= sites.back().depth)
    note_site(sites.back().path);
  else
    note_path(path, depth);
  note_module_depth(depth);
}

// From here on, nodes get the module stack's path when the thread is on; none when it is off
// (the stack's changes are not followed then).
void note_stack_path(bool on) noexcept {
  if (on)
    note_path(dispatch::detail::current_module_path(), dispatch::detail::current_module_depth());
  else
    note_path({}, 0);
}

}  // namespace

void keep_forward_sites() { dispatch::detail::set_module_observer(&on_module_path); }

void note_switch(bool on) {
  forget_module_depths(dispatch::detail::current_module_depth());
  note_stack_path(on);
}

bool enter_node_site(uint64_t forward_thread_id, int64_t sequence_nr) noexcept {
  try {
    std::vector<NodeSite>& sites = lg::detail::thread_local_ref(t_node_sites);
    sites.push_back({forward_site(forward_thread_id, sequence_nr), dispatch::detail::current_module_depth()});
    note_site(sites.back().path);
    return true;
  } catch (...) {
    return false;
  }
}

void leave_node_site() noexcept {
  std::vector<NodeSite>& sites = lg::detail::thread_local_ref(t_node_sites);
  if (sites.empty()) return;
  sites.pop_back();
  if (!sites.empty())
    note_site(sites.back().path);
  else  // back to the module stack's path, or none on a thread that went off meanwhile
    note_stack_path(c10::impl::tls_is_dispatch_key_included(kKey));
}

namespace {

// The log of the thread that made nodes numbered `forward_thread_id`, or null.
std::shared_ptr<ThreadLog> log_of(uint64_t forward_thread_id) {
  Logs& l = logs();
  std::lock_guard lock(l.mutex);
  auto it = l.by_thread.find(forward_thread_id);
  return it == l.by_thread.end() ? nullptr : it->second;
}

}  // namespace

std::string forward_site(uint64_t forward_thread_id, int64_t sequence_nr) {
  const std::shared_ptr<ThreadLog> log = log_of(forward_thread_id);
  return log ? log->path_of(static_cast<uint64_t>(sequence_nr)) : std::string();
}

void note_forward_call(int64_t first_node, int64_t end_node, std::string_view call_site) noexcept {
  if (end_node <= first_node || call_site.empty()) return;
  try {
    if (ThreadLog* log = this_thread_log())
      log->note_call(static_cast<uint64_t>(first_node), static_cast<uint64_t>(end_node), call_site);
  } catch (...) {
    // Out of memory: these nodes have no call site.
  }
}

void note_nodes_of_this_call(int64_t first_node, int64_t end_node) noexcept {
  if (end_node <= first_node) return;
  const torch::CallSiteFinder find = current_call_site_finder();
  if (find == nullptr) return;
  try {
    std::string site;
    find(site);
    note_forward_call(first_node, end_node, site);
  } catch (...) {
    // Out of memory (or a finder that raised): these nodes have no call site.
  }
}

std::string forward_call(uint64_t forward_thread_id, int64_t sequence_nr) {
  const std::shared_ptr<ThreadLog> log = log_of(forward_thread_id);
  std::string site = log ? log->site_of(static_cast<uint64_t>(sequence_nr)) : std::string();
  return is_native_call_site(site) ? describe_native_call_site(site) : site;
}

}  // namespace lg::torch_bridge
