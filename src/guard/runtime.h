// The guard as the dispatcher sees it: settings snapshot, the per-call check, the records.
// Internal: only src/dispatch and src/guard include this.
#pragma once

#include <cstdint>
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

// Whether a rerunnable call of an op with `policy` at nesting `depth` is shadow-compared
// (shadow=1, top-level, Preserve or ConvLike). The dispatcher asks before the op runs, so that
// it can copy the inputs while they still hold what the op read (an in-place op changes them).
bool shadow_wanted(LayoutPolicy policy, int depth);

// Checks one finished call under `mode` (not Off): throws LayoutViolation (throw mode), logs
// once per distinct violation (warn) or records it (record); records layout conversions;
// shadow-compares when `rerun` and `shadow_inputs` are given (the dispatcher passes them when
// shadow_wanted()): rerun(*shadow_inputs), the contiguous copies it took before the call,
// against the call's outputs. Runs with the re-entrancy
// guard set.
void after_op(const hooks::OpCall& call, Mode mode, uint32_t op_index, const dispatch::detail::BodyRef* rerun,
              const std::vector<Tensor>* shadow_inputs);

}  // namespace lg::guard::detail
