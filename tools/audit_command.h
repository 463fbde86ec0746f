// `layoutguard audit` and `layoutguard run`: the model commands.
#pragma once

#include <span>
#include <string_view>

namespace lg::tools {

// Runs a model once under the guard in record mode; prints the per-op table, the violations
// with their dumps, and totals. Returns 0 without violations, 1 with. UsageError on bad flags.
int audit_command(std::span<const std::string_view> args);

// Runs a model on the single tensor of an input safetensors file and saves the float32 output.
int run_command(std::span<const std::string_view> args);

}  // namespace lg::tools
