// The guard's internal interface to the layers above it: settings snapshot, the per-call check
// (after_op, which the dispatcher reaches through call_checker.cpp), foreign calls, the records.
// Internal to src/guard and the layers above it (src/audit, src/torch).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <layoutguard/guard.h>
#include <layoutguard/hooks.h>

#include "dispatch/dispatcher.h"

namespace lg::guard::detail {

// Reads the environment if it has not been read (ConfigError if invalid; the dispatcher then
// stays on the slow path so that every op raises it again). Prints help=1 once.
void initialise();

// The calling thread's view of the settings, cached per thread and refreshed when any setting
// changes (a version counter): no lock and no copy per op.
const Options& current_options();
// The calling thread's effective mode: its innermost Scope, else current_options().mode.
Mode current_mode();
// Both at once, for a caller that needs both per call (the bridge): one thread-local lookup
// instead of three. Under a Scope that is off, `options` is null: the settings are not read
// (nor the environment parsed), as current_mode() does not read them there.
struct CallSettings {  // 16 bytes: returned in registers
  Mode mode;
  bool scoped;  // the mode is the calling thread's innermost Scope's
  const Options* options;
};
CallSettings current_call_settings();
// The calling thread's innermost Scope's mode, if it has one.
std::optional<Mode> scope_mode();

// `mode`, or lg::ValueError "[where] mode N is not a guard::Mode; ..." for a value cast from an
// integer that no enumerator has. Every entry point that takes a Mode checks it first.
Mode checked_mode(Mode mode, std::string_view where);

// Whether a rerunnable call of `op` with `policy` at nesting `depth` is shadow-compared
// (shadow=1, top-level, Preserve or ConvLike, not named by allow=). The dispatcher asks before the op runs, so that
// it can copy the inputs while they still hold what the op read (an in-place op changes them).
bool shadow_wanted(std::string_view op, LayoutPolicy policy, int depth);

// What a call from outside the dispatcher (the PyTorch bridge) adds to the check. The bridge's
// tensors are stand-ins that describe a torch tensor's layout and hold no data.
struct ForeignCall {
  bool is_copy = false;              // copy_(dst, src): a layout conversion when the orders differ
  std::string_view root_cause;       // ViolationInfo::root_cause
  std::string_view autograd_node;    // ViolationInfo::autograd_node
  std::string_view forward_call;     // ViolationInfo::forward_call
  std::optional<size_t> element;     // ViolationInfo::element
  // The user's source line and stack, asked only for a violation (a Python traceback); an
  // empty stack leaves the C++ stack trace in place.
  void (*locate)(std::string& source_location, std::string& stack) = nullptr;
  // A contract of the caller's own that the call broke (the bridge's gradient strides):
  // reported as is, allow= and suppressions= applying; check_layout is not asked.
  const Finding* finding = nullptr;
  // Throw mode raises through this when set (a Python exception type), else LayoutViolation.
  void (*raise)(const LayoutViolation& v) = nullptr;  // must throw
  // False for the second and later parts of one call checked in parts (a multi-tensor op's
  // elements): the report counts the call once.
  bool counts_call = true;
};

// after_op for a foreign call: the same settings, records, events, suppressions and report;
// no loss spans (the stand-ins carry no data identity) and no shadow comparison. Returns
// whether the call was reported (a violation, neither exempt nor an expected loss).
bool after_foreign_op(const hooks::OpCall& call, Mode mode, uint32_t op_index, const ForeignCall& foreign);

// A dense op index for a foreign op's name (the report's per-op table), stable for the
// process; distinct from every built-in and custom op's index.
uint32_t foreign_op_index(std::string_view name);

// Checks one finished call under `mode` (not Off): throws LayoutViolation (throw mode), logs
// once per distinct violation (warn) or records it (record); records layout conversions;
// shadow-compares when `rerun` and `shadow_inputs` are given (the dispatcher passes them when
// shadow_wanted()): rerun(*shadow_inputs), the contiguous copies it took before the call,
// against the call's outputs. Runs with the re-entrancy
// guard set.
void after_op(const hooks::OpCall& call, Mode mode, uint32_t op_index, const dispatch::detail::BodyRef* rerun,
              const std::vector<Tensor>* shadow_inputs);

}  // namespace lg::guard::detail
