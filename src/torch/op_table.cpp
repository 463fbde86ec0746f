// The ATen ops' policies and call counts (see op_table.h).
#include "torch/op_table.h"

#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include <ATen/core/dispatch/Dispatcher.h>

#include "guard/records.h"
#include "guard/runtime.h"

namespace lg::torch_bridge {
namespace {

struct OpTable {
  std::shared_mutex mutex;
  std::unordered_map<const c10::FunctionSchema*, std::unique_ptr<OpEntry>> entries;
};

OpTable& op_table() {
  static auto* table = new OpTable();  // never destroyed: the exit report flushes it
  return *table;
}

const OpEntry& lookup(const c10::FunctionSchema* key) {
  OpTable& t = op_table();
  {
    std::shared_lock lock(t.mutex);
    if (auto it = t.entries.find(key); it != t.entries.end()) return *it->second;
  }
  auto made = std::make_unique<OpEntry>(derive_policy(*key));
  made->op_index = guard::detail::foreign_op_index(made->name);
  std::unique_lock lock(t.mutex);
  return *t.entries.emplace(key, std::move(made)).first->second;
}

// Direct-mapped by the schema's address: an op's schema lives as long as its registration.
struct Cache {
  static constexpr size_t kSlots = 512;
  const c10::FunctionSchema* keys[kSlots] = {};
  const OpEntry* values[kSlots] = {};
};
thread_local Cache t_cache;

}  // namespace

const OpEntry& op_entry(const c10::OperatorHandle& op) {
  const c10::FunctionSchema* key = &op.schema();
  const size_t slot = (reinterpret_cast<uintptr_t>(key) >> 4) % Cache::kSlots;
  Cache& cache = t_cache;
  if (cache.keys[slot] != key) {
    cache.values[slot] = &lookup(key);
    cache.keys[slot] = key;
  }
  return *cache.values[slot];
}

void after_first_pending_call() { guard::detail::ensure_exit_handler(); }

void flush_calls() {
  OpTable& t = op_table();
  std::shared_lock lock(t.mutex);
  for (const auto& [key, entry] : t.entries)
    if (const int64_t n = entry->pending_calls.exchange(0, std::memory_order_relaxed); n > 0)
      guard::detail::record_calls(entry->op_index, entry->name, n);
}

}  // namespace lg::torch_bridge
