// events=FILE: one JSON line per checked op call (JSON Lines), for dashboards and for diffing
// the layouts of two runs op by op. Internal to src/guard.
#pragma once

#include <cstdint>
#include <string>

#include <layoutguard/guard.h>
#include <layoutguard/hooks.h>

namespace lg::guard::detail {

// Appends the call's line to `path` (a new file that replaces the old one once its first line is
// written, at its first use in this process):
// a sequence number, the thread, op, policy, module, depth, root op, device, kernel, every
// operand's dtype, sizes, strides and format, the bytes of the layout conversion the call
// made (copy_ only, else 0) and the finding's rule when it broke the contract; a finding that
// an ExpectedLoss took is no violation and carries its reason (`expected_loss`). Lines from
// several threads never interleave. lg::ValueError naming the path if it cannot be written; a
// failed write leaves the file ending with the last whole line.
void write_event(const std::string& path, const hooks::OpCall& call, const Finding* finding, int64_t conversion_bytes,
                 const ExpectedLoss* expected);

}  // namespace lg::guard::detail
