// `layoutguard diff`: two event streams (LAYOUTGUARD_OPTIONS=events=FILE) compared op by op.
#pragma once

#include <span>
#include <string_view>

namespace lg::tools {

// diff A.jsonl B.jsonl [--depth all|0]: aligns the user-level (depth-0) calls of each thread
// of the two runs by (op, module) and prints every call whose outputs differ in layout (format
// or strides) or in sizes, and the calls only one run made. Returns 0 when the layouts agree,
// 1 when they differ; UsageError / ValueError (exit 2) for bad flags, unreadable files and
// lines that are not events.
int diff_command(std::span<const std::string_view> args);

}  // namespace lg::tools
