// Every ATen op's policy, derived once, and its calls counted for the report without a lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "torch/aten_policy.h"

namespace c10 {
class OperatorHandle;
}

namespace lg::torch_bridge {

// An op's policy and its calls not yet handed to the guard's report: a relaxed atomic per
// call instead of the report's mutex.
struct OpEntry : AtenPolicy {
  explicit OpEntry(AtenPolicy p) : AtenPolicy(std::move(p)) {}
  mutable std::atomic<int64_t> pending_calls{0};
  // The op's definition went away: a later op at its schema's address has an entry of its own.
  std::atomic<bool> retired{false};
};

// The op's entry: a load and a compare in a per-thread cache for a hot op; the first call of
// an op derives its policy under the table's lock.
const OpEntry& op_entry(const c10::OperatorHandle& op);

// From now on, the entry of an op whose definition goes away (a torch.library.Library freed)
// is retired with it, and a later op at its schema's address gets an entry of its own. Once,
// when the bridge switches on.
void retire_entries_of_deregistered_ops();

// Makes sure that the report at exit takes the calls counted since the last flush: the first
// count of an op after a flush calls it.
[[gnu::cold]] void after_first_pending_call();

// Counts a checked call for the report (warn and record mode). Inline: one relaxed increment.
inline void count_call(const OpEntry& entry) {
  if (entry.pending_calls.fetch_add(1, std::memory_order_relaxed) == 0) [[unlikely]]
    after_first_pending_call();
}

// Hands every op's pending calls to the guard's report (registered with the guard as its
// call-count flush, so that report() and clear_report() see them).
void flush_calls();

}  // namespace lg::torch_bridge
