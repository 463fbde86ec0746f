// The ATen ops' policies and call counts (see op_table.h).
#include "torch/op_table.h"

#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

#include "guard/records.h"
#include "guard/runtime.h"

namespace lg::torch_bridge {
namespace {

struct OpTable {
  std::shared_mutex mutex;
  std::unordered_map<const c10::FunctionSchema*, std::unique_ptr<OpEntry>> entries;
  // The entries of ops whose schema went away: kept, as the threads' caches may still point to
  // them and their calls are still to be reported.
  std::vector<std::unique_ptr<OpEntry>> retired;
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

// Direct-mapped by the schema's address: an op's schema lives as long as its definition; an
// entry retired with it (a torch.library.Library freed) is looked up again.
struct Cache {
  static constexpr size_t kSlots = 512;
  const c10::FunctionSchema* keys[kSlots] = {};
  const OpEntry* values[kSlots] = {};
};
thread_local Cache t_cache;

// An op defined later may get the schema address of one whose definition went, and with it
// that op's name and policy (a view's, or a memory_format argument's index beyond the new
// op's arguments): the entry goes with the definition.
class RetireDeregisteredOps final : public c10::OpRegistrationListener {
 public:
  void onOperatorRegistered(const c10::OperatorHandle&) override {}
  void onOperatorDeregistered(const c10::OperatorHandle& op) override {
    OpTable& t = op_table();
    std::unique_lock lock(t.mutex);
    const auto it = t.entries.find(&op.schema());
    if (it == t.entries.end()) return;
    it->second->retired.store(true, std::memory_order_relaxed);  // ordered by the dispatcher's lock
    t.retired.push_back(std::move(it->second));
    t.entries.erase(it);
  }
};

}  // namespace

void retire_entries_of_deregistered_ops() {
  // Never removed: the op table outlives every op of the process.
  static auto* handle = new c10::RegistrationHandleRAII(
      c10::Dispatcher::singleton().addRegistrationListener(std::make_unique<RetireDeregisteredOps>()));
  (void)handle;
}

const OpEntry& op_entry(const c10::OperatorHandle& op) {
  const c10::FunctionSchema* key = &op.schema();
  const size_t slot = (reinterpret_cast<uintptr_t>(key) >> 4) % Cache::kSlots;
  Cache& cache = t_cache;
  if (cache.keys[slot] != key || cache.values[slot]->retired.load(std::memory_order_relaxed)) [[unlikely]] {
    cache.values[slot] = &lookup(key);
    cache.keys[slot] = key;
  }
  return *cache.values[slot];
}

void after_first_pending_call() { guard::detail::ensure_exit_handler(); }

void flush_calls() {
  OpTable& t = op_table();
  std::shared_lock lock(t.mutex);
  const auto flush = [](const OpEntry& entry) {
    if (const int64_t n = entry.pending_calls.exchange(0, std::memory_order_relaxed); n > 0)
      guard::detail::record_calls(entry.op_index, entry.name, n);
  };
  for (const auto& [key, entry] : t.entries) flush(*entry);
  for (const auto& entry : t.retired) flush(*entry);
}

}  // namespace lg::torch_bridge
